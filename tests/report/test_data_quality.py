"""The data-quality gate of issue #25 (item 2).

A release whose numbers do not parse, records among both members and non-members, the table
notes printed and listed in the report, wide tables in linear time (the dependence check
against the slow pairwise reference it replaces), headers longer than the sniffing sample,
a spreadsheet's trailing empty columns and nested columns.
"""

import time
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_mace.cli import main
from sklearn_mace.report import (
    AuditInputError,
    _encode,
    audit_model,
    audit_release,
    encode_tables,
    read_table,
)
from sklearn_mace.report._encode import _dependent_columns, _numbers, collinear_columns
from sklearn_mace.report._io import AuditInputWarning
from sklearn_mace.report._quality import (
    check_overlapping_records,
    overlap_p_value,
    row_keys,
    table_notes,
)
from tests.audit_data import audit_tables

NUMERIC = ["age", "bmi", "glucose"]


def _write(folder, tables):
    folder.mkdir(exist_ok=True)
    paths = {}
    for name, frame in tables.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def _argv(paths, out, *extra):
    return [
        "audit",
        "--members",
        str(paths["members"]),
        "--non-members",
        str(paths["non-members"]),
        "--synthetic",
        f"copy={paths['copy']}",
        "--out",
        str(out),
        "--quiet",
        "--no-disclosure",
        *extra,
    ]


