"""The pruned neighbour search of large releases gives the dense pass's answers exactly.

``MixedTable.candidates`` (issue #28) keeps, per record, the release rows whose partial
distance does not already exceed an upper bound on the k-th nearest one; the exact distances
of those rows then decide. Every neighbour, tie and tie-break must be the dense pass's: the
tests run both paths on the same tables (the dense one by raising the size threshold) on
tables made to tie: duplicated rows, copies of the records, categorical-only views, values
the release lacks, a constant column, records far outside the release.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.disclosure import AttributeInferenceRisk, LinkabilityRisk, _mixed
from sklearn_mace.disclosure._mixed import MixedTable


def _table(n, rng, *, copies_of=None):
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),  # few values: ties
            "colour": rng.choice(["red", "green", "blue"], n, p=[0.6, 0.3, 0.1]),
            "income": rng.lognormal(10, 1, n).round(-2),
            "city": rng.choice([f"c{i}" for i in range(12)], n),
            "flag": rng.random(n) < 0.2,
            "constant": np.full(n, 3.0),
            "score": rng.normal(0, 1, n),
            "grade": rng.choice(list("ABCD"), n),
        }
    )
    if copies_of is not None:  # a share of the release copies the records, some twice
        k = len(copies_of) // 3
        frame.iloc[:k] = copies_of.iloc[:k].to_numpy()
        frame.iloc[k : 2 * k] = copies_of.iloc[:k].to_numpy()
    return frame


@pytest.fixture(params=[1 << 16, 700], ids=["one-block", "blocks-of-700"])
def small_sample(monkeypatch, request):
    """Prune from 500 rows on, with a 64-row sample: the pruning does real work. The
    numeric terms of a search that cannot start from the categorical pruning are summed
    over the whole release at once, or block by block (700 rows: five blocks, the last
    shorter; issue #28)."""
    monkeypatch.setattr(_mixed, "_SAMPLE_ROWS", 64)
    monkeypatch.setattr(_mixed, "_BEST_ROWS", 16)
    monkeypatch.setattr(_mixed, "_DENSE_BLOCK_ROWS", request.param)
    return monkeypatch


def _both(monkeypatch, compute):
    monkeypatch.setattr(_mixed, "_PRUNE_MIN_ROWS", 10**12)
    dense = compute()
    monkeypatch.setattr(_mixed, "_PRUNE_MIN_ROWS", 500)
    return dense, compute()


def _setup(seed):
    rng = np.random.default_rng(seed)
    records = _table(150, rng)
    release = _table(3000, rng, copies_of=records)
    release.iloc[-40:] = release.iloc[100:140].to_numpy()  # duplicated release rows
    records.loc[5, "city"] = "nowhere"  # a value the release lacks
    records.loc[7, "income"] = 1e9  # far outside the release
    table = MixedTable(_positional(release), list(release.columns))
    return table, table.encode(_positional(records)), records, release


def _positional(frame):
    frame = frame.reset_index(drop=True)
    return frame.set_axis(range(frame.shape[1]), axis=1)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("columns", [[0, 1, 2, 3, 4, 5, 6, 7], [1, 3, 4, 7], [0, 2, 6], [6]])
def test_kneighbors_equal_the_dense_pass(small_sample, seed, k, columns):
    table, encoded, _, _ = _setup(seed)
    dense, pruned = _both(small_sample, lambda: table.kneighbors(encoded, columns, k))
    np.testing.assert_array_equal(pruned, dense)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [1, 2])
def test_leave_one_out_equals_the_dense_pass(small_sample, seed, k):
    table, encoded, _, _ = _setup(seed)
    secrets = [0, 1, 2, 3, 5, 7]

    def compute():
        return table.kneighbors_leave_one_out(encoded, secrets, k)

    dense, pruned = _both(small_sample, compute)
    for s in secrets:
        np.testing.assert_array_equal(pruned[s], dense[s])


