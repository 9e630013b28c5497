"""The bad-input sweep of issue #12 (item 10), the encoding of Adult-like tables (item 1)
and the safe writing of the report folder (item 12)."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.cli import main
from sklearn_mace.report import (
    AuditInputError,
    _output,
    audit_release,
    encode_tables,
    read_table,
    write_report,
)
from tests.audit_data import adult_like, audit_tables

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # root ignores file permissions


def _write(folder, tables):
    folder.mkdir(exist_ok=True)
    paths = {}
    for name, frame in tables.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


@pytest.fixture
def inputs(tmp_path):
    members, non_members, releases = audit_tables()
    return _write(
        tmp_path / "inputs",
        {"members": members, "non-members": non_members, "leaky": releases["leaky"]},
    )


def _argv(paths, out, *extra, synthetic=None):
    return [
        "audit",
        "--members",
        str(paths["members"]),
        "--non-members",
        str(paths["non-members"]),
        "--synthetic",
        f"leaky={synthetic or paths['leaky']}",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def _exit2(capsys, argv, *fragments):
    """The CLI stops with exit code 2 and a message holding every fragment."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err
    return err


def _edit(path, change):
    frame = pd.read_csv(path)
    change(frame).to_csv(path, index=False)


# ------------------------------------------------------------------ values in the tables
def test_inf_is_refused_naming_column_and_table(inputs, tmp_path, capsys):
    def plant(frame):
        frame.loc[3, "bmi"] = np.inf
        return frame

    _edit(inputs["non-members"], plant)
    _exit2(capsys, _argv(inputs, tmp_path / "out"), "'bmi'", "non-members table", "infinite")
    assert not (tmp_path / "out").exists()


def test_overflow_scale_values_are_refused_naming_the_column(inputs, tmp_path, capsys):
    _edit(inputs["members"], lambda f: f.assign(glucose=f["glucose"] * 1e300))
    _exit2(capsys, _argv(inputs, tmp_path / "out"), "'glucose'", "members table", "overflow")


def test_a_stray_text_cell_is_missing_in_a_numeric_column_and_named():
    members, non_members, releases = audit_tables()
    members = members.astype({"age": object})
    members.loc[5, "age"] = "abc"
    _, names, report = encode_tables({"members": members, "non-members": non_members})
    assert "age" in names  # still numeric, not dropped as free text
    treatment = report.set_index("column").loc["age", "treatment"]
    assert "'abc' in the members table, row 5" in treatment
    assert "1 missing imputed with the median" in treatment


def test_columns_missing_in_one_table_only_are_refused_with_the_rates():
    members, non_members, _ = audit_tables()
    members = members.assign(bmi=np.nan)
    with pytest.raises(AuditInputError, match=r"'bmi' is missing in 100% of the members rows"):
        encode_tables({"members": members, "non-members": non_members})
    # the same share of missing values everywhere is fine (imputed, counted)
    rng = np.random.default_rng(0)
    for frame in (members, non_members):
        frame["bmi"] = np.where(rng.random(len(frame)) < 0.2, np.nan, 1.0 + rng.random(len(frame)))
    _, _, report = encode_tables({"members": members, "non-members": non_members})
    assert "missing imputed" in report.set_index("column").loc["bmi", "treatment"]


def test_constant_and_constant_in_one_table_columns_are_dropped_and_named():
    members, non_members, releases = audit_tables()
    tables = {"members": members.assign(k=1), "non-members": non_members.assign(k=1)}
    tables["non-members"]["glucose"] = 0.5 + 7e-31 * np.arange(len(non_members))
    leaky = releases["leaky"].assign(k=1, bmi=0.5)
    tables["synthetic 'leaky'"] = leaky
    _, names, report = encode_tables(tables)
    treatment = report.set_index("column")["treatment"]
    assert treatment["k"] == "dropped: constant"
    assert treatment["glucose"] == "dropped: constant in the non-members table"
    assert "glucose" not in names and "k" not in names
    # a release that collapses a column does not change the encoding (issue #22): kept
    assert "bmi" in names


