"""Singling out's univariate search without a Python object per candidate (issue #28).

The search used to build one predicate per value held once in a column, then draw
``n_queries`` of them; it now counts the candidates and builds only the drawn ones. The
copies below are the code it replaces, kept to check that the new one writes exactly the
same predicates (values, types, order) and leaves the random stream where the old one did.
"""

import tracemalloc
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import check_random_state

from sklearn_mace.disclosure import SinglingOutRisk, singling_out_risk
from sklearn_mace.disclosure._mixed import NUMERIC

_LE, _EQ, _GE = -1, 0, 1


def _old_univariate(encoded, kinds, n_queries, rng):
    """``SinglingOutRisk._univariate`` before issue #28's memory work (verbatim logic)."""
    found = []
    for j, column in enumerate(encoded):
        values, counts = np.unique(column, return_counts=True)
        found += [[(j, _EQ, v)] for v in values[counts == 1]]
        if kinds[j] == NUMERIC:
            if counts[0] == 1:
                found.append([(j, _LE, values[0])])
            if counts[-1] == 1:
                found.append([(j, _GE, values[-1])])
    found = [p for p in found if p[0][2] == p[0][2]]
    if len(found) > n_queries:
        keep = rng.choice(len(found), n_queries, replace=False)
        found = [found[i] for i in sorted(keep)]
    return found


def _old_readable(risk, predicate):
    """``SinglingOutRisk._readable`` before issue #28's memory work (one predicate)."""
    operators = {_EQ: "==", _LE: "<=", _GE: ">="}
    terms = []
    for j, op, value in predicate:
        if risk.column_kinds_[j] == NUMERIC:
            shuffled = risk._frame.iloc[risk._order].reset_index(drop=True)  # the old copy
            raw = risk._table.numeric_values(shuffled, j)
            shown = float(raw[np.argmax(risk._table.shuffled()[j] == value)])
        else:
            shown = risk._table.categories[j][int(value)]
        terms.append((risk._names[j], operators[op], shown))
    return terms


def _typed(predicates):
    return [[tuple((type(x), x) for x in term) for term in p] for p in predicates]


def _tables():
    rng = np.random.default_rng(7)
    n = 400
    numeric = pd.DataFrame(
        {
            "x": rng.normal(size=n).round(4),  # nearly all held once
            "k": rng.integers(0, 30, n),  # ties; a few held once
            "neg": -np.abs(rng.standard_t(1.5, n)).round(1),  # heavy tail, -0.0 and 0.0
        }
    )
    categorical = pd.DataFrame(
        {
            "job": rng.choice(
                list("abcdefgh"), n, p=[0.5, 0.3, 0.1, 0.05, 0.03, 0.01, 0.005, 0.005]
            ),
            "town": rng.choice(list("xyz"), n),  # every level held many times
        }
    )
    mixed = pd.concat([numeric, categorical], axis=1)
    ties = pd.DataFrame(  # extremes held once, every other value twice
        {"a": [0.0, 1, 1, 2, 2, 3, 3, 9], "b": ["p", "q", "q", "r", "r", "s", "s", "p"]}
    )
    return {
        "numeric": numeric,
        "categorical": categorical,
        "mixed": mixed,
        "ties": ties,
        "array": rng.integers(0, 50, (300, 4)).astype(float),
        "one row": pd.DataFrame({"a": [1.5], "b": ["u"]}),
    }


@pytest.mark.parametrize("name", list(_tables()))
@pytest.mark.parametrize("n_queries", [1, 7, 50, 500])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_univariate_search_writes_the_old_predicates(name, n_queries, seed):
    release = _tables()[name]
    risk = SinglingOutRisk(mode="univariate", n_queries=n_queries, random_state=seed)
    risk.fit(release)
    encoded, kinds = risk._table.shuffled(), risk.column_kinds_  # the old code's encoding
    old = _old_univariate(encoded, kinds, n_queries, check_random_state(seed))
    assert _typed(risk._predicates) == _typed(old)
    assert 0 < len(old) <= n_queries
    assert risk.predicates_ == [_old_readable(risk, p) for p in old]
    # the same random stream after the search
    rng_new, rng_old = check_random_state(seed), check_random_state(seed)
    risk._univariate(rng_new)
    _old_univariate(encoded, kinds, n_queries, rng_old)
    assert rng_new.randint(2**31) == rng_old.randint(2**31)


def test_multivariate_readable_values_are_the_old_ones():
    release = _tables()["mixed"]
    risk = SinglingOutRisk(n_queries=60, random_state=3).fit(release)
    assert len(risk.predicates_) > 10
    assert risk.predicates_ == [_old_readable(risk, p) for p in risk._predicates]


