"""A large release read, keyed and encoded in blocks: the same tables, keys and audits as a
whole read, within the stated memory bound (issue #28)."""

import gzip
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.report import _io, encode_tables, read_table
from sklearn_mace.report._quality import in_sorted, repeated_rows, row_keys


def _whole_and_blocks(path, monkeypatch, rows=7, **kwargs):
    """The table read whole and in blocks of ``rows`` rows."""
    with monkeypatch.context() as patch:
        patch.setattr(_io, "READ_ROWS", None)
        whole = read_table(path, **kwargs)
    with monkeypatch.context() as patch:
        patch.setattr(_io, "READ_ROWS", rows)
        blocks = read_table(path, **kwargs)
    return whole, blocks


def _numeric_table(n, rng):
    """Floats, integers, booleans, a column integer in its first rows and with missing
    values later (integers in some blocks, floats in others), large integers."""
    late_gaps = rng.integers(0, 100, n).astype(float)
    late_gaps[n - 5 :: 2] = np.nan
    return pd.DataFrame(
        {
            "x": rng.normal(size=n) * 10.0 ** rng.integers(-5, 6, n),
            "count": rng.integers(-3, 40, n),
            "flag": rng.random(n) < 0.3,
            "late_gaps": late_gaps,
            "big": rng.integers(2**52, 2**62, n),
            "tiny": rng.random(n) * 1e-300,
        }
    )


@pytest.mark.parametrize("rows", [1, 7, 64])
def test_numeric_csv_in_blocks_is_the_whole_read(tmp_path, monkeypatch, rows):
    path = tmp_path / "release.csv"
    _numeric_table(203, np.random.default_rng(rows)).to_csv(path, index=False)
    whole, blocks = _whole_and_blocks(path, monkeypatch, rows)
    assert whole["late_gaps"].dtype == np.float64 and whole["count"].dtype == np.int64
    pd.testing.assert_frame_equal(blocks, whole, check_exact=True)
    assert blocks.attrs["notes"] == whole.attrs["notes"]


def test_compressed_semicolon_decimal_comma_csv_in_blocks(tmp_path, monkeypatch):
    table = _numeric_table(150, np.random.default_rng(3)).drop(columns=["flag"])
    path = tmp_path / "release.csv.gz"
    with gzip.open(path, "wt") as handle:
        table.to_csv(handle, sep=";", decimal=",")  # and a saved index
    whole, blocks = _whole_and_blocks(path, monkeypatch, 16)
    pd.testing.assert_frame_equal(blocks, whole, check_exact=True)
    assert blocks.attrs["notes"] == whole.attrs["notes"] and len(whole.attrs["notes"]) == 2
    assert whole.shape == table.shape and list(whole.columns) == list(table.columns)


@pytest.mark.parametrize(
    "late",
    ["abc", "True", "2020-01-01", ""],
    ids=["stray-text", "boolean-word", "date", "blank"],
)
def test_text_or_mixed_columns_fall_back_to_the_whole_read(tmp_path, monkeypatch, late):
    """A column whose type pandas infers per block of its own is read whole: the same frame
    as before, whatever the block size."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 9, 120).astype(str).astype(object)
    values[100] = late
    table = pd.DataFrame({"a": rng.normal(size=120), "b": values, "c": rng.choice(["u", "v"], 120)})
    path = tmp_path / "mixed.csv"
    table.to_csv(path, index=False)
    whole, blocks = _whole_and_blocks(path, monkeypatch, 8)
    pd.testing.assert_frame_equal(blocks, whole, check_exact=True)


@pytest.mark.parametrize("late", ["5 kg", "1,5", "-"], ids=["unit", "decimal-comma", "dash"])
def test_a_late_unit_string_in_an_all_numeric_table_reads_as_a_whole_read(
    tmp_path, monkeypatch, late
):
    """No text column anywhere but one stray unit string deep in a numeric column: the
    block read must not turn it into a number or a missing value (a silent green card);
    it gives the whole read's text column, which the encoding then refuses or reports."""
    rng = np.random.default_rng(1)
    values = rng.integers(0, 9, 120).astype(str).astype(object)
    values[100] = late
    path = tmp_path / "numeric.csv"
    pd.DataFrame({"a": rng.normal(size=120), "b": values}).to_csv(path, index=False)
    whole, blocks = _whole_and_blocks(path, monkeypatch, 8)
    pd.testing.assert_frame_equal(blocks, whole, check_exact=True)
    assert not pd.api.types.is_numeric_dtype(blocks["b"]) and blocks["b"].iloc[100] == late