def test_dates_are_dropped_even_with_three_values():
    members, non_members, _ = audit_tables()
    days = ["2024-01-01", "2024-02-01", "2024-03-01"]
    tables = {
        "members": members.assign(visit=[days[i % 3] for i in range(len(members))]),
        "non-members": non_members.assign(visit=[days[i % 3] for i in range(len(non_members))]),
    }
    _, names, report = encode_tables(tables)
    assert report.set_index("column").loc["visit", "treatment"].startswith("dropped: date")
    assert not any(n.startswith("visit") for n in names)


def test_boolean_and_string_label_columns_are_categories():
    members, non_members, _ = audit_tables()
    rng = np.random.default_rng(1)
    tables = {
        n: f.assign(smoker=rng.random(len(f)) < 0.3, outcome=rng.choice(["yes", "no"], len(f)))
        for n, f in (("members", members), ("non-members", non_members))
    }
    arrays, names, report = encode_tables(tables)
    assert {"smoker[0]", "outcome[0]"} <= set(names)
    smoker = np.r_[tables["members"]["smoker"], tables["non-members"]["smoker"]]
    coordinate = np.r_[arrays["members"], arrays["non-members"]][:, names.index("smoker[0]")]
    assert abs(coordinate[smoker].mean() - coordinate[~smoker].mean()) == pytest.approx(1.0)


def test_perfect_copy_and_hold_out_copy_releases_pass_the_input_layer(inputs, tmp_path):
    from sklearn_mace.report._arguments import read_inputs

    files = {
        "members": inputs["members"],
        "non-members": inputs["non-members"],
        "synthetic 'copy'": inputs["members"],
        "synthetic 'holdout'": inputs["non-members"],
    }
    tables = read_inputs(files, distinct=("members", "non-members"))
    arrays, _, _ = encode_tables(tables)
    np.testing.assert_array_equal(arrays["synthetic 'copy'"], arrays["members"])
    np.testing.assert_array_equal(arrays["synthetic 'holdout'"], arrays["non-members"])


# ------------------------------------------------------------------ Adult-like tables
def test_adult_like_tables_encode_with_every_column():
    rng = np.random.default_rng(0)
    tables = {
        "members": adult_like(1000, rng),
        "non-members": adult_like(1000, rng),
        "synthetic 'a'": adult_like(3000, rng),
        "reference": adult_like(3000, rng),
    }
    arrays, names, report = encode_tables(tables, max_categories=50)
    treatment = report.set_index("column")["treatment"]
    assert (
        treatment["education-num"] == "dropped: an exact function of 'education' on the real tables"
    )
    # native-country's 41 values are usable: the rare ones merge into <other>
    assert treatment["native-country"].startswith("one-hot, 41 categories;")
    assert "merged into <other>" in treatment["native-country"]
    assert report.set_index("column").loc["native-country", "features"] == 2  # US, Mexico, other
    # Without-pay and Armed-Forces are rare: merged, so no table lacks a level
    assert "Armed-Forces" in treatment["occupation"] and "Without-pay" in treatment["workclass"]
    assert treatment["income"] == "one-hot, 2 categories"
    for name, X in arrays.items():
        assert np.isfinite(X).all()
        # with education-num dropped, only the shared '?' of workclass and occupation can
        # make a table singular, and the report names it
        rank = np.linalg.matrix_rank(X - X.mean(axis=0))
        collinear = report.attrs["collinear"].get(name, [])
        assert rank == X.shape[1] or set(collinear) == {"workclass", "occupation"}
    # the default 20 categories count those left after merging: native-country is kept
    _, _, default = encode_tables(tables)
    pd.testing.assert_frame_equal(default, report)
    # an identifier (every value once) is dropped whatever max_categories allows
    tables = {k: v.assign(ident=[f"{k}{i}" for i in range(len(v))]) for k, v in tables.items()}
    _, _, report = encode_tables(tables, max_categories=50)
    assert (
        report.set_index("column")
        .loc["ident", "treatment"]
        .startswith("dropped: 5000 distinct text values in the real tables")
    )


