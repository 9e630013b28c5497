"""Tables read and encoded as a person means them (issue #22, items 3-5).

Decimal commas, row ids, tables that would lose most columns, one encoding fitted on the real
tables (so a release never changes another's numbers), drop messages that name the table and
the share, progress bars; and a fuzz of CSV reading (hypothesis): random delimiters, quoting,
encodings, decimal marks, line ends and missing cells give either the frame that was written
or an :class:`AuditInputError`, never another exception.
"""

import csv
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sklearn_mace.metrics import audit_epsilon
from sklearn_mace.queries import DOMIASQuery
from sklearn_mace.report import AuditInputError, encode_tables, read_table
from sklearn_mace.report._encode import find_row_id_columns
from sklearn_mace.report._io import AuditInputWarning
from tests.audit_data import adult_like, audit_tables


def _write_both(tmp_path, frame, name):
    plain, european = tmp_path / f"{name}.csv", tmp_path / f"{name}_eu.csv"
    frame.to_csv(plain, index=False)
    frame.to_csv(european, index=False, sep=";", decimal=",")
    return plain, european


# ------------------------------------------------------------------ decimal commas
def test_a_decimal_comma_table_reads_like_its_ordinary_twin(tmp_path):
    members, non_members, releases = audit_tables()
    big = members.assign(income=1000 * np.exp(members["age"]) + 1234.5)  # 1.234,5 style
    for name, frame in {"members": big, "non-members": non_members, **releases}.items():
        plain, european = _write_both(tmp_path, frame, name)
        expected, got = read_table(plain), read_table(european)
        pd.testing.assert_frame_equal(got, expected)  # same values, same dtypes
        assert any("decimal comma" in note for note in got.attrs["notes"])


