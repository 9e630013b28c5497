"""`sklearn-mace audit-model`: the embedded demo, ONNX and skops models made here, safe
loading (pickle only when trusted), ONNX outputs against closed forms, and clear errors."""

import contextlib
import io
import operator

import joblib
import numpy as np
import pandas as pd
import pytest
from scipy.special import log_softmax
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, audit_model, load_model
from sklearn_mace.report._kinds.model._audit import (
    LIRA_NAME,
    MACE_BAYES,
    MACE_BEST,
    RMIA_NAME,
    SHADOW_NAME,
)

onnxruntime = pytest.importorskip("onnxruntime")
sio = pytest.importorskip("skops.io")
skl2onnx = pytest.importorskip("skl2onnx")
pytest.importorskip("matplotlib")

LABEL = "digit"


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    """The models here are tiny: BLAS/OpenMP threads only add start-up and spin-wait time on
    the 2 shared cores (a 80-row logistic regression: 0.01 s on one thread, 0.3 s on many)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def _tables(n_members=150, n_non=150, n_pop=300, seed=0):
    frame = load_digits(as_frame=True).frame.rename(columns={"target": LABEL})
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = np.cumsum([n_members, n_non, n_pop])
    parts = np.split(order, cut)[:3]
    return [frame.iloc[p].reset_index(drop=True) for p in parts]


def _xy(frame):
    return frame.drop(columns=LABEL).to_numpy(dtype=np.float32), frame[LABEL].to_numpy()


def _save_onnx(model, X, path, zipmap=True):
    options = None if zipmap else {"zipmap": False}
    path.write_bytes(skl2onnx.to_onnx(model, X[:1], options=options).SerializeToString())
    return path


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Tables and models saved as the CLI reads them."""
    root = tmp_path_factory.mktemp("audit_model")
    members, non_members, population = _tables()
    paths = {}
    for name, frame in (
        ("members", members),
        ("non-members", non_members),
        ("population", population),
    ):
        paths[name] = root / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    X, y = _xy(members)
    # fully grown trees: members are fitted almost perfectly, hold-out rows are not
    forest = RandomForestClassifier(30, random_state=0).fit(X, y)
    paths["forest"] = _save_onnx(forest, X, root / "forest.onnx")
    linear = make_pipeline(StandardScaler(), LogisticRegression(C=0.01, max_iter=500)).fit(X, y)
    paths["linear"] = root / "linear.skops"
    sio.dump(linear, paths["linear"])
    paths["pickle"] = root / "linear.joblib"
    joblib.dump(linear, paths["pickle"])
    return {
        "root": root,
        "paths": paths,
        "forest": forest,
        "linear": linear,
        "members": members,
        "non_members": non_members,
    }


def _run(argv):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    return printed.getvalue()


def _base_args(paths, out, *models):
    return [
        "audit-model",
        "--model",
        *models,
        "--members",
        str(paths["members"]),
        "--non-members",
        str(paths["non-members"]),
        "--label",
        LABEL,
        "--out",
        str(out),
        "--quiet",
    ]


# ----------------------------------------------------------------------------- loading
@pytest.mark.parametrize("zipmap", [True, False])
def test_onnx_probabilities_match_the_scikit_learn_model(workspace, tmp_path, zipmap):
    forest, members = workspace["forest"], workspace["members"]
    X, _ = _xy(members)
    path = _save_onnx(forest, X, tmp_path / "forest.onnx", zipmap=zipmap)
    model = load_model(path)
    frame = members.drop(columns=LABEL)
    logp = model.log_proba(frame)
    model.resolve_classes(logp.shape[1], members[LABEL].to_numpy())
    np.testing.assert_array_equal(model.classes_, forest.classes_)
    # onnxruntime averages the trees in float32 (eps 1.2e-7 per operation, 30 trees)
    np.testing.assert_allclose(np.exp(logp), forest.predict_proba(X), atol=1e-5)


