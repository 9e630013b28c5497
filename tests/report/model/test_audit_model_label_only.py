"""``audit-model`` on models that give labels only (issue #29, item 3).

An ONNX graph with a label output and no probability output, or ``--label-only`` on any
model: the label-only attack (Choquette-Choo et al. 2021) is the model's one claim, certified
through the engine like every analysis, and a note names what was skipped.
"""

import contextlib
import io
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, AuditInputWarning, audit_model, load_model
from sklearn_mace.report._kinds.model._audit import LABEL_ONLY_ANALYSES, MACE_BAYES
from sklearn_mace.report._verdict import verdict

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
skl2onnx = pytest.importorskip("skl2onnx")
pytest.importorskip("matplotlib")

LABEL = "digit"
LABEL_ONLY = LABEL_ONLY_ANALYSES[0].name
N_TARGETS = 700  # members and as many non-members; the other 397 digits train the null model


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def _split():
    frame = load_digits(as_frame=True).frame.rename(columns={"target": LABEL})
    order = np.random.default_rng(0).permutation(len(frame))
    members = frame.iloc[order[:N_TARGETS]].reset_index(drop=True)
    non_members = frame.iloc[order[N_TARGETS : 2 * N_TARGETS]].reset_index(drop=True)
    others = frame.iloc[order[2 * N_TARGETS :]].reset_index(drop=True)
    return members, non_members, others


def _xy(frame):
    return frame.drop(columns=LABEL).to_numpy(dtype=np.float32), frame[LABEL].to_numpy()


def _labels_only_onnx(model, X, path):
    """skl2onnx's export with its probability output removed from the graph."""
    graph = skl2onnx.to_onnx(model, X[:1], options={"zipmap": False})
    kept = [o for o in graph.graph.output if o.name == "label"]
    assert len(kept) == 1 and len(graph.graph.output) == 2
    del graph.graph.output[:]
    graph.graph.output.extend(kept)
    onnx.checker.check_model(graph)
    path.write_bytes(graph.SerializeToString())
    return path


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("label_only")
    members, non_members, others = _split()
    paths = {}
    for name, frame in (("members", members), ("non-members", non_members)):
        paths[name] = root / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    X, y = _xy(members)
    # fully grown trees memorise their members: the demo's overfit forest
    forest = RandomForestClassifier(100, random_state=0).fit(X, y)
    paths["forest"] = _labels_only_onnx(forest, X, root / "forest.onnx")
    Xo, yo = _xy(others)  # the null model: no target trained it
    null = RandomForestClassifier(100, random_state=0).fit(Xo, yo)
    paths["null"] = _labels_only_onnx(null, Xo, root / "null.onnx")
    tables = dict(members=members, non_members=non_members, others=others)
    return {"root": root, "paths": paths, "forest": forest, "null": null, **tables}


def _argv(paths, out, *models):
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


def test_an_onnx_graph_without_probabilities_loads_as_label_only(workspace):
    model = load_model(workspace["paths"]["forest"])
    assert model.label_only
    assert model.classes_.tolist() == list(range(10))  # from the classifier node's labels
    X, y = _xy(workspace["members"])
    frame = workspace["members"].drop(columns=LABEL)
    assert (model.predict(frame) == workspace["forest"].predict(X)).mean() > 0.99
    with pytest.raises(AuditInputError, match="no float or ZipMap output named"):
        load_model(workspace["paths"]["forest"], probability_output="probabilities")


def test_cli_certifies_leakage_from_labels_alone(workspace):
    """The overfit forest, exported with its label output only, audited end to end."""
    root, paths = workspace["root"], workspace["paths"]
    before = set(root.rglob("*"))
    out = root / "report"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(_argv(paths, out, f"forest={paths['forest']}")) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["analysis"].tolist() == [LABEL_ONLY]
    assert (summary["n_claims"] == 1).all()  # K = 1, fixed before the attack ran
    assert summary["status"].tolist() == ["ok"]
    # certified from labels alone (measured ε ≥ 0.665; 0.42 with the seeds of another name)
    assert summary["epsilon_lower_bound"].iloc[0] > 0
    for name in ("report.html", "summary.csv", "records.csv"):
        assert (out / name).stat().st_size > 0
    assert not list((out / "figures").glob("loss_*.png"))  # no loss without probabilities
    records = pd.read_csv(out / "records.csv")
    assert {"predicted_label", "correct", f"score: {LABEL_ONLY}"} <= set(records.columns)
    html = (out / "report.html").read_text()
    assert "label-only attack" in html and "Skipped: CBTTA and MACE" in html
    assert all(out in p.parents or p == out for p in set(root.rglob("*")) - before)


def test_label_only_flag_on_a_scikit_learn_model(workspace):
    """--label-only / label_only=True: the same one claim, from ``predict`` alone; the
    scores depend on nothing but the model's labels (not on the membership labels)."""
    forest = workspace["forest"]
    members, non_members = workspace["members"], workspace["non_members"]
    result = audit_model(
        {"forest": forest}, members, non_members, label=LABEL, label_only=True, verbose=False
    )
    summary = result.summary
    assert summary["analysis"].tolist() == [LABEL_ONLY]
    assert summary["epsilon_lower_bound"].iloc[0] > 0  # measured 0.665
    assert verdict(result, result.subjects[0]) == "leak"  # red
    assert any("label_only=True" in note for note in result.notes)
    # swapping the two tables swaps the membership labels but not a single score
    swapped = audit_model(
        {"forest": forest}, non_members, members, label=LABEL, label_only=True, verbose=False
    )
    scores = result.subjects[0].scores[LABEL_ONLY]
    again = swapped.subjects[0].scores[LABEL_ONLY]
    n = len(members)
    assert np.array_equal(scores[:n], again[n:]) and np.array_equal(scores[n:], again[:n])


