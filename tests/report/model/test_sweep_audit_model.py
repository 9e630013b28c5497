"""A sweep of ``sklearn-mace audit-model`` over the hostile and messy inputs of issue #22.

Every case runs through the command line (``sklearn_mace.cli.main`` in-process; one run in a
child process with a fake HOME, XDG folders and TMPDIR) and checks the exit code, the message
and that nothing is written outside ``--out``: labels written as floats, text or missing;
missing and infinite features; regressors in every format; hostile skops files as the model
and as the shadow recipe; unnamed ONNX inputs meeting reordered columns and row ids; float32
probabilities; interrupted runs; and fuzzed CSV files (hypothesis: delimiters, quoting,
encodings, decimal marks, how the labels are written, missing cells).
"""

import argparse
import csv
import tempfile
import warnings
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression

from sklearn_mace.cli import build_parser, main
from tests.report.model.test_model_loading import _hostile, _run_isolated, _tree

sio = pytest.importorskip("skops.io")
skl2onnx = pytest.importorskip("skl2onnx")
pytest.importorskip("onnxruntime")
N_MEMBERS = 89


@pytest.fixture(scope="module")
def files(wine, tmp_path_factory):
    """The wine forest (trained on the members) as skops and ONNX (no ZipMap: the classes
    come from the labels), a linear regressor in three formats, and the tables."""
    frame, X, y = wine
    folder = tmp_path_factory.mktemp("models")
    forest = RandomForestClassifier(30, random_state=0).fit(X[:N_MEMBERS], y[:N_MEMBERS])
    sio.dump(forest, folder / "forest.skops")
    onnx = skl2onnx.to_onnx(forest, X[:1], options={"zipmap": False})
    (folder / "forest.onnx").write_bytes(onnx.SerializeToString())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linear = LinearRegression().fit(X, y.astype(float))
    sio.dump(linear, folder / "linear.skops")
    joblib.dump(linear, folder / "linear.joblib")
    (folder / "linear.onnx").write_bytes(skl2onnx.to_onnx(linear, X[:1]).SerializeToString())
    members, non_members = frame[:N_MEMBERS], frame[N_MEMBERS:]
    members.to_csv(folder / "members.csv", index=False)
    non_members.to_csv(folder / "non-members.csv", index=False)
    return folder, members, non_members


def _run(
    capsys,
    folder,
    out,
    *extra,
    model="forest.skops",
    members="members.csv",
    non_members="non-members.csv",
):
    argv = ["audit-model", "--model", folder / model, "--members", folder / members]
    argv += ["--non-members", folder / non_members, "--label", "target", "--out", out]
    try:
        code = main([str(a) for a in [*argv, "--quiet", *extra]])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _variant(folder, name, frame):
    frame.to_csv(folder / name, index=False)
    return name


# ------------------------------------------------------------------ options
def test_every_option_has_help_text():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for action in commands.choices["audit-model"]._actions:
        assert action.help and action.help != argparse.SUPPRESS, action.dest


def test_the_model_demo_refuses_the_new_options(tmp_path, capsys):
    for flag in ("--drop-unmatched-labels", "--allow-missing", "--keep-id-columns"):
        code, text = _run_demo(capsys, tmp_path, flag)
        assert code == 2 and f"{flag} need input files" in text


def _run_demo(capsys, tmp_path, *extra):
    try:
        code = main(["audit-model", "--out", str(tmp_path / "o"), *extra])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# ------------------------------------------------------------------ labels by value
@pytest.mark.parametrize("model", ["forest.skops", "forest.onnx"])
def test_float_labels_give_the_forest_its_accuracy_not_a_green_card(files, tmp_path, capsys, model):
    folder, members, non_members = files
    as_float = _variant(folder, "m-float.csv", members.astype({"target": float}))
    non_float = _variant(folder, "n-float.csv", non_members.astype({"target": float}))
    code, text = _run(
        capsys, folder, tmp_path / "out", model=model, members=as_float, non_members=non_float
    )
    assert code == 0, text
    fmt = model.split(".")[1]
    # fully grown trees on their own training rows; before: 0.000 and 0.000, "no leak"
    assert f"'forest' ({fmt}): train accuracy 1.000" in text
    assert "not among the model's classes" not in text


@pytest.mark.parametrize(
    "change, fragments",
    [
        (
            lambda f: f.assign(target=f["target"].map({0: "a", 1: "b", 2: "c"})),
            ["'target'", "b (", "a (", "c (", "rows"],
        ),
        (lambda f: f.assign(target=f["target"].where(f.index != 3)), ["1 missing label"]),
        (lambda f: f.assign(target=f["target"].replace({2: 7})), ["7 (", "rows"]),
    ],
    ids=["text", "nan", "unseen"],
)
def test_label_mismatches_exit_2_naming_column_values_and_rows(
    files, tmp_path, capsys, change, fragments
):
    folder, members, _ = files
    name = _variant(folder, "m-bad.csv", change(members.copy()))
    out = tmp_path / "out"
    code, text = _run(capsys, folder, out, members=name)
    assert code == 2, text
    assert text.startswith("sklearn-mace audit-model: error: Model 'forest', members table:")
    for fragment in [*fragments, "--drop-unmatched-labels"]:
        assert fragment in text, (fragment, text)
    assert not out.exists()