def _linear_onnx(path, W, b, output):
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], [output]),
        ],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, W.shape[0]])],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, [None, W.shape[1]])],
        [numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")],
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    path.write_bytes(onnx_model.SerializeToString())
    return path


@pytest.mark.parametrize("n_outputs", [3, 1])
def test_onnx_raw_logits_become_log_softmax(tmp_path, n_outputs):
    """A torch-style export returns logits: log-probabilities are their log-softmax (one
    logit: the log-sigmoid pair), computed here in float64 from the same weights."""
    rng = np.random.default_rng(0)
    W = (3 * rng.standard_normal((4, n_outputs))).astype(np.float32)
    b = rng.standard_normal(n_outputs).astype(np.float32)
    model = load_model(_linear_onnx(tmp_path / "net.onnx", W, b, "logits"))
    frame = pd.DataFrame(rng.standard_normal((50, 4)), columns=list("abcd"))
    z = frame.to_numpy(dtype=np.float32).astype(float) @ W + b
    expected = (
        log_softmax(z, axis=1)
        if n_outputs > 1
        else log_softmax(np.column_stack([np.zeros(50), z[:, 0]]), axis=1)
    )
    # float32 matrix product in onnxruntime: logits of size ~10 carry ~1e-6 error
    np.testing.assert_allclose(model.log_proba(frame), expected, atol=1e-4)


def test_pickle_needs_trust_pickle(workspace, tmp_path, capsys):
    paths = workspace["paths"]
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        main(_base_args(paths, out, str(paths["pickle"])))
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Refusing to load" in err and "runs code" in err and "--trust-pickle" in err
    assert "Traceback" not in err
    assert not out.exists()
    printed = _run(_base_args(paths, out, str(paths["pickle"])) + ["--trust-pickle"])
    assert "'linear' (pickle)" in printed
    assert (out / "report.html").exists()


def test_help_says_that_a_pickle_runs_code(capsys):
    with pytest.raises(SystemExit):
        main(["audit-model", "--help"])
    assert "RUNS CODE" in capsys.readouterr().out


def test_skops_with_untrusted_types_is_refused(workspace, tmp_path, capsys):
    X, y = _xy(workspace["members"])
    risky = make_pipeline(FunctionTransformer(operator.neg), LogisticRegression(max_iter=50))
    with pytest.warns(Warning):  # the iteration cap: this model is never used
        risky.fit(X, y)
    sio.dump(risky, tmp_path / "risky.skops")
    out = tmp_path / "out"
    with pytest.raises(SystemExit):
        main(_base_args(workspace["paths"], out, str(tmp_path / "risky.skops")))
    err = capsys.readouterr().err
    assert "Refusing to load the skops model" in err and "_operator.neg" in err
    assert not out.exists()


def test_missing_packages_name_the_extra(workspace, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)
    with pytest.raises(AuditInputError, match=r"sklearn-mace\[models\]"):
        load_model(workspace["paths"]["forest"])


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "change, message",
    [
        ("label", "has no label column 'species'"),
        ("extension", "Unknown model format"),
        ("columns", "Mismatched columns"),
        ("width", "takes 64 features but the tables give 3"),
        ("partial", "needs --members"),
    ],
)
def test_bad_inputs_give_clear_errors(workspace, tmp_path, capsys, change, message):
    paths = dict(workspace["paths"])
    out = tmp_path / "out"
    argv = _base_args(paths, out, str(paths["forest"]))
    if change == "label":
        argv[argv.index("--label") + 1] = "species"
    elif change == "extension":
        (tmp_path / "model.txt").write_text("not a model")
        argv[2] = str(tmp_path / "model.txt")
    elif change == "columns":
        frame = pd.read_csv(paths["non-members"]).drop(columns="pixel_0_0")
        frame.to_csv(tmp_path / "non.csv", index=False)
        argv[argv.index("--non-members") + 1] = str(tmp_path / "non.csv")
    elif change == "width":
        argv += ["--columns", "pixel_0_1,pixel_0_2,pixel_0_3"]
    else:
        argv = ["audit-model", "--model", str(paths["forest"]), "--out", str(out)]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err
    assert not out.exists()


# ----------------------------------------------------------------------------- the audit
@pytest.fixture(scope="module")
def audited(workspace):
    """One CLI run: the ONNX forest and the skops linear model, with a population."""
    root, paths = workspace["root"], workspace["paths"]
    before = set(root.rglob("*"))
    out = root / "report"
    printed = _run(
        _base_args(paths, out, f"forest={paths['forest']}", f"linear={paths['linear']}")
        + ["--population", str(paths["population"])]
    )
    return {"out": out, "printed": printed, "new": set(root.rglob("*")) - before}


def test_cli_writes_the_report_only_under_out(audited):
    out = audited["out"]
    for name in ("report.html", "summary.csv", "records.csv"):
        assert (out / name).stat().st_size > 0
    figures = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert figures == [
        f"{kind}_{n}_{model}.png"
        for kind in ("loss", "risk", "roc")
        for n, model in enumerate(("forest", "linear"), 1)
    ]
    assert all(out in p.parents or p == out for p in audited["new"])
    comparisons = pd.read_csv(out / "comparisons.csv")  # two models: their paired tests
    assert set(comparisons["analysis"]) == {MACE_BAYES.name}
    assert (comparisons[["subject_a", "subject_b"]].to_numpy() == [["forest", "linear"]]).all()
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "<script" not in html