def test_header_only_and_empty_files_are_refused_in_blocks_too(tmp_path, monkeypatch):
    monkeypatch.setattr(_io, "READ_ROWS", 4)
    (tmp_path / "header.csv").write_text("a,b\n")
    with pytest.raises(_io.AuditInputError, match="a header but no rows"):
        read_table(tmp_path / "header.csv")


def test_the_audit_of_block_reads_is_the_audit_of_whole_reads(tmp_path, monkeypatch):
    """The same summary, cell for cell, from the CLI reading the files whole and in blocks
    of 16 rows (a release of 600 rows, members and non-members of 120)."""
    from sklearn_mace.cli import main

    rng = np.random.default_rng(1)
    mixing = rng.normal(size=(4, 4))

    def table(n):
        frame = pd.DataFrame(rng.normal(size=(n, 4)) @ mixing, columns=list("abcd")).round(4)
        frame["group"] = rng.integers(0, 3, n)
        return frame

    members = table(120)
    files = {"members": members, "non-members": table(120)}
    files["synthetic"] = pd.concat([table(580), members.iloc[:20]], ignore_index=True)
    for name, frame in files.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    summaries = []
    for rows in (None, 16):
        monkeypatch.setattr(_io, "READ_ROWS", rows)
        out = tmp_path / f"out{rows}"
        argv = ["audit", "--members", str(tmp_path / "members.csv")]
        argv += ["--non-members", str(tmp_path / "non-members.csv")]
        argv += ["--synthetic", f"release={tmp_path / 'synthetic.csv'}", "--out", str(out)]
        assert main([*argv, "--quiet", "--no-disclosure"]) == 0
        summaries.append(pd.read_csv(out / "summary.csv"))
    pd.testing.assert_frame_equal(summaries[0], summaries[1], check_exact=True)
    assert (summaries[0]["status"] == "ok").all()


# ---------------------------------------------------------------- row keys
def _pooled_keys(tables, columns):
    """The documented comparison done on the pooled tables at once (the former code)."""
    sizes = [len(frame) for frame in tables.values()]
    pooled = pd.concat([f[columns].reset_index(drop=True) for f in tables.values()])
    comparable = {}
    for position in range(len(columns)):
        series = pooled.iloc[:, position].reset_index(drop=True)
        if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
            comparable[position] = series.astype(float) + 0.0
            continue
        parsed = pd.to_numeric(series, errors="coerce")
        if parsed.notna().sum() == series.notna().sum() and series.notna().any():
            comparable[position] = parsed.astype(float) + 0.0
        else:
            comparable[position] = series.astype("string").fillna("\x00<missing>")
    keys = pd.util.hash_pandas_object(pd.DataFrame(comparable), index=False).to_numpy()
    return dict(zip(tables, np.split(keys, np.cumsum(sizes)[:-1]), strict=True))


def _mixed_tables(rng):
    n1, n2 = 37, 50
    a = pd.DataFrame(
        {
            "int": rng.integers(0, 5, n1),
            "float": rng.integers(0, 3, n1).astype(float),
            "bool": rng.random(n1) < 0.5,
            "text": rng.choice(["x", "y", None], n1),
            "numbers_as_text": rng.choice(["1", "2.0", " 3"], n1),
            "gaps": rng.choice([1.0, np.nan], n1),
            "category": pd.Categorical(rng.choice(["u", "v"], n1)),
            "empty_here": np.full(n1, np.nan),
            "mixed": rng.choice(["1", "x"], n1),
            "signed_zero": rng.choice([0.0, -0.0], n1),
        }
    )
    b = pd.DataFrame(
        {
            "int": rng.integers(0, 5, n2).astype(float),
            "float": rng.integers(0, 3, n2),
            "bool": rng.choice(np.array([True, False, None], dtype=object), n2),
            "text": rng.integers(0, 3, n2),
            "numbers_as_text": rng.integers(0, 4, n2),
            "gaps": np.full(n2, np.nan),
            "category": pd.Categorical(rng.choice(["u", "w"], n2)),
            "empty_here": rng.choice(np.array(["1", None], dtype=object), n2),
            "mixed": rng.integers(0, 2, n2),
            "signed_zero": rng.choice([0, 1], n2),
        }
    )
    c = b.iloc[:41].copy()
    c["bool"] = rng.random(41) < 0.5
    c["text"] = pd.array(rng.choice(np.array(["x", None], dtype=object), 41), dtype="string")
    return {"a": a, "b": b, "c": c}


