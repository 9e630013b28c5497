"""The report folder (issue #25, item 5): the manifest, inputs and links inside --out, the
demos' staging, unique figure names, CSV formula injection and third-party warnings."""

import csv
import json
import os
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from joblib import Parallel, delayed

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, audit_release, write_report
from sklearn_mace.report._figures import figure_file
from sklearn_mace.report._output import MANIFEST, OWN_FILES, escape_cell, write_csv
from sklearn_mace.report._warnings import catching_warnings
from tests.audit_data import audit_tables


def _write_inputs(folder, names=None):
    """The planted-leak tables as CSV in ``folder``; ``names`` renames the files."""
    folder.mkdir(parents=True, exist_ok=True)
    members, non_members, releases = audit_tables()
    tables = {"members": members, "non-members": non_members, "leaky": releases["leaky"]}
    names = {**{k: f"{k}.csv" for k in tables}, **(names or {})}
    paths = {}
    for key, frame in tables.items():
        paths[key] = folder / names[key]
        frame.to_csv(paths[key], index=False)
    return paths


def _argv(paths, out, *extra):
    return [
        "audit",
        "--members",
        str(paths["members"]),
        "--non-members",
        str(paths["non-members"]),
        "--synthetic",
        f"leaky={paths['leaky']}",
        "--out",
        str(out),
        "--quiet",
        "--no-disclosure",
        *extra,
    ]


def _exit2(capsys, argv, *fragments):
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err
    return err


def _snapshot(folder):
    return {p: p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def result():
    members, non_members, releases = audit_tables()
    return audit_release(
        members, non_members, {"leaky": releases["leaky"]}, disclosure=False, verbose=False
    )


# ------------------------------------------------------------------ inputs inside --out
@pytest.mark.parametrize("name", OWN_FILES)
def test_out_holding_an_input_file_is_refused_before_any_work(tmp_path, capsys, name):
    # the issue's case: --out is the inputs' folder, an input is named like a report file
    paths = _write_inputs(tmp_path / "data")
    (tmp_path / "out").mkdir()
    paths["non-members"] = paths["non-members"].rename(tmp_path / "out" / name)
    before = _snapshot(tmp_path)
    _exit2(capsys, _argv(paths, tmp_path / "out"), "holds the input file", name)
    assert _snapshot(tmp_path) == before


def test_an_input_below_out_or_linked_from_it_is_refused(tmp_path, capsys):
    paths = _write_inputs(tmp_path / "out" / "inputs")  # a sub-folder of --out
    _exit2(capsys, _argv(paths, tmp_path / "out"), "holds the input file", "members.csv")
    outside = _write_inputs(tmp_path / "data")
    (tmp_path / "out2").mkdir()
    os.symlink(outside["members"], tmp_path / "out2" / "m.csv")  # resolved: outside --out
    linked = {**outside, "members": tmp_path / "out2" / "m.csv"}
    _exit2(capsys, _argv(linked, tmp_path / "out2"), "holds the input file", "m.csv")
    # the model audit: a model file inside --out
    model = tmp_path / "out3" / "model.onnx"
    model.parent.mkdir()
    model.write_bytes(b"not read")
    argv = ["audit-model", "--model", model, "--members", outside["members"]]
    argv += ["--non-members", outside["non-members"], "--label", "site", "--out", model.parent]
    _exit2(capsys, argv, "holds the input file", "model.onnx", "--model")


# ------------------------------------------------------------------ links and foreign files
def test_a_figures_link_is_refused_and_the_linked_folder_untouched(tmp_path, capsys, result):
    paths = _write_inputs(tmp_path / "data")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "holiday.png").write_bytes(b"mine")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / "figures")
    _exit2(capsys, _argv(paths, out), "symbolic link 'figures'")
    assert _snapshot(elsewhere) == {elsewhere / "holiday.png": b"mine"}
    with pytest.raises(ValueError, match="^out '.*' holds a symbolic link 'figures'"):
        write_report(result, out)  # the library names its parameter
    assert _snapshot(elsewhere) == {elsewhere / "holiday.png": b"mine"}