def test_summary_rows_and_metrics(audited):
    summary = pd.read_csv(audited["out"] / "summary.csv")
    per_model = summary.groupby("subject")["analysis"].apply(list).to_dict()
    base = ["BTTA (generalization gap)", "CBTTA (best partition)", MACE_BAYES.name, MACE_BEST.name]
    # the linear model is its own shadow recipe; the ONNX forest has none (a note says so)
    assert per_model["linear"] == [*base, SHADOW_NAME, LIRA_NAME, RMIA_NAME]
    assert per_model["forest"] == base
    assert "carries no training procedure" in audited["printed"]
    # one correction per model over all of its claims
    levels = summary.groupby("subject")["claim_confidence"].first()
    assert levels["linear"] == pytest.approx(1 - 0.05 / 7)
    assert levels["forest"] == pytest.approx(1 - 0.05 / 4)
    for column in ("auc", "tpr_at_1pct_fpr", "tpr_at_0.1pct_fpr"):
        assert summary[column].between(0, 1).all()
    # the fully grown forest fits its members far better than hold-out rows: its loss
    # separates them (measured AUC ≈ 0.9); the regularised linear model's barely does
    mace = summary[summary["analysis"] == MACE_BAYES.name].set_index("subject")
    assert mace.loc["forest", "auc"] > 0.8
    assert mace.loc["forest", "auc"] > mace.loc["linear", "auc"] + 0.2
    assert set(summary["format"]) == {"onnx", "skops"}


def test_without_a_population_a_note_says_what_did_not_run(workspace, tmp_path):
    """Without --population the shadow-model attack, LiRA and RMIA silently vanished (4
    claims instead of 7): a note, printed with the summary, names them and the parameter."""
    paths = workspace["paths"]
    out = tmp_path / "out"
    printed = _run(_base_args(paths, out, f"forest={paths['forest']}", f"linear={paths['linear']}"))
    summary = pd.read_csv(out / "summary.csv")
    base = ["BTTA (generalization gap)", "CBTTA (best partition)", MACE_BAYES.name, MACE_BEST.name]
    assert summary.groupby("subject")["analysis"].apply(list).to_dict() == {
        "forest": base,
        "linear": base,
    }
    text = " ".join(printed.split())
    assert (
        f"No population table (--population): {SHADOW_NAME}, "
        f"{LIRA_NAME} and {RMIA_NAME} did not run, so each model has 4 claims instead of up "
        "to 7." in text
    )
    # the ONNX forest carries no recipe: a population alone would not run them on it
    assert "'forest' would also need a training recipe (--shadow-estimator)" in text
    assert "'linear' would also" not in text
    page = " ".join((out / "report.html").read_text(encoding="utf-8").split())
    assert "No population table (--population)" in page


def test_with_a_population_there_is_no_population_note(audited):
    assert "No population table" not in audited["printed"]


def test_records_have_the_common_columns_and_rank_members_first(audited):
    records = pd.read_csv(audited["out"] / "records.csv")
    assert len(records) == 2 * 300
    # the same first columns as the synthetic-data audit's records.csv (tests/test_cli.py)
    core = ["subject", "rank", "source", "row", "member", "risk_estimate"]
    assert list(records.columns[:8]) == [*core, "posterior_points_to", "exposed"]
    assert {LABEL, "loss"} <= set(records.columns)
    for _, mine in records.groupby("subject"):
        assert mine["rank"].tolist() == list(range(1, 301))
        assert mine["member"].tolist() == [1] * 150 + [0] * 150
        score = mine[f"score: {MACE_BAYES.name}"]
        side = np.where(score > 0, "member", "non-member")
        assert (mine["posterior_points_to"] == side).all()
    assert records["risk_estimate"].between(0, 1).all()
    assert (records["loss"] >= 0).all()


def _check_demo(out, printed):
    for name in (
        "report.html",
        "summary.csv",
        "records.csv",
        "models/overfit.onnx",
        "models/regularised.skops",
        "models/overfit-recipe.skops",
        "inputs/population.csv",
    ):
        assert (out / name).exists(), name
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["subject"]) == {"overfit", "regularised"}
    # the models' files as the report folder holds them (not the staging folder, gone)
    paths = summary.drop_duplicates("subject").set_index("subject")["path"]
    assert paths.to_dict() == {
        "overfit": "models/overfit.onnx",
        "regularised": "models/regularised.skops",
    }
    assert all((out / path).exists() for path in paths)
    assert "the same from files: sklearn-mace audit-model" in printed
    for analysis in (MACE_BAYES.name, SHADOW_NAME, LIRA_NAME, RMIA_NAME):
        rows = summary[summary["analysis"] == analysis].set_index("subject")
        assert rows.loc["overfit", "auc"] > rows.loc["regularised", "auc"], analysis
    return summary.set_index(["subject", "analysis"])