@pytest.mark.parametrize("seed", range(5))
def test_row_keys_in_blocks_are_the_pooled_keys(seed):
    tables = _mixed_tables(np.random.default_rng(seed))
    columns = list(tables["a"].columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # concatenating all-missing columns
        for subset in [[c] for c in columns] + [columns]:
            expected = _pooled_keys(tables, subset)
            for block in (1, 3, 1 << 18):
                found = row_keys(tables, subset, block=block)
                for name in tables:
                    np.testing.assert_array_equal(found[name], expected[name], err_msg=str(subset))


def test_repeated_rows_and_sorted_lookup_agree_with_pandas_and_isin():
    rng = np.random.default_rng(0)
    for high in (3, 50, 10**6, 2**62):  # mostly repeats, some, none
        drawn = rng.integers(0, high, 2_000).astype(np.uint64)
        expected = pd.Series(drawn).duplicated().to_numpy()
        np.testing.assert_array_equal(repeated_rows(drawn), expected)
    keys = rng.integers(0, 50, 2_000).astype(np.uint64)
    targets = rng.integers(0, 80, 300).astype(np.uint64)
    np.testing.assert_array_equal(in_sorted(targets, np.sort(keys)), np.isin(targets, keys))
    assert not in_sorted(targets, np.array([], dtype=np.uint64)).any()
    assert repeated_rows(np.array([], dtype=np.uint64)).shape == (0,)


# ---------------------------------------------------------------- the memory bound
def test_reading_keying_and_encoding_a_release_stays_within_the_stated_bound(tmp_path, monkeypatch):
    """docs/design.md: reading, keying and encoding a numeric release of ``n`` rows and ``p``
    columns holds the raw table (8 bytes a cell), its encoding (8 bytes a feature and row)
    and its row keys (8 bytes a row), plus two columns' temporaries (16 bytes a row) and
    blocks of rows (here 16 384: a few MiB): NumPy's traced peak over the three steps. A
    copy of the table (14 MiB here) would break it."""
    rng = np.random.default_rng(0)
    n, p, block = 300_000, 6, 1 << 14
    real = {name: pd.DataFrame(rng.normal(size=(500, p))).add_prefix("x") for name in "ab"}
    path = tmp_path / "release.csv"
    pd.DataFrame(rng.normal(size=(n, p))).add_prefix("x").round(6).to_csv(path, index=False)
    monkeypatch.setattr(_io, "READ_ROWS", block)
    tracemalloc.start()
    try:
        release = read_table(path)
        tables = {"members": real["a"], "non-members": real["b"], "synthetic 'r'": release}
        arrays, names, _ = encode_tables(tables)
        keys = row_keys(tables, list(release.columns), block=block)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert arrays["synthetic 'r'"].dtype == np.float64 and len(names) == p
    assert keys["synthetic 'r'"].dtype == np.uint64
    held = 8 * n * p + 8 * n * p + 8 * n
    assert peak <= held + 16 * n + 6 * 2**20, (peak / 2**20, held / 2**20)


def test_a_latin1_byte_past_the_sniffed_sample_is_read_as_latin1_in_blocks_too(
    tmp_path, monkeypatch
):
    """UTF-8 in the first 64 KiB, a Latin-1 byte after: the block read fails where the
    whole read fails, and the file is read again as Latin-1, with the same note."""
    rows = ["a,b"] + [f"{i},{i * 0.5}" for i in range(20_000)]
    path = tmp_path / "late.csv"
    path.write_bytes(("\n".join(rows) + "\n").encode() + "1,caf\xe9\n".encode("latin-1"))
    whole, blocks = _whole_and_blocks(path, monkeypatch, 512)
    pd.testing.assert_frame_equal(blocks, whole, check_exact=True)
    assert blocks.attrs["notes"] == whole.attrs["notes"]
    assert any("Latin-1" in note for note in whole.attrs["notes"])
    assert whole["b"].iloc[-1] == "café"