@pytest.mark.parametrize("seed", [0, 1])
def test_candidates_hold_every_tied_row(small_sample, seed):
    table, encoded, _, _ = _setup(seed)
    small_sample.setattr(_mixed, "_PRUNE_MIN_ROWS", 500)
    n = table.n_rows
    for columns, loo in (([1, 3, 4, 7], False), ([0, 2, 6], False), (list(range(8)), True)):
        sizes = []
        for i in range(len(encoded[0])):
            query = [c[i] for c in encoded]
            rows = table.candidates(query, columns, 2, leave_one_out=loo)
            assert (np.diff(rows) > 0).all()
            full = table.distances(query, columns, np.arange(n))
            drop = [None] if not loo else columns
            for s in drop:  # every row within the 2nd smallest distance (without s) is kept
                d = full if s is None else full - table._term(query, s)
                kth = np.partition(d, 1)[1] + 1e-9
                assert set(np.flatnonzero(d <= kth)) <= set(rows)
            sizes.append(len(rows))
        if columns == [0, 2, 6]:  # numeric view: the pruning leaves a small share
            assert np.median(sizes) < n / 10


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("ties", ["keep", "random"])
@pytest.mark.parametrize("k", [1, 2])
def test_the_risks_equal_the_dense_pass(small_sample, seed, ties, k):
    _, _, records, release = _setup(seed)
    control = _table(150, np.random.default_rng(seed + 10))

    def compute():
        inference = AttributeInferenceRisk(n_neighbors=k, random_state=seed).fit(release)
        linking = LinkabilityRisk(n_neighbors=k, ties=ties, random_state=seed).fit(release)
        known = AttributeInferenceRisk(
            secrets=["city"], known=["age", "colour"], n_neighbors=k, random_state=seed
        ).fit(release)
        return (
            inference.evaluate(records, control),
            inference.evaluate_pooled(records, control),
            linking.evaluate(records, control),
            known.evaluate(records, control),
        )

    dense, pruned = _both(small_sample, compute)
    for a, b in zip(pruned, dense, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("shuffled", [False, True])
def test_the_release_encoding_equals_encoding_it_again(shuffled):
    # MixedTable reads each release column once for its range or categories and its codes;
    # its encoding, taken block by block, is encode() on the same rows, and in the shuffle's
    # order it is the table the attacks held before issue #28: the numeric columns x[order]/r
    # and the categories numbered as they first occur in the shuffle
    rng = np.random.default_rng(4)
    release = _table(500, rng)
    release.loc[3, "city"] = None  # missing: its own category
    frame = _positional(release)
    order = rng.permutation(len(frame)).astype(np.int32) if shuffled else None
    table = MixedTable(frame, list(release.columns), order=order)
    again = table.encode(frame)
    blocks = [table.encoded_block(a, a + 64) for a in range(0, 500, 64)]
    for j, theirs in enumerate(again):
        ours = np.concatenate([block[j] for block in blocks])
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
    order = np.arange(500) if order is None else order
    for j, column in enumerate(table.shuffled()):
        if table.kinds[j] == "numeric":
            x = pd.to_numeric(frame[j]).to_numpy(dtype=float)
            np.testing.assert_array_equal(column, x[order] / table.scales[j])
        else:
            text = MixedTable._text(frame[j])[order]
            np.testing.assert_array_equal(table.categories[j], pd.unique(text))
            np.testing.assert_array_equal(column, pd.Index(pd.unique(text)).get_indexer(text))


def _old_neighbours(table, encoded, columns, k):
    """The code before issue #28's release views: the dense distances to the release
    encoded in the shuffle's order (a copy), the k smallest with ties to the first in it."""
    release = table.shuffled()
    distance = np.zeros((len(encoded[0]), table.n_rows))
    for j in columns:
        if table.kinds[j] == "numeric":
            distance += np.abs(encoded[j][:, None] - release[j][None, :])
        else:
            distance += encoded[j][:, None] != release[j][None, :]
    return table.order[np.argsort(distance, axis=1, kind="stable")[:, :k]]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [1, 3])
def test_neighbours_break_ties_by_the_shuffle_as_before(small_sample, seed, k):
    """The table holds the release in its own order; the neighbours (release rows) are
    those of the shuffled encoding the attacks held before, ties to the first in the
    shuffle: the dense and the pruned path, on a release with many exact ties."""
    _, encoded, _, release = _setup(seed)
    order = np.random.default_rng(seed).permutation(len(release)).astype(np.int32)
    table = MixedTable(_positional(release), list(release.columns), order=order)
    for columns in ([0, 1, 2, 3, 4, 5, 6, 7], [1, 3, 4, 7], [0, 2, 6]):
        old = _old_neighbours(table, encoded, columns, k)
        dense, pruned = _both(
            small_sample, lambda columns=columns: table.kneighbors(encoded, columns, k)
        )
        np.testing.assert_array_equal(dense, old)
        np.testing.assert_array_equal(pruned, old)
    secrets = [0, 1, 3, 6]
    dense, pruned = _both(small_sample, lambda: table.kneighbors_leave_one_out(encoded, secrets, k))
    for s in secrets:
        old = _old_neighbours(table, encoded, [j for j in range(8) if j != s], k)
        np.testing.assert_array_equal(dense[s], old)
        np.testing.assert_array_equal(pruned[s], old)