def test_unmatched_labels_can_be_dropped_on_request(files, tmp_path, capsys):
    folder, members, _ = files
    name = _variant(
        folder, "m-nan.csv", members.assign(target=members["target"].where(members.index != 3))
    )
    code, text = _run(capsys, folder, tmp_path / "out", "--drop-unmatched-labels", members=name)
    assert code == 0, text
    assert f"audit-model: {N_MEMBERS - 1} members" in text
    assert f"1 of {N_MEMBERS} records dropped" in text
    assert "1 of" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


# ------------------------------------------------------------------ features
def test_missing_and_infinite_features_exit_2_naming_the_column(files, tmp_path, capsys):
    folder, members, _ = files
    nan = _variant(
        folder, "m-nanx.csv", members.assign(alcohol=members["alcohol"].where(members.index != 5))
    )
    code, text = _run(capsys, folder, tmp_path / "a", model="forest.onnx", members=nan)
    assert code == 2 and "'alcohol' of the members table has 1 missing" in text
    assert "--allow-missing" in text
    inf = members.copy()
    inf.loc[5, "alcohol"] = np.inf
    name = _variant(folder, "m-inf.csv", inf)
    code, text = _run(capsys, folder, tmp_path / "b", "--allow-missing", members=name)
    assert code == 2 and "'alcohol' of the members table has 1 infinite" in text
    # the forest's ONNX graph sends a missing value down a branch: accepted on request
    code, text = _run(
        capsys, folder, tmp_path / "c", "--allow-missing", model="forest.onnx", members=nan
    )
    assert code == 0, text


@pytest.mark.parametrize("model", ["linear.skops", "linear.onnx", "linear.joblib"])
def test_regressors_are_refused_in_every_format(files, tmp_path, capsys, model):
    folder = files[0]
    code, text = _run(capsys, folder, tmp_path / "out", "--trust-pickle", model=model)
    assert code == 2 and ("not a classifier" in text or "is a regressor" in text), text


@pytest.mark.parametrize("kind", ["exec chain", "os.system", "custom class"])
def test_hostile_skops_files_run_nothing_as_model_or_recipe(wine, files, tmp_path, capsys, kind):
    folder = files[0]
    marker = tmp_path / "marker"
    model, refused = _hostile(kind, marker, wine)
    sio.dump(model, tmp_path / "hostile.skops")
    code, text = _run(
        capsys,
        tmp_path,
        tmp_path / "o1",
        model="hostile.skops",
        members=folder / "members.csv",
        non_members=folder / "non-members.csv",
    )
    assert code == 2 and refused in text and not marker.exists()
    code, text = _run(
        capsys,
        folder,
        tmp_path / "o2",
        "--shadow-estimator",
        tmp_path / "hostile.skops",
        "--population",
        folder / _variant(folder, "population.csv", files[2][:40]),
    )
    assert code == 2 and refused in text and not marker.exists()


def test_unnamed_onnx_inputs_meet_reordered_columns_and_row_ids(files, tmp_path, capsys):
    folder, members, non_members = files
    reordered = _variant(folder, "n-rev.csv", non_members[list(non_members.columns[::-1])])
    code, text = _run(capsys, folder, tmp_path / "a", model="forest.onnx", non_members=reordered)
    assert code == 0 and "reads its inputs by position" in text, text
    m_id = _variant(folder, "m-id.csv", members.assign(row=np.arange(N_MEMBERS)))
    n_id = _variant(
        folder,
        "n-id.csv",
        non_members.assign(row=np.arange(N_MEMBERS, N_MEMBERS + len(non_members))),
    )
    code, text = _run(
        capsys, folder, tmp_path / "b", model="forest.onnx", members=m_id, non_members=n_id
    )
    assert code == 0 and "['row'] look like row ids" in text, text
    code, text = _run(
        capsys,
        folder,
        tmp_path / "c",
        "--keep-id-columns",
        model="forest.onnx",
        members=m_id,
        non_members=n_id,
    )
    assert code == 2 and "takes 13 features but the tables give 14" in text
    code, text = _run(
        capsys,
        folder,
        tmp_path / "d",
        "--id-columns",
        "rowid",
        model="forest.onnx",
        members=m_id,
        non_members=n_id,
    )
    assert code == 2 and "--id-columns names ['rowid']" in text