@pytest.mark.slow
def test_the_real_adult_data_encodes_with_all_columns():
    mglearn = pytest.importorskip("mglearn")
    path = os.path.join(os.path.dirname(mglearn.__file__), "data", "adult.data")
    columns = [
        "age",
        "workclass",
        "fnlwgt",
        "education",
        "education-num",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
        "native-country",
        "income",
    ]
    adult = pd.read_csv(path, header=None, names=columns, skipinitialspace=True)
    adult = adult.drop_duplicates().sample(frac=1.0, random_state=0).reset_index(drop=True)
    tables = {
        "members": adult[:1000],
        "non-members": adult[1000:2000],
        "reference": adult[2000:7000],
    }
    tables["synthetic 'copies'"] = adult[:1000].sample(5000, replace=True, random_state=0)
    arrays, names, report = encode_tables(tables, max_categories=50)
    treatment = report.set_index("column")["treatment"]
    assert treatment["education-num"].startswith("dropped: an exact function of 'education'")
    assert (report["features"] > 0).sum() == 14
    assert all(np.isfinite(X).all() for X in arrays.values())


# ------------------------------------------------------------------ reading files
def test_reading_semicolons_latin1_and_a_saved_index(tmp_path):
    members, _, _ = audit_tables()
    members = members.assign(site=members["site"].replace("north", "Nørd"))
    path = tmp_path / "semi.csv"
    members.to_csv(path, sep=";", encoding="latin-1")  # index saved, Latin-1, semicolons
    frame = read_table(path, role="members")
    assert list(frame.columns) == list(members.columns)
    assert "Nørd" in set(frame["site"])
    notes = " ".join(frame.attrs["notes"])
    assert "Latin-1" in notes and "index" in notes


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"", "the file is empty"),
        (b"age,bmi,site\n", "has a header but no rows"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary data"),
        (b"age,bmi,age\n1,2,3\n4,5,6\n", "duplicated column names ['age']"),
    ],
)
def test_unusable_files_are_refused_naming_the_file(inputs, tmp_path, capsys, content, fragment):
    inputs["members"].write_bytes(content)
    err = _exit2(capsys, _argv(inputs, tmp_path / "out"), fragment)
    assert str(inputs["members"]) in err
    assert not (tmp_path / "out").exists()


def test_same_table_as_members_and_non_members_is_refused(inputs, tmp_path, capsys):
    inputs["non-members"] = inputs["members"]
    _exit2(capsys, _argv(inputs, tmp_path / "out"), "the same table (the same file)")
    copy = tmp_path / "copy.csv"
    copy.write_bytes(inputs["members"].read_bytes())
    inputs["non-members"] = copy
    _exit2(capsys, _argv(inputs, tmp_path / "out"), "hold the same table")


@pytest.mark.parametrize("value", ["-1", str(2**40), "abc"])
def test_random_state_out_of_range(inputs, tmp_path, capsys, value):
    _exit2(capsys, _argv(inputs, tmp_path / "out", "--random-state", value), "[0, 2**32 - 1]")


def test_more_features_than_rows_is_a_clear_error(inputs, tmp_path, capsys):
    rng = np.random.default_rng(0)
    for key in ("members", "non-members", "leaky"):
        wide = pd.DataFrame(rng.normal(size=(len(pd.read_csv(inputs[key])), 300)))
        wide.add_prefix("x").to_csv(inputs[key], index=False)
    _exit2(capsys, _argv(inputs, tmp_path / "out"), "Too few rows", "at least 301")


# ------------------------------------------------------------------ the output folder
def test_out_pointing_at_a_file_is_refused_before_any_work(inputs, tmp_path, capsys):
    target = tmp_path / "report.txt"
    target.write_text("mine")
    _exit2(capsys, _argv(inputs, target), "is an existing file, not a folder")
    assert target.read_text() == "mine"
    argv = ["audit-model", "--model", str(tmp_path / "m.onnx"), "--members"]
    argv += [str(inputs["members"]), "--non-members", str(inputs["non-members"])]
    _exit2(capsys, [*argv, "--label", "site", "--out", str(target)], "is an existing file")