def test_label_only_on_the_command_line(workspace, tmp_path):
    import skops.io as sio

    X, y = _xy(workspace["members"])
    linear = LogisticRegression(max_iter=300).fit(X / 16, y)
    sio.dump(linear, tmp_path / "linear.skops")
    out = tmp_path / "out"
    argv = _argv(workspace["paths"], out, str(tmp_path / "linear.skops")) + ["--label-only"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    assert pd.read_csv(out / "summary.csv")["analysis"].tolist() == [LABEL_ONLY]


def test_a_label_only_model_beside_a_full_one_keeps_its_own_claims(workspace):
    """Each model's K is its own: 1 for the label-only graph, 4 for the forest itself."""
    labels = load_model(workspace["paths"]["forest"], name="labels")
    result = audit_model(
        {"labels": labels, "full": workspace["forest"]},
        workspace["members"],
        workspace["non_members"],
        label=LABEL,
        verbose=False,
    )
    summary = result.summary.set_index("subject")
    assert summary.loc["labels", "analysis"] == LABEL_ONLY
    assert (summary.loc["full", "n_claims"] == 4).all()
    assert MACE_BAYES.name in summary.loc["full", "analysis"].tolist()
    assert sum("No population table" in note for note in result.notes) == 1


def test_a_null_model_is_not_red(workspace):
    """A forest trained on other rows than the targets: truth zero, so no certified leak."""
    model = load_model(workspace["paths"]["null"], name="null")
    result = audit_model(
        {"null": model}, workspace["members"], workspace["non_members"], label=LABEL, verbose=False
    )
    subject = result.subjects[0]
    assert result.summary["analysis"].tolist() == [LABEL_ONLY]
    assert result.summary["epsilon_lower_bound"].iloc[0] == 0
    assert verdict(result, subject) != "leak"  # measured: grey, advantage bounded by 0.101


def test_label_only_must_be_a_bool(workspace):
    with pytest.raises(ValueError, match="label_only must be True or False"):
        audit_model(
            workspace["forest"],
            workspace["members"],
            workspace["non_members"],
            label=LABEL,
            label_only="yes",
            verbose=False,
        )


def test_the_model_demo_refuses_label_only(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["audit-model", "--out", str(tmp_path / "o"), "--label-only"])
    assert info.value.code == 2
    assert "--label-only need input files" in capsys.readouterr().err


def test_a_classifier_without_predict_proba_is_audited_from_its_labels(workspace):
    from sklearn.svm import LinearSVC

    X, y = _xy(workspace["members"])
    svm = LinearSVC(C=0.1, max_iter=2000).fit(X / 16, y)
    assert not hasattr(svm, "predict_proba")
    members, non_members = workspace["members"], workspace["non_members"]
    scaled = [
        f.assign(**{c: f[c] / 16 for c in f.columns if c != LABEL}) for f in (members, non_members)
    ]
    result = audit_model({"svm": svm}, *scaled, label=LABEL, verbose=False)
    assert result.summary["analysis"].tolist() == [LABEL_ONLY]
    assert result.summary["status"].tolist() == ["ok"]
    assert any("it has no predict_proba" in note for note in result.notes)


# ----------------------------------------------------------------------------- null cards
def _null_card(seed, n_features, tail):
    """A tree trained on rows other than the targets: members and non-members are alike to
    it, so the truth is zero. Heavy-tailed (Student-t 1.5) or skewed (log-normal) inputs."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(seed)
    n = 3 * 150
    X = (
        rng.standard_t(1.5, (n, n_features))
        if tail == "t"
        else rng.lognormal(0, 1, (n, n_features))
    )
    y = (X[:, 0] + rng.logistic(size=n) > np.median(X[:, 0])).astype(int)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(n_features)]).assign(**{LABEL: y})
    tree = DecisionTreeClassifier(random_state=seed).fit(X[300:], y[300:])
    with warnings.catch_warnings():  # force_low_accuracy's note, expected here
        warnings.simplefilter("ignore", AuditInputWarning)
        result = _null_audit(tree, frame, seed)
    return verdict(result, result.subjects[0]) == "leak"


def _null_audit(tree, frame, seed):
    return audit_model(
        {"tree": tree},
        frame.iloc[:150],
        frame.iloc[150:300],
        label=LABEL,
        label_only=True,
        random_state=seed,
        force_low_accuracy=True,  # a null model need not beat the majority on the targets
        verbose=False,
    )


def _null_reds(n_cards):
    settings = [(d, tail) for d in (2, 8) for tail in ("t", "lognormal")]
    return sum(_null_card(seed, *settings[seed % len(settings)]) for seed in range(n_cards))


def test_null_cards_are_rarely_red():
    # at most α = 0.05 of null cards are red; 5 of 24 has chance 0.007 under that rate
    assert _null_reds(24) <= 4


@pytest.mark.slow
def test_null_cards_are_red_at_most_alpha_of_the_time():
    # 200 cards at α = 0.05 (measured: 0 of the first 100): more than 17 red has chance 0.013
    assert _null_reds(200) <= 17


def test_with_a_population_the_shadow_attacks_are_skipped_and_said_so(workspace):
    result = audit_model(
        {"forest": workspace["forest"]},
        workspace["members"],
        workspace["non_members"],
        label=LABEL,
        population=workspace["others"],
        label_only=True,
        verbose=False,
    )
    assert result.summary["analysis"].tolist() == [LABEL_ONLY]  # no reference model trained
    (note,) = [n for n in result.notes if "label_only=True" in n]
    assert "LiRA" in note and "RMIA" in note and "CBTTA and MACE" in note