def test_a_link_in_place_of_a_report_file_is_refused(tmp_path, result):
    out = tmp_path / "out"
    write_report(result, out)
    target = tmp_path / "precious.txt"
    target.write_text("keep")
    (out / "summary.csv").unlink()
    os.symlink(target, out / "summary.csv")
    with pytest.raises(AuditInputError, match="symbolic link 'summary.csv'"):
        write_report(result, out)
    assert target.read_text() == "keep"


def test_a_file_the_report_did_not_write_is_never_overwritten(tmp_path, result):
    out = tmp_path / "out"
    out.mkdir()
    (out / "records.csv").write_text("my records")
    with pytest.raises(AuditInputError, match="'records.csv' that no earlier report wrote"):
        write_report(result, out)
    assert (out / "records.csv").read_text() == "my records"
    # a figure name is known only after the work: refused before anything moves
    name = figure_file("roc", result, result.subjects[0])
    (out / "records.csv").unlink()
    (out / "figures").mkdir()
    (out / "figures" / name).write_bytes(b"my figure")
    with pytest.raises(AuditInputError, match=f"holds 'figures/{name}', which no earlier"):
        write_report(result, out)
    assert _snapshot(out) == {out / "figures" / name: b"my figure"}


def test_a_rerun_replaces_only_the_manifest_files(tmp_path, capsys):
    """The user's own PNGs in figures/ stay; the report's are replaced; a tampered manifest
    cannot reach outside --out."""
    paths = _write_inputs(tmp_path / "data")
    out = tmp_path / "out"
    assert main(_argv(paths, out)) == 0
    listed = json.loads((out / MANIFEST).read_text())["files"]
    assert {"report.html", "summary.csv", "records.csv"} <= set(listed)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == sorted(
        [MANIFEST, *listed]
    )
    (out / "figures" / "mine.png").write_bytes(b"mine")
    (tmp_path / "victim.txt").write_text("keep")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"] += ["../victim.txt", str(tmp_path / "victim.txt"), ".hidden"]
    (out / MANIFEST).write_text(json.dumps(manifest))
    assert main(_argv(paths, out)) == 0
    capsys.readouterr()
    assert (out / "figures" / "mine.png").read_bytes() == b"mine"
    assert (tmp_path / "victim.txt").read_text() == "keep"
    assert json.loads((out / MANIFEST).read_text())["files"] == listed


# ------------------------------------------------------------------ the demos
def test_demo_out_with_inputs_as_a_file_is_an_input_error(tmp_path, capsys):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "inputs").write_text("a file")
    _exit2(capsys, ["demo", "--out", out, "--quiet"], "a file 'inputs'")
    _exit2(capsys, ["audit", "--out", out, "--quiet"], "a file 'inputs'")
    (out / "inputs").unlink()
    (out / "models").mkdir()
    (out / "models" / "overfit.onnx").write_bytes(b"my model")
    _exit2(capsys, ["audit-model", "--out", out, "--quiet"], "'models/overfit.onnx'")
    assert (out / "models" / "overfit.onnx").read_bytes() == b"my model"


def _small_model_demo(monkeypatch):
    import sklearn_mace.report._kinds.model._demo as model_demo

    full = model_demo.make_model_demo_tables
    monkeypatch.setattr(
        model_demo,
        "make_model_demo_tables",
        lambda random_state, sizes: full(random_state, (120, 120, 240)),
    )