def _read_only(monkeypatch, folder):
    """Make ``folder`` read-only: by permissions, and for root (who ignores them) by
    the check's probe."""
    writable = _output._writable
    monkeypatch.setattr(
        _output, "_writable", lambda f: False if f == folder else writable(f), raising=True
    )
    if not ROOT:
        folder.chmod(0o555)


def test_out_in_a_read_only_folder_is_refused_before_any_work(
    inputs, tmp_path, capsys, monkeypatch
):
    parent = tmp_path / "locked"
    parent.mkdir()
    _read_only(monkeypatch, parent)
    try:
        _exit2(capsys, _argv(inputs, parent / "out"), "cannot be created", str(parent))
    finally:
        parent.chmod(0o755)


@pytest.fixture(scope="module")
def result():
    members, non_members, releases = audit_tables()
    return audit_release(members, non_members, {"leaky": releases["leaky"]}, verbose=False)


def test_read_only_figures_folder_is_refused_and_the_old_report_kept(result, tmp_path, monkeypatch):
    out = tmp_path / "report"
    write_report(result, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    _read_only(monkeypatch, out / "figures")
    try:
        with pytest.raises(AuditInputError, match="figures' is not writable"):
            write_report(result, out)
    finally:
        (out / "figures").chmod(0o755)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_failed_write_leaves_the_previous_report_intact(result, tmp_path, monkeypatch):
    out = tmp_path / "report"
    write_report(result, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def fail(fig, name, caption):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sklearn_mace.report._writer.embed_figure", fail)
    with pytest.raises(OSError, match="No space left"):
        write_report(result, out)
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # nothing half-written, no staging folder left behind
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(_output.STAGING_PREFIX)]


def test_stale_files_of_an_earlier_run_are_replaced_and_user_files_kept(result, tmp_path):
    # an earlier run (its manifest lists what it wrote) and the user's own files
    out = tmp_path / "report"
    write_report(result, out)
    manifest = json.loads((out / _output.MANIFEST).read_text())
    (out / "figures" / "roc_9_old_release.png").write_bytes(b"old")  # a subject since gone
    manifest["files"].append("figures/roc_9_old_release.png")
    (out / _output.MANIFEST).write_text(json.dumps(manifest))
    (out / "summary.csv").write_text("subject\nold\n")
    (out / "figures" / "my_notes.txt").write_text("keep")
    (out / "figures" / "my_plot.png").write_bytes(b"mine")  # a PNG of the user's: kept
    (out / "README.txt").write_text("keep")
    paths = write_report(result, out)
    assert set(pd.read_csv(out / "summary.csv")["subject"]) == {"leaky"}
    assert not (out / "figures" / "roc_9_old_release.png").exists()
    assert (out / "figures" / "my_notes.txt").read_text() == "keep"
    assert (out / "figures" / "my_plot.png").read_bytes() == b"mine"
    assert (out / "README.txt").read_text() == "keep"
    pngs = {p.name for p in (out / "figures").glob("*.png")} - {"my_plot.png"}
    assert pngs == {p.name for k, p in paths.items() if k.endswith(".png")}
    assert all(p.parent in (out, out / "figures") and p.exists() for p in paths.values())
    assert not [p for p in out.rglob("*") if p.name.startswith(_output.STAGING_PREFIX)]


def test_a_new_report_folder_appears_whole_with_the_usual_mode(tmp_path):
    with _output.staged_output(tmp_path / "m") as stage:
        (stage / "figures").mkdir()
        (stage / "figures" / "a.png").write_bytes(b"x")
        (stage / "report.html").write_text("new")
        assert not (tmp_path / "m").exists()  # nothing in place before the end
    assert (tmp_path / "m" / "report.html").read_text() == "new"
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "m").stat().st_mode & 0o777 == 0o777 & ~umask  # not mkdtemp's 0700