def test_records_hold_losses_and_confidences_in_range(files, tmp_path, capsys):
    """float32 ONNX probabilities overshoot 1 by rounding: clipped before any loss."""
    folder = files[0]
    code, text = _run(capsys, folder, tmp_path / "out", model="forest.onnx")
    assert code == 0, text
    records = pd.read_csv(tmp_path / "out" / "records.csv")
    assert (records["loss"] >= 0).all()
    assert (records["true_label_confidence"] <= 1).all()


# ------------------------------------------------------------------ interruptions, writes
def test_ctrl_c_ends_with_one_line_and_130(files, tmp_path, capsys, monkeypatch):
    folder = files[0]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("sklearn_mace.report._kinds.model._io.AuditedModel.log_proba", interrupted)
    code, text = _run(capsys, folder, tmp_path / "out")
    assert code == 130
    assert [line for line in text.splitlines() if line.strip()] == [
        "sklearn-mace audit-model: interrupted; no new report was written (a previous report "
        "in the output folder is left as it was)."
    ]
    assert not (tmp_path / "out").exists()


def test_nothing_is_written_outside_out(files, tmp_path):
    """The whole command, an ONNX model included, in a child process with a fake HOME."""
    folder = files[0]
    code = (
        "import sys; from sklearn_mace.cli import main; "
        f"sys.exit(main(['audit-model', '--model', {str(folder / 'forest.onnx')!r}, "
        f"'--members', {str(folder / 'members.csv')!r}, '--non-members', "
        f"{str(folder / 'non-members.csv')!r}, '--label', 'target', '--out', 'out', "
        "'--quiet']))"
    )
    # matplotlib's font cache (built on its first import) goes to a temporary folder the
    # CLI removes at exit: a fresh HOME sees no write either
    written = {name for name, _ in _run_isolated(tmp_path, code)}
    assert "work/out/report.html" in written
    assert {name for name in written if not name.startswith("work/out")} == set()


# ------------------------------------------------------------------ fuzzed CSV files
_BASE = tempfile.gettempdir()


@st.composite
def _csv_style(draw):
    sep = draw(st.sampled_from([",", ";", "\t", "|"]))
    return {
        "sep": sep,
        "decimal": draw(st.sampled_from([".", ","])) if sep == ";" else ".",
        "quoting": draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC])),
        "encoding": draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"])),
        "labels": draw(st.sampled_from(["int", "float", "text", "padded"])),
        "missing": draw(st.sampled_from([0, 0, 1, 3])),
    }


_LABELS = {
    "int": lambda y: y,
    "float": lambda y: y.astype(float),
    "text": lambda y: y.astype(str),
    "padded": lambda y: y.map(lambda v: f" {v}.0 "),
}


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(style=_csv_style())
def test_fuzzed_csv_files_give_the_forest_its_accuracy_or_a_clear_error(files, capsys, style):
    folder, members, non_members = files
    with tempfile.TemporaryDirectory(dir=_BASE) as tmp, pytest.MonkeyPatch.context() as mp:
        root = Path(tmp)
        for sub in ("tmp", "work"):
            (root / sub).mkdir()
        mp.setattr(tempfile, "tempdir", str(root / "tmp"))
        mp.chdir(root / "work")
        # The CLI's one-time set-up of its process (matplotlib's and CUDA's caches in
        # temporary folders) is the child-process test's subject; here it is done already,
        # whichever test ran first in this process (pytest-xdist runs them in any order).
        import matplotlib  # noqa: F401

        mp.setenv("CUDA_CACHE_PATH", _BASE)
        for name, frame in (("members", members), ("non-members", non_members)):
            frame = frame.assign(target=_LABELS[style["labels"]](frame["target"]))
            if name == "members" and style["missing"]:
                frame = frame.astype({"magnesium": float})
                frame.loc[frame.index[: style["missing"]], "magnesium"] = np.nan
            frame.to_csv(
                f"{name}.csv",
                index=False,
                sep=style["sep"],
                decimal=style["decimal"],
                quoting=style["quoting"],
                encoding=style["encoding"],
            )
        before = _tree(root)
        argv = [
            "audit-model",
            "--model",
            str(folder / "forest.skops"),
            "--members",
            "members.csv",
            "--non-members",
            "non-members.csv",
            "--label",
            "target",
            "--out",
            "out",
            "--quiet",
        ]
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        captured = capsys.readouterr()
        text = captured.out + captured.err
        if style["missing"]:
            assert code == 2, text
            assert f"'magnesium' of the members table has {style['missing']} missing" in text
        else:
            assert code == 0, (style, text)
            assert "'forest' (skops): train accuracy 1.000" in text
        assert "Traceback" not in text
        outside = {n for n, _ in _tree(root) - before if not n.startswith("work/out")}
        assert outside == set(), outside