def test_no_value_held_once_still_finds_nothing():
    release = pd.DataFrame({"a": [1.0, 1, 2, 2], "b": ["p", "p", "q", "q"]})
    with pytest.raises(ValueError, match="No univariate predicate singles out"):
        SinglingOutRisk(mode="univariate").fit(release)
    risk = SinglingOutRisk(mode="univariate", random_state=0)
    risk._fit_release(release)
    assert risk._univariate(check_random_state(0)) == []


def test_risks_unchanged_on_fixed_tables():
    """The risks of the code before issue #28's memory work (computed with it, seed 0)."""
    rng = np.random.default_rng(11)

    def table(n):
        return pd.DataFrame(
            {
                "age": rng.integers(18, 90, n),
                "income": rng.lognormal(8, 1, n).round(0),
                "job": rng.choice(list("abcdefghij"), n),
            }
        )

    members, non_members, synthetic = table(500), table(500), table(500)
    result = singling_out_risk(members, non_members, synthetic, n_queries=100, random_state=0)
    expected = {  # mode: (n_targets, attack_rate, control_rate, baseline_rate)
        "univariate": (100, 0.06, 0.1, 0.05),
        "multivariate": (100, 0.25, 0.24, 0.16),
    }
    for mode, (n, attack, control, baseline) in expected.items():
        row = result.loc[mode]
        assert row["n_targets"] == n
        assert row["attack_rate"] == attack
        assert row["control_rate"] == control
        assert row["baseline_rate"] == baseline


def _wide_release(n, seed):
    """5 continuous columns (every value held once) and a categorical one (a few held once)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"x{j}" for j in range(5)])
    frame["job"] = rng.choice([f"j{i}" for i in range(n // 4)], n)
    return frame


def test_univariate_search_memory_does_not_grow_per_candidate():
    # 200 000 rows x 6 columns, about 1 million values held once. Traced peak of the search:
    # the old code (one Python predicate per candidate, _old_univariate) 163 MiB; then
    # 6.6 MiB: one column's sorted copy, its values held once and the draw's permutation
    # of the candidates (int32); now without the copy of the values held once (issue #28:
    # all of a continuous column, 8 bytes a row): 4.6 MiB, the draw's permutation of the
    # million candidates (int32, 3.8 MiB) or a sorted copy (1.5 MiB) and two boolean rows.
    risk = SinglingOutRisk(mode="univariate", random_state=0)
    risk._fit_release(_wide_release(200_000, 0))
    tracemalloc.start()
    try:
        found = risk._univariate(check_random_state(0))
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert len(found) == 500
    assert peak < 6, f"univariate search traced {peak:.1f} MiB"


def _old_candidates(column, numeric):
    """The old search's candidates of one column (``np.unique``'s counts), NaN dropped."""
    kinds = [NUMERIC if numeric else "categorical"]
    return _old_univariate([column], kinds, len(column) + 3, None)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("numeric", [True, False])
def test_candidates_are_np_unique_values_held_once(seed, numeric):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    # a release's numeric columns are finite (MixedTable.numeric_values): no NaN or inf
    pool = np.array([-0.0, 0.0, 1.5, -2.0, 3.0, 7.25, 1e300, -3e-300])
    column = rng.choice(pool[: int(rng.integers(1, len(pool) + 1))], n)
    if seed % 2:
        column = rng.integers(-3, 4, n)  # integer codes, as a categorical column's
        column = column.astype(float) if numeric else column  # as the table holds it
    scale = 3.7 if numeric else 1  # the raw column sorted, then divided: the encoding sorted
    risk = SinglingOutRisk()
    risk.column_kinds_ = np.array([NUMERIC if numeric else "categorical"], dtype=object)
    risk._table = SimpleNamespace(columns=[column], scales={0: scale})
    ordered, single, ends = risk._candidates(0)
    new = [[(0, _EQ, v)] for v in ordered[single]] + [[(0, op, v)] for op, v in ends]
    assert _typed(new) == _typed(_old_candidates(column / scale if numeric else column, numeric))


@pytest.mark.parametrize("n", [1, 2, 5, 500, 70_001])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_choice_draws_what_random_state_choice_draws(n, seed):
    from sklearn_mace.disclosure._singling_out import _choice

    size = min(n, 3 if n < 500 else 500)
    rng_new, rng_old = np.random.RandomState(seed), np.random.RandomState(seed)
    new, old = _choice(rng_new, n, size), rng_old.choice(n, size, replace=False)
    assert new.dtype == old.dtype
    np.testing.assert_array_equal(new, old)
    assert rng_new.randint(2**31) == rng_old.randint(2**31)