def _exit2(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def _with_units(frame):
    """The issue's release: the members verbatim, every number written with a unit."""
    return frame.assign(**{c: [f"{v:.2f} cm" for v in frame[c]] for c in NUMERIC})


# ------------------------------------------------------------------ numbers that do not parse
def test_a_copy_with_units_is_an_input_error_naming_column_release_share_examples(tmp_path, capsys):
    members, non_members, _ = audit_tables()
    copy = _with_units(members)
    paths = _write(tmp_path / "in", {"members": members, "non-members": non_members, "copy": copy})
    err = _exit2(capsys, _argv(paths, tmp_path / "out"))
    examples = [f"{v:.2f} cm" for v in members["age"].iloc[:3]]
    assert "Column 'age'" in err and "synthetic 'copy' table" in err
    assert "40 of the 40 values (100.0%)" in err
    assert all(repr(e) in err for e in examples), err
    assert "--allow-unparsed age" in err
    assert not (tmp_path / "out").exists()  # nothing written
    # the library names its parameter
    with pytest.raises(AuditInputError, match=r"allow_unparsed=\['age'\]"):
        audit_release(members, non_members, {"copy": copy}, disclosure=False, verbose=False)


def test_the_same_copy_with_plain_numbers_is_red_and_allowed_units_are_noted(tmp_path, capsys):
    members, non_members, _ = audit_tables()
    result = audit_release(members, non_members, {"copy": members}, disclosure=False, verbose=False)
    assert result.verdict(result.subjects[0]) == "leak"  # the plain copy: leakage certified
    # accepted on purpose: the cells count as missing, and the notes say so with examples
    paths = _write(
        tmp_path / "in",
        {"members": members, "non-members": non_members, "copy": _with_units(members)},
    )
    argv = _argv(paths, tmp_path / "out", "--allow-unparsed", "age,bmi", "--allow-unparsed")
    argv.append("glucose")
    assert main(argv) == 0
    printed = capsys.readouterr().out
    note = "column 'bmi': 40 of the 40 values (100.0%) of the synthetic 'copy' table are not"
    assert note in printed
    assert f"{members['bmi'].iloc[0]:.2f} cm" in printed
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "column &#x27;bmi&#x27;: 40 of the 40 values" in html


def test_a_stray_cell_below_one_percent_passes_with_a_note():
    members, non_members, releases = audit_tables(n_members=40)
    release = pd.concat([releases["safe"]] * 3, ignore_index=True)  # 240 rows
    release = release.astype({"bmi": object})
    release.loc[7, "bmi"] = "n/a"  # 1 of 240: 0.4 %
    tables = {"members": members, "non-members": non_members, "synthetic 'r'": release}
    _, _, report = encode_tables(tables)
    (note,) = report.attrs["table_notes"]["synthetic 'r'"]
    assert "column 'bmi': 1 of the 240 values (0.4%)" in note and "'n/a' (row 7)" in note
    release.loc[8:9, "bmi"] = "n/a"  # 3 of 240: 1.25 % > 1 %
    with pytest.raises(AuditInputError, match=r"3 of the 240 values \(1.2%\)"):
        encode_tables(tables)
    with pytest.raises(AuditInputError, match="not audited columns"):
        encode_tables(tables, allow_unparsed=["nope"])


def test_a_binary_numeric_column_is_gated_too():
    members, non_members, releases = audit_tables()
    rng = np.random.default_rng(3)
    tables = {
        "members": members.assign(smoker=rng.integers(0, 2, len(members))),
        "non-members": non_members.assign(smoker=rng.integers(0, 2, len(non_members))),
    }
    release = releases["safe"].assign(smoker=["yes"] * len(releases["safe"]))
    tables["synthetic 'r'"] = release
    with pytest.raises(AuditInputError, match="Column 'smoker'"):
        encode_tables(tables)
    _, names, report = encode_tables(tables, allow_unparsed=["smoker"])
    assert "smoker[0]" in names
    assert any("'smoker'" in n for n in report.attrs["table_notes"]["synthetic 'r'"])


# ------------------------------------------------------------------ members among non-members
def test_overlapping_records_are_an_input_error_naming_the_rows(tmp_path, capsys):
    members, non_members, releases = audit_tables()
    shared = members.iloc[[2, 5, 11]]
    non_members = pd.concat([non_members, shared], ignore_index=True)  # rows 60, 61, 62
    paths = _write(
        tmp_path / "in",
        {"members": members, "non-members": non_members, "copy": releases["leaky"]},
    )
    err = _exit2(capsys, _argv(paths, tmp_path / "out"))
    assert "3 record(s) are among both the members and the non-members" in err
    assert "members row(s) 2, 5, 11" in err and "non-members row(s) 60, 61, 62" in err
    assert "--drop-overlapping-records" in err
    # the library names its parameter; dropping leaves them out of both, with a warning
    with pytest.raises(AuditInputError, match="drop_overlapping_records=True"):
        audit_release(members, non_members, releases["leaky"], disclosure=False, verbose=False)
    assert main(_argv(paths, tmp_path / "out", "--drop-overlapping-records")) == 0
    printed = capsys.readouterr().out
    assert "3 members and 3 non-member rows were left out of the audit" in printed, printed


def test_overlap_compares_numbers_as_numbers_and_ignores_row_ids():
    members = pd.DataFrame({"id": range(20), "x": np.arange(20.0), "c": ["a", "b"] * 10})
    non_members = pd.DataFrame(
        {"id": range(100, 120), "x": [str(v) for v in range(19, 39)], "c": ["b", "a"] * 10}
    )
    tables = {"members": members, "non-members": non_members}
    # compared on x and c: member row 19 (19.0, 'b') is non-member row 0 ('19', 'b')
    with pytest.raises(AuditInputError, match=r"members row\(s\) 19; non-members row\(s\) 0 "):
        check_overlapping_records(tables, ["x", "c"])
    assert check_overlapping_records(tables, ["id", "x", "c"]) is tables  # ids differ
    with pytest.warns(AuditInputWarning, match="1 members and 1 non-member rows were left out"):
        kept = check_overlapping_records(tables, ["x", "c"], drop=True)
    assert len(kept["members"]) == 19 and len(kept["non-members"]) == 19
    assert 19.0 not in kept["members"]["x"].tolist()


def test_discrete_records_that_meet_by_chance_are_kept_and_planted_copies_refused():
    """Few discrete columns: different people share records, across the tables as within
    them (the null release audits of the claims tests, two columns of three values, must
    run). Six columns of three values (729 records; 150 draws repeat about a dozen): 30
    members copied into the non-members are far beyond what a random split shares. With
    two columns (9 records) the same copies are within chance, and kept: the test has no
    power there, by construction."""
    rng = np.random.default_rng(0)

    def population(n, d):
        return pd.DataFrame(rng.integers(0, 3, size=(n, d)).astype(float)).add_prefix("x")

    for d in (2, 6):
        tables = {"members": population(60, d), "non-members": population(90, d)}
        columns = list(tables["members"].columns)
        with pytest.warns(AuditInputWarning, match="records repeat within the tables too"):
            assert check_overlapping_records(tables, columns) is tables
        copies = tables["members"].iloc[:30]
        planted = pd.concat([tables["non-members"], copies], ignore_index=True)
        copied = {"members": tables["members"], "non-members": planted}
        assert overlap_p_value(*row_keys(copied, columns).values()) > 0  # repeats within
        if d == 6:
            with pytest.raises(AuditInputError, match="among both the members and the non"):
                check_overlapping_records(copied, columns)


def test_the_overlap_p_value_holds_its_level_on_random_splits():
    """On records split at random, p ≤ 0.05 in at most about 5 % of 200 splits (binomial
    upper 0.999 quantile: 21); the p-value is a permutation p-value, so valid by design."""
    rng = np.random.default_rng(1)
    rejected = 0
    for _ in range(200):
        keys = rng.integers(0, 12, size=120)
        rejected += overlap_p_value(keys[:50], keys[50:], n_permutations=99) <= 0.05
    assert rejected <= 21, rejected


def test_the_model_audit_refuses_overlapping_records():
    members, non_members, _ = audit_tables()
    rng = np.random.default_rng(0)
    members, non_members = (
        f[NUMERIC].assign(y=rng.integers(0, 2, len(f))) for f in (members, non_members)
    )
    non_members = pd.concat([non_members, members.iloc[:4]], ignore_index=True)
    model = LogisticRegression().fit(members[NUMERIC], members["y"])
    with pytest.raises(AuditInputError, match="4 record\\(s\\) are among both"):
        audit_model({"m": model}, members, non_members, label="y", verbose=False)


# ------------------------------------------------------------------ notes
def test_table_notes_are_printed_and_in_the_result(tmp_path, capsys):
    members, non_members, releases = audit_tables()
    copy = pd.concat([releases["safe"], releases["safe"].iloc[:3]], ignore_index=True)
    copy.loc[10, "site"] = "west"  # a category the real tables lack
    members = members.assign(unit="cm")  # a constant column
    non_members = non_members.assign(unit="cm")
    copy = copy.assign(unit="cm")
    paths = _write(tmp_path / "in", {"members": members, "non-members": non_members, "copy": copy})
    assert main(_argv(paths, tmp_path / "out")) == 0
    printed = capsys.readouterr().out
    assert "of the synthetic 'copy' table are categories the real tables do not have" in printed
    assert "'west'" in printed
    assert "the synthetic 'copy' table has 3 duplicated row(s)" in printed
    assert "the members table has a single value in column(s) 'unit'" in printed


def test_table_notes_name_empty_and_constant_columns_per_table():
    tables = {
        "members": pd.DataFrame({"a": [1, 2, 3], "b": [np.nan] * 3, "c": [5, 5, 5]}),
        "synthetic 'r'": pd.DataFrame({"a": [1, 1, 1], "b": [1, 2, 3], "c": [5, 6, 7]}),
    }
    notes = table_notes(tables, ["a", "b", "c"])
    assert "the members table has no values in column(s) 'b'" in notes
    assert "the members table has a single value in column(s) 'c'" in notes
    assert "the synthetic 'r' table has a single value in column(s) 'a'" in notes
    assert "the synthetic 'r' table has 0 duplicated" not in " ".join(notes)


# ------------------------------------------------------------------ wide tables
def _pairwise_dependent_columns(plans, real):
    """The pairwise check this gate replaced (O(columns²)): the reference."""
    from sklearn_mace.report._encode import _as_text

    codes, numbers, n_distinct = {}, {}, {}
    for column, plan in plans.items():
        if plan["kind"] == "category":
            codes[column], uniques = pd.factorize(_as_text(real[column], plan["numeric"]))
        else:
            values = _numbers(real[column]).to_numpy()
            numbers[column] = np.where(np.isnan(values), np.nanmedian(values), values)
            codes[column], uniques = pd.factorize(numbers[column])
        n_distinct[column] = len(uniques)
    dropped = {}
    for column in reversed(list(plans)):
        for other, plan in plans.items():
            if other == column or other in dropped:
                continue
            if plan["kind"] == "category":
                if n_distinct[column] > n_distinct[other]:
                    continue
                pairs = codes[other].astype(np.int64) * (n_distinct[column] + 1) + codes[column]
                if pd.unique(pairs).size == n_distinct[other]:
                    dropped[column] = other
                    break
            elif plans[column]["kind"] == "numeric":
                x, y = numbers[column], numbers[other]
                if x.std() > 0 and y.std() > 0 and abs(np.corrcoef(x, y)[0, 1]) > 1 - 1e-12:
                    dropped[column] = other
                    break
    return dropped


def _planted_table(n_rows, seed):
    """Columns with every kind of exact dependence, and many that have none."""
    rng = np.random.default_rng(seed)
    frame = {}
    for j in range(12):
        frame[f"num{j}"] = rng.normal(size=n_rows).round(2)
        frame[f"cat{j}"] = rng.choice(list("abcdef")[: 3 + j % 4], n_rows)
        frame[f"bin{j}"] = rng.integers(0, 2, n_rows)
    frame["num_copy"] = frame["num3"] * -2.54 + 7  # a change of units
    frame["cat_renamed"] = pd.Series(frame["cat4"]).map(lambda v: v.upper() + "!").to_numpy()
    frame["cat_coarse"] = np.where(np.isin(frame["cat7"], ["a", "b"]), "ab", "rest")
    frame["num_of_cat"] = (
        pd.Series(frame["cat5"]).map(dict(zip("abcdef", range(6), strict=True))).to_numpy()
    )
    frame["bin_flipped"] = 1 - frame["bin2"]
    frame["num_copy2"] = frame["num3"] + 0.0
    return pd.DataFrame(frame)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_linear_dependence_check_finds_what_the_pairwise_one_finds(seed, monkeypatch):
    real = _planted_table(300, seed)
    tables = {"members": real.iloc[:150], "non-members": real.iloc[150:]}
    seen = []

    def recording(plans, union):  # the plans and rows the encoder checks
        seen.append((dict(plans), union))
        return _dependent_columns(plans, union)

    monkeypatch.setattr(_encode, "_dependent_columns", recording)
    _, names, report = encode_tables(tables)
    ((plans, union),) = seen
    expected = _pairwise_dependent_columns(plans, union)
    assert _dependent_columns(plans, union) == expected
    planted = {"num_copy", "cat_renamed", "cat_coarse", "num_of_cat", "bin_flipped", "num_copy2"}
    assert planted <= set(expected)
    treatment = report.set_index("column")["treatment"]
    assert treatment["num_copy"] == "dropped: linear in 'num3' on the real tables"
    assert treatment["cat_coarse"] == "dropped: an exact function of 'cat7' on the real tables"


@pytest.mark.parametrize("shape", [(40, 7), (10, 30)])
def test_null_weights_of_tall_and_wide_tables_match_a_full_svd(shape):
    """Each feature's weight in the null space of the centred table, from the smaller Gram
    matrix (XᵀX tall, XXᵀ wide), against the full SVD's null basis."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=shape)
    X[:, -1] = X[:, 0] + X[:, 1]
    centred = X - X.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=True)
    rank = int((s > 1e-6 * s.max()).sum())
    expected = np.sqrt((vt[rank:] ** 2).sum(axis=0))
    np.testing.assert_allclose(_encode._null_weight(X, 1e-6), expected, atol=1e-6)
    names = [f"x{j}" for j in range(shape[1])]
    if shape[0] > shape[1]:
        assert sorted(collinear_columns(X, names)) == ["x0", "x1", "x6"]
    else:  # more features than rows: every one lies in a null direction
        assert sorted(collinear_columns(X, names)) == sorted(names)


def test_more_columns_than_max_columns_are_refused_before_any_work(tmp_path, capsys):
    frame = pd.DataFrame(np.zeros((3, 50)), columns=[f"c{j}" for j in range(50)])
    with pytest.raises(AuditInputError, match="50 columns; at most 40 are audited"):
        encode_tables({"members": frame, "non-members": frame}, max_columns=40)
    members, non_members, releases = audit_tables()
    paths = _write(
        tmp_path / "in",
        {"members": members, "non-members": non_members, "copy": releases["safe"]},
    )
    err = _exit2(capsys, _argv(paths, tmp_path / "out", "--max-columns", "4"))
    assert "The tables have 5 columns; at most 4 are audited" in err and "--max-columns" in err


def _wide(n_rows, n_columns, seed):
    rng = np.random.default_rng(seed)
    data = {}
    for j in range(n_columns):
        kind = j % 5
        if kind < 3:
            data[f"x{j}"] = rng.normal(size=n_rows).round(3)
        elif kind == 3:
            data[f"x{j}"] = rng.integers(0, 2, n_rows)
        else:
            data[f"x{j}"] = rng.choice(list("abcd"), n_rows)
    return pd.DataFrame(data)


def _cpu_seconds(n_rows, n_columns):
    frames = {"members": _wide(n_rows, n_columns, 0), "non-members": _wide(n_rows, n_columns, 1)}
    start = time.process_time()
    encode_tables(frames)
    return time.process_time() - start


@pytest.mark.parametrize(
    "n_rows, narrow",
    [(100, 600), pytest.param(1000, 2000, marks=pytest.mark.slow)],
)
def test_a_wide_table_encodes_in_time_linear_in_its_columns(n_rows, narrow):
    """Twice the columns take about twice the CPU time; the pairwise dependence check this
    replaced took four times (and minutes at 10 000 columns). The bound, 3× the narrow
    table's CPU time, leaves room for a loaded machine's noise; quadratic gives 4× (the
    pairwise check correlated 65 000 pairs of numeric columns at 600 columns, 260 000 at
    1 200)."""
    narrow_seconds = _cpu_seconds(n_rows, narrow)
    wide_seconds = _cpu_seconds(n_rows, 2 * narrow)
    assert wide_seconds < 3 * narrow_seconds, (narrow_seconds, wide_seconds)


# ------------------------------------------------------------------ reading
def test_a_header_longer_than_the_sniffing_sample_is_read_whole(tmp_path):
    columns = [f"c{i}" for i in range(12_000)]  # cut at 64 KiB, 'c10…' would end in 'c1'
    path = tmp_path / "wide.csv"
    pd.DataFrame(np.zeros((3, len(columns)), dtype=int), columns=columns).to_csv(path, index=False)
    assert len(",".join(columns)) > 1 << 16
    frame = read_table(path)
    assert list(frame.columns) == columns


def test_trailing_empty_spreadsheet_columns_are_dropped_with_a_note(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("a,b,,\n1,2,,\n3,4,,\n", encoding="utf-8")
    frame = read_table(path)
    assert list(frame.columns) == ["a", "b"]
    assert "the last 2 column(s)" in frame.attrs["notes"][0]
    # unnamed trailing columns that hold values are not silently dropped
    path.write_text("a,b,,\n1,2,5,6\n3,4,7,8\n", encoding="utf-8")
    with pytest.raises(AuditInputError, match="duplicated column names"):
        read_table(path)


def test_nested_parquet_columns_are_dropped_with_a_note(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "nested.parquet"
    pd.DataFrame({"a": [1, 2], "l": [[1, 2], [3]], "d": [{"x": 1}, {"x": 2}]}).to_parquet(path)
    frame = read_table(path)
    assert list(frame.columns) == ["a"]
    assert "nested columns" in frame.attrs["notes"][0] and "'l'" in frame.attrs["notes"][0]


def test_nested_values_in_a_dataframe_are_dropped_with_a_warning():
    members, non_members, _ = audit_tables()
    tables = {
        "members": members.assign(tags=[[1, 2]] * len(members)),
        "non-members": non_members.assign(tags=[[3]] * len(non_members)),
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, names, report = encode_tables(tables)
    assert not any(n.startswith("tags") for n in names)
    assert report.set_index("column").loc["tags", "treatment"].startswith("dropped: nested")
    assert any("'tags' holds list values" in str(w.message) for w in caught)