def test_model_demo_stages_inputs_and_models_and_keeps_user_files(tmp_path, monkeypatch, capfd):
    """The model demo writes inputs/ and models/ through the staging (listed in the manifest,
    a user's files beside them kept), and its third-party warnings — scikit-learn's
    ``divide by zero encountered in log`` (the issue's 128 lines) — reach the notes and
    not the terminal (counted without --quiet, not at all with it). Warnings of joblib's
    worker processes: ``test_warnings_of_joblib_workers_are_caught``."""
    _small_model_demo(monkeypatch)
    out = tmp_path / "demo"
    (out / "inputs").mkdir(parents=True)
    (out / "inputs" / "notes.txt").write_text("mine")
    argv = ["audit-model", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    printed = capfd.readouterr()
    assert "Warning" not in printed.out + printed.err
    listed = set(json.loads((out / MANIFEST).read_text())["files"])
    assert {"inputs/members.csv", "models/overfit.onnx", "models/regularised.skops"} <= listed
    assert (out / "inputs" / "notes.txt").read_text() == "mine"
    assert not [p for p in out.iterdir() if p.name.startswith(".sklearn-mace-staging")]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "×): RuntimeWarning: divide by zero encountered in log" in page
    assert main(argv[:-1]) == 0  # not quiet: counted in one line, not shown
    printed = capfd.readouterr()
    assert "RuntimeWarning" not in printed.out + printed.err
    assert "warnings of NumPy, scikit-learn and other code, listed in the" in printed.out
    assert f"--model overfit={out}/models/overfit.onnx" in printed.out  # the final paths


# ------------------------------------------------------------------ figure names
@pytest.mark.parametrize("names", [("α", "β"), ("v1.0", "v1-0"), ("=a", "+a")])
def test_figure_names_are_unique_per_subject(names):
    result = SimpleNamespace(subjects=[SimpleNamespace(name=n) for n in names])
    files = [figure_file("roc", result, s) for s in result.subjects]
    assert len(set(files)) == 2
    assert all(f.startswith(f"roc_{i}_") for i, f in enumerate(files, 1))


# ------------------------------------------------------------------ CSV formula injection
@pytest.mark.parametrize(
    "cell, written",
    [
        ("=1+1", "'=1+1"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("@SUM(1)", "'@SUM(1)"),
        ("-2+3", "'-2+3"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-1.5", "-1.5"),
        ("+2e3", "+2e3"),
        ("north", "north"),
        ("a=b", "a=b"),
        (-1.5, -1.5),
    ],
)
def test_escape_cell_follows_owasp(cell, written):
    assert escape_cell(cell) == written


def test_write_csv_escapes_text_and_keeps_numbers(tmp_path):
    frame = pd.DataFrame(
        {
            "=HYPERLINK(1)": [1.5, -2.0],
            "group": pd.Categorical(["@SUM(1)", "south"]),
            "name": ["-cmd", "-3"],
            "n": [1, 2],
        }
    )
    write_csv(frame, tmp_path / "x.csv")
    back = pd.read_csv(tmp_path / "x.csv")
    assert list(back.columns) == ["'=HYPERLINK(1)", "group", "name", "n"]
    assert back["'=HYPERLINK(1)"].tolist() == [1.5, -2.0] and back["n"].dtype.kind == "i"
    assert back["group"].tolist() == ["'@SUM(1)", "south"]
    assert back["name"].tolist() == ["'-cmd", "-3"]  # a number: not escaped
    assert frame.columns[0] == "=HYPERLINK(1)"  # the caller's frame is not changed


def _risky(text):
    return text[:1] in ("=", "+", "-", "@", "\t", "\r")


def test_every_csv_of_a_hostile_audit_is_escaped(tmp_path, capsys):
    """Group values, column names and release names that are formulas; two release names
    whose slugs collide: both releases keep their figures."""
    members, non_members, releases = audit_tables()
    hostile = {"north": "=1+1", "south": "+cmd|' /C calc'!A0", "east": "@SUM(1)"}
    frames = [members, non_members, releases["leaky"], releases["safe"]]
    frames = [f.assign(site=f["site"].map(hostile)).rename(columns={"bmi": "-bmi"}) for f in frames]
    data = tmp_path / "data"
    data.mkdir()
    for name, frame in zip(("m", "n", "leaky", "safe"), frames, strict=True):
        frame.to_csv(data / f"{name}.csv", index=False)
    out = tmp_path / "out"
    argv = ["audit", "--members", data / "m.csv", "--non-members", data / "n.csv"]
    argv += ["--synthetic", f"+v1.0={data / 'leaky.csv'}", f"v1-0={data / 'safe.csv'}"]
    argv += ["--group-by", "site", "--out", out, "--quiet"]
    assert main([str(a) for a in argv]) == 0
    capsys.readouterr()
    written = sorted(out.glob("*.csv"))
    assert {p.name for p in written} >= {"summary.csv", "records.csv", "disclosure.csv"}
    for path in written:
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.reader(handle):
                for cell in row:
                    if _risky(cell):
                        float(cell)  # only numbers may begin so
    records = pd.read_csv(out / "records.csv")
    assert set(records["site"]) == {"'" + v for v in hostile.values()}
    assert set(pd.read_csv(out / "summary.csv")["subject"]) == {"'+v1.0", "v1-0"}
    figures = sorted(p.name for p in (out / "figures").glob("r*_v1-0.png"))
    assert figures == ["risk_1_v1-0.png", "risk_2_v1-0.png", "roc_1_v1-0.png", "roc_2_v1-0.png"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("roc_1_v1-0.png") >= 1 and page.count("roc_2_v1-0.png") >= 1


# ------------------------------------------------------------------ third-party warnings
def _warn_log(i):
    """A worker's task: NumPy's RuntimeWarning, as scikit-learn's forests raise it."""
    with np.errstate(divide="warn"):
        np.log(np.zeros(1))
    return i


def test_warnings_of_joblib_workers_are_caught():
    # a plain catch_warnings misses what loky's worker processes raise (the escape)
    with warnings.catch_warnings(record=True) as plain:
        warnings.simplefilter("always")
        Parallel(n_jobs=2)(delayed(np.log)(np.zeros(1)) for _ in range(6))
    with catching_warnings() as caught:
        Parallel(n_jobs=2)(delayed(np.log)(np.zeros(1)) for _ in range(6))
        _warn_log(0)  # and one in this process
    assert len(plain) == 0
    messages = [w.message for w in caught]
    assert messages == ["divide by zero encountered in log"] * 7
    assert {w.category for w in caught} == {"RuntimeWarning"}


def test_drawing_warnings_join_the_notes(tmp_path, capfd, monkeypatch):
    """matplotlib's warnings come while the figures are drawn, after the audit: they are
    notes too, counted without --quiet and never shown."""
    import sklearn_mace.report._writer as writer

    original = writer.embed_figure

    def noisy(*args, **kwargs):
        warnings.warn("a drawing warning", UserWarning, stacklevel=1)
        return original(*args, **kwargs)

    monkeypatch.setattr(writer, "embed_figure", noisy)
    paths = _write_inputs(tmp_path / "data")
    for quiet in (True, False):
        out = tmp_path / f"out-{quiet}"
        argv = _argv(paths, out)
        assert main(argv if quiet else [a for a in argv if a != "--quiet"]) == 0
        printed = capfd.readouterr()
        assert "a drawing warning" not in printed.out + printed.err
        assert ("warnings of NumPy, scikit-learn and other code" in printed.out) is not quiet
        page = (out / "report.html").read_text(encoding="utf-8")
        assert "×): UserWarning: a drawing warning" in page


ISOLATED_MODEL_DEMO = """
import os, sys
os.dup2(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT), 2)  # the workers' stderr too
import sklearn_mace.report._kinds.model._demo as demo
full = demo.make_model_demo_tables
demo.make_model_demo_tables = lambda random_state, sizes: full(random_state, (120, 120, 240))
from sklearn_mace.cli import main
sys.exit(main(["audit-model", "--out", "out", "--quiet", "--n-jobs", "2"]))
"""


@pytest.mark.slow  # about 80 s on a busy 2-core machine (worker processes start twice)
def test_model_demo_with_workers_writes_and_prints_nothing_outside_out(tmp_path):
    """The model demo (inputs, models, report; joblib's worker processes) in a child process
    with a fake HOME, XDG folders and TMPDIR: every new file lies in --out, and nothing
    reaches stderr with --quiet."""
    from tests.report.model.test_model_loading import _run_isolated

    stderr = tmp_path / "stderr.txt"
    (tmp_path / "iso").mkdir()
    written = {name for name, _ in _run_isolated(tmp_path / "iso", ISOLATED_MODEL_DEMO, stderr)}
    assert {"work/out/models/overfit.onnx", "work/out/inputs/members.csv"} <= written
    assert {name for name in written if not name.startswith("work/out")} == set()
    assert "Warning" not in stderr.read_text()
    page = (tmp_path / "iso" / "work" / "out" / "report.html").read_text(encoding="utf-8")
    assert "×): RuntimeWarning: divide by zero encountered in log" in page