def test_reduced_demo_contrasts_the_two_models(tmp_path):
    """The demo's code path on 150 members, 150 hold-out and 300 population rows: the
    command line's path, with the kind's demo replaced by a smaller copy."""
    from dataclasses import replace

    from sklearn_mace.cli import build_parser, run_kind
    from sklearn_mace.report._kinds.model._demo import audit_demo

    def small_demo(args, stage):
        return audit_demo(stage, verbose=False, sizes=(150, 150, 300))

    args = build_parser().parse_args(["audit-model", "--out", str(tmp_path / "demo"), "--quiet"])
    kind = replace(args.kind, demo=replace(args.kind.demo, run=small_demo))

    # a user's own figure and file: the staged writer replaces only what its manifest lists
    # (issue #25: the user's PNGs in figures/ were deleted) and leaves these alone
    (tmp_path / "demo" / "figures").mkdir(parents=True)
    (tmp_path / "demo" / "figures" / "mine.png").write_bytes(b"mine")
    (tmp_path / "demo" / "mine.txt").write_text("keep")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        run_kind(kind, args)
    assert (tmp_path / "demo" / "figures" / "mine.png").read_bytes() == b"mine"
    assert (tmp_path / "demo" / "mine.txt").read_text() == "keep"
    summary = _check_demo(tmp_path / "demo", printed.getvalue())
    # the fully grown forest memorizes: its loss separates members (measured AUC 0.78)
    assert summary.loc[("overfit", MACE_BAYES.name), "auc"] > 0.65


@pytest.mark.slow
def test_embedded_demo_from_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    printed = _run(["audit-model", "--quiet"])
    assert {p.name for p in tmp_path.iterdir()} == {"mace-output"}
    summary = _check_demo(tmp_path / "mace-output" / "audit-model", printed)
    # the reference-model attacks are the strongest at low FPR on the memorizing forest
    # (measured at 1 % FPR: RMIA 0.550, LiRA 0.398, the shadow-model attack 0.135, BTTA 0)
    assert summary.loc[("overfit", LIRA_NAME), "tpr_at_1pct_fpr"] > 0.1
    assert summary.loc[("overfit", RMIA_NAME), "tpr_at_1pct_fpr"] > 0.3


def test_results_do_not_depend_on_n_jobs(workspace):
    """Shadow models (shadow-model attack, LiRA) draw their seeds up front: the same scores
    for any number of joblib workers."""
    members, non_members, population = _tables(40, 40, 80, seed=1)
    linear = make_pipeline(StandardScaler(), LogisticRegression(C=0.01, max_iter=500))
    model = load_model(workspace["paths"]["linear"], name="linear")
    model.estimator = linear.fit(*_xy(members))  # a cheap model trained on these members
    runs = []
    for n_jobs in (1, 2):
        # threads: the same joblib tasks and seeds without process start-up (torch imports);
        # tests/attacks/test_lira.py and the shadow tests cover process back-ends
        with joblib.parallel_config(backend="threading"):
            runs.append(
                audit_model(
                    model,
                    members,
                    non_members,
                    label=LABEL,
                    population=population,
                    n_jobs=n_jobs,
                    random_state=0,
                    verbose=False,
                )
            )
    assert LIRA_NAME in runs[0].subjects[0].scores
    pd.testing.assert_frame_equal(runs[0].summary, runs[1].summary)
    pd.testing.assert_frame_equal(runs[0].records, runs[1].records)


# ----------------------------------------------------------------------------- ground truth
def test_memorizing_forest_leakage_is_certified(audited):
    summary = pd.read_csv(audited["out"] / "summary.csv").set_index(["subject", "analysis"])
    # the fully grown forest fits members far better than hold-out rows (loss AUC ≈ 0.9),
    # so its leakage is real; the certified bounds must detect it at 150 + 150 records
    mace = summary.loc[("forest", MACE_BAYES.name)]
    assert mace["epsilon_lower_bound"] > 0.5
    assert mace["advantage_lower_bound"] > 0.2
    assert mace["advantage_estimate"] >= mace["advantage_lower_bound"] - 0.1
    page = (audited["out"] / "report.html").read_text(encoding="utf-8")
    forest = page.split('<div class="card ')[1]
    assert "<b>forest</b>" in forest and "most exposed member: row" in forest