def test_thousands_separators_are_read(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("amount;share\n1.234,5;0,5\n12.345.678,25;1,75\n7;2\n")
    assert read_table(path)["amount"].tolist() == [1234.5, 12345678.25, 7.0]
    path.write_text('amount,share\n"1,234.5",0.5\n"12,345,678.25",1.75\n7,2\n')
    assert read_table(path)["amount"].tolist() == [1234.5, 12345678.25, 7.0]


def test_mixed_decimal_marks_are_refused_and_decimal_can_be_given(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("a;b\n14,25;1.5\n2,5;3.25\n")
    with pytest.raises(AuditInputError, match=r"decimal comma \('14,25' in column 'a'\)"):
        read_table(path)
    frame = read_table(path, decimal=".")
    assert frame["b"].tolist() == [1.5, 3.25] and frame["a"].tolist() == ["14,25", "2,5"]
    path.write_text("a\t b\n14,25\t1\n2,5\t2\n")  # tab: only a note, the comma is not assumed
    frame = read_table(path)
    assert frame["a"].dtype != float and "decimal=','" in frame.attrs["notes"][0]
    assert read_table(path, decimal=",")["a"].tolist() == [14.25, 2.5]
    with pytest.raises(ValueError, match="decimal must be"):
        read_table(path, decimal=";")


def test_a_misread_table_that_loses_most_columns_is_refused_naming_them(tmp_path):
    members, non_members, _ = audit_tables()
    paths = {}
    for name, frame in (("members", members), ("non-members", non_members)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False, sep=";", decimal=",")
    tables = {name: read_table(path, decimal=".") for name, path in paths.items()}
    with pytest.raises(AuditInputError, match=r"4 of the 5 columns would be dropped") as info:
        encode_tables(tables)
    for column in ("'age'", "'bmi'", "'glucose'", "'record_id'"):
        assert column in str(info.value)
    assert "decimal=','" in str(info.value)
    encode_tables({name: read_table(path) for name, path in paths.items()})  # read right: fine


# ------------------------------------------------------------------ row ids
def _with_ids(seed=0, n=100):
    rng = np.random.default_rng(seed)

    def table(k):
        frame = pd.DataFrame(rng.normal(size=(k, 3)), columns=["age", "bmi", "glucose"])
        return frame.assign(site=rng.choice(["north", "south", "east"], k))

    tables = {"members": table(n), "non-members": table(n), "reference": table(n)}
    for i, frame in enumerate(tables.values()):
        frame.insert(0, "patient", np.arange(i * n, (i + 1) * n))
    # fresh population rows (no information on the members) whose ids were learned from
    # the members, as a generator trained on them would write ids
    release = table(3 * n)
    release.insert(0, "patient", rng.integers(0, n, 3 * n))
    tables["synthetic 'fresh'"] = release
    return tables


def _domias_epsilon(arrays, n):
    X = np.r_[arrays["members"], arrays["non-members"]]
    m = np.r_[np.ones(n), np.zeros(n)]
    query = DOMIASQuery(arrays["synthetic 'fresh'"], arrays["reference"], device="cpu")
    score = query.fit_transform(X)[:, 0]
    return audit_epsilon(score[m == 1], score[m == 0], random_state=0).epsilon_lower_bound


def test_a_row_id_is_dropped_with_a_warning_and_its_fake_leak_disappears():
    tables = _with_ids()
    with pytest.warns(AuditInputWarning, match=r"'patient' looks like a row id.*id_columns=\[\]"):
        arrays, names, report = encode_tables(tables)
    assert "patient" not in names
    treatment = report.set_index("column").loc["patient", "treatment"]
    assert treatment.startswith("dropped: looks like a row id")
    # the release knows nothing of the members: no leak may be certified without the id
    assert _domias_epsilon(arrays, 100) == 0.0
    # kept on request, the id alone fakes one (measured: ε ≥ 2.0): the check can fail
    with warnings.catch_warnings():
        warnings.simplefilter("error", AuditInputWarning)
        kept, names, _ = encode_tables(tables, id_columns=[])
    assert "patient" in names and _domias_epsilon(kept, 100) > 1.0


@pytest.mark.parametrize(
    "values, name, is_id",
    [
        (np.arange(1000, 1100), "x", True),  # a sequence
        (np.random.default_rng(0).permutation(150)[:100], "x", True),  # dense distinct ints
        (np.arange(100) * 0.5, "x", True),  # evenly spaced floats
        (np.random.default_rng(1).choice(10**9, 100, replace=False), "patient_id", True),
        (np.random.default_rng(1).choice(10**9, 100, replace=False), "income", False),
        (np.random.default_rng(2).integers(0, 50, 100), "x", False),  # repeats
        (np.random.default_rng(3).normal(size=100), "x", False),  # not integers
        (np.arange(10), "x", False),  # too few rows to tell
    ],
)
def test_row_id_detection(values, name, is_id):
    frame = pd.DataFrame({name: values})
    assert (name in find_row_id_columns({"t": frame})) is is_id


# ------------------------------------------------------------------ one encoding per audit
def _adult_tables(seed=0):
    rng = np.random.default_rng(seed)
    tables = {
        "members": adult_like(800, rng),
        "non-members": adult_like(800, rng),
        "reference": adult_like(1500, rng),
        "synthetic 'a'": adult_like(1500, rng),
    }
    # a sparse release: one workclass only, no '?' anywhere, two countries the real tables
    # lack, and no Doctorate
    sparse = adult_like(600, rng)
    sparse = sparse[sparse["education"] != "Doctorate"].reset_index(drop=True)
    sparse["workclass"] = "Private"
    sparse["occupation"] = sparse["occupation"].replace("?", "Sales")
    sparse.loc[:99, "native-country"] = "Atlantis"
    sparse.loc[100:119, "native-country"] = "Lemuria"
    return tables, sparse


def test_adding_a_release_never_changes_another_releases_encoding():
    tables, sparse = _adult_tables()
    alone = encode_tables(tables)
    together = encode_tables({**tables, "synthetic 'sparse'": sparse})
    assert together[1] == alone[1]  # the same features
    for name in tables:
        np.testing.assert_array_equal(together[0][name], alone[0][name])
    pd.testing.assert_frame_equal(together[2], alone[2])
    # the sparse release lacks categories: they stay categories (nothing merged for it)
    treatment = together[2].set_index("column")["treatment"]
    assert "workclass" in set(together[2].loc[together[2]["features"] > 0, "column"])
    notes = " ".join(together[2].attrs["table_notes"]["synthetic 'sparse'"])
    assert "lacks the categories" in notes and "'?'" in notes
    # its unseen countries (20 % of its rows) go to <other>, with the share
    assert "120 values (" in notes and "map to <other>" in notes
    assert "<other>" in treatment["native-country"]
    others = together[0]["synthetic 'sparse'"][:120]
    names = together[1]
    country = [j for j, f in enumerate(names) if f.startswith("native-country[")]
    rare = alone[0]["members"][
        (tables["members"]["native-country"].str.startswith("Country-")).to_numpy()
    ]
    np.testing.assert_allclose(others[:, country], rare[:1, country].repeat(120, axis=0))


def test_an_unseen_category_without_other_maps_to_the_centre():
    members, non_members, releases = audit_tables()
    release = releases["safe"].assign(site="west")  # no real table has west, none is rare
    arrays, names, report = encode_tables(
        {"members": members, "non-members": non_members, "synthetic 'w'": release}
    )
    site = [j for j, f in enumerate(names) if f.startswith("site[")]
    np.testing.assert_allclose(arrays["synthetic 'w'"][:, site], 0.0)
    real = np.r_[arrays["members"], arrays["non-members"]][:, site]
    # the centre is equally far from the three categories (the vertices 1 apart)
    distances = np.unique(np.linalg.norm(real, axis=1).round(12))
    assert distances.size == 1 and distances[0] == pytest.approx(1 / np.sqrt(3))
    assert "centre of the categories" in report.attrs["table_notes"]["synthetic 'w'"][0]


def test_drop_messages_name_the_tables_and_the_share():
    tables, _ = _adult_tables()
    tables = {k: v.assign(note=[f"{k} text {i}" for i in range(len(v))]) for k, v in tables.items()}
    tables["members"]["flag"] = "x"
    tables["non-members"]["flag"] = "x"
    tables["reference"]["flag"] = np.where(np.arange(1500) < 3, "y", "x")
    tables["synthetic 'a'"]["flag"] = "z"
    _, _, report = encode_tables(tables)
    treatment = report.set_index("column")["treatment"]
    assert treatment["note"].startswith(
        "dropped: 3100 distinct text values in the real tables (members, non-members, reference);"
    )
    assert "100% of their rows in rare ones" in treatment["note"]
    # 'y' is 0.1 % of the real rows: merged, leaving one category and <other>; kept
    assert treatment["flag"].startswith("one-hot, 2 categories; 1 rarer than 1% of the real")


def test_progress_bars_honour_verbose(tmp_path, capsys):
    members, non_members, _ = audit_tables()
    path = tmp_path / "m.csv"
    members.to_csv(path, index=False)
    read_table(path)
    encode_tables({"members": members, "non-members": non_members})
    assert capsys.readouterr().err == ""
    read_table(path, verbose=True)
    encode_tables({"members": members, "non-members": non_members}, verbose=True)
    err = capsys.readouterr().err
    assert "reading m.csv" in err and "encoding" in err


# ------------------------------------------------------------------ fuzzed CSV files
_NA = {"", "#N/A", "#NA", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null", "<NA>"}
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüßñ"


def _is_text(value):
    if not value or value[0] not in _LETTERS or value.strip() in _NA:
        return False
    if value.strip().lower() in {"true", "false", "inf", "infinity", "nan"}:
        return False
    try:
        float(value.replace(",", "."))
    except ValueError:
        return True
    return False


_text = st.text(alphabet=_LETTERS + " ,;|\t\"'\n0123456789.", min_size=1, max_size=8).filter(
    _is_text
)
_kinds = {
    "int": st.integers(-5000, 5000),
    "float": st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 4)),
    "text": _text,
}


@st.composite
def _tables(draw):
    n_columns = draw(st.integers(1, 4))
    names = draw(
        st.lists(
            st.text(alphabet="abcdefghijklmnop_", min_size=1, max_size=6),
            min_size=n_columns,
            max_size=n_columns,
            unique=True,
        )
    )
    n_rows = draw(st.integers(1, 6))
    columns = {}
    for name in names:
        kind = draw(st.sampled_from(sorted(_kinds)))
        cells = draw(st.lists(st.one_of(st.none(), _kinds[kind]), min_size=n_rows, max_size=n_rows))
        columns[name] = pd.Series(cells, dtype=object)
    return pd.DataFrame(columns)


def _same(expected, got):
    """Cell equality as a person reads it: numbers as numbers, text without surrounding
    spaces, missing as missing."""
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        return pd.isna(got)
    if isinstance(expected, str):
        return isinstance(got, str) and got.strip() == expected.strip()
    return (
        not isinstance(got, str)
        and not pd.isna(got)
        and math.isclose(float(got), float(expected), rel_tol=1e-12, abs_tol=1e-12)
    )


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    frame=_tables(),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"]),
    comma=st.booleans(),
    line_end=st.sampled_from(["\n", "\r\n"]),
)
def test_fuzzed_csv_reads_back_or_is_refused_clearly(
    tmp_path, frame, sep, quoting, encoding, comma, line_end
):
    decimal = "," if comma and sep == ";" else "."
    path = tmp_path / "fuzz.csv"
    frame.to_csv(
        path,
        index=False,
        sep=sep,
        quoting=quoting,
        encoding=encoding,
        decimal=decimal,
        lineterminator=line_end,
    )
    try:
        got = read_table(path, role="members")
    except AuditInputError as exc:  # a clear refusal naming the file is allowed
        assert str(path) in str(exc)
        return
    assert [str(c).strip() for c in got.columns] == list(frame.columns)
    assert len(got) == len(frame), (got, frame)
    for column in frame.columns:
        for expected, value in zip(frame[column], got[column], strict=True):
            assert _same(expected, value), (column, expected, value, got.dtypes.to_dict())


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    frame=_tables(),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    encoding=st.sampled_from(["utf-8", "latin-1", "utf-16"]),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.sampled_from(['"', ",", ";", "\t", "\n", "\x00", "", "é"])),
        min_size=1,
        max_size=4,
    ),
    cut=st.floats(0.2, 1.0),
)
def test_damaged_csv_is_read_or_refused_never_a_raw_exception(
    tmp_path, frame, sep, encoding, edits, cut
):
    """Stray quotes, delimiters, line ends, NUL bytes, cut-off files: read_table returns a
    frame or raises AuditInputError, nothing else."""
    text = frame.to_csv(index=False, sep=sep)
    for position, insert in edits:  # replace one character (or delete it)
        i = int(position * (len(text) - 1))
        text = text[:i] + insert + text[i + 1 :]
    raw = text.encode(encoding, errors="replace")
    path = tmp_path / "damaged.csv"
    path.write_bytes(raw[: max(1, int(cut * len(raw)))])
    try:
        got = read_table(path)
    except AuditInputError as exc:
        assert str(path) in str(exc)
    else:
        assert isinstance(got, pd.DataFrame) and got.shape[0] >= 1 and got.shape[1] >= 1


def test_a_three_class_integer_label_is_one_hot():
    rng = np.random.default_rng(0)

    def t(n):
        return pd.DataFrame(
            {
                "x": rng.normal(size=n),
                "age": rng.integers(18, 90, n),
                "label": rng.integers(0, 3, n),
            }
        )

    m, nm, s = t(200), t(200), t(300)
    m.loc[0, "label"] = np.nan  # a missing cell is its own category, not a fourth integer
    arrays, names, report = encode_tables({"members": m, "non-members": nm, "synthetic a": s})
    treatment = dict(zip(report["column"], report["treatment"], strict=True))
    assert treatment["label"].startswith("3 integer values taken as classes, one-hot")
    assert treatment["age"].startswith("numeric")
    X, lab = arrays["non-members"], nm["label"].to_numpy()
    first = [names.index(n) for n in names if n.startswith("label[")]
    c = {k: X[lab == k][0, first] for k in range(3)}
    d = [np.linalg.norm(c[i] - c[j]) for i, j in ((0, 1), (0, 2), (1, 2))]
    np.testing.assert_allclose(d, 1.0)  # every two classes alike (scaled: 0-2 twice 0-1)
