"""The model audit's shared reference models: trained once, read by the shadow-model
attack, LiRA and RMIA; ``--reference-models K``; the notes on their number, split and cost."""

import contextlib
import io

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

from sklearn_mace.attacks import ShadowModels
from sklearn_mace.cli import main
from sklearn_mace.report import audit_model
from sklearn_mace.report._kinds.model._audit import (
    LIRA_NAME,
    RMIA_NAME,
    RMIA_OFFLINE_NAME,
    SHADOW_NAME,
)

sio = pytest.importorskip("skops.io")
pytest.importorskip("matplotlib")
LABEL = "digit"


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def _tables(n_members=100, n_non=100, n_pop=200, seed=0):
    frame = load_digits(as_frame=True).frame.rename(columns={"target": LABEL})
    order = np.random.default_rng(seed).permutation(len(frame))
    parts = np.split(order, np.cumsum([n_members, n_non, n_pop]))[:3]
    return [frame.iloc[p].reset_index(drop=True) for p in parts]


def _forest(members):
    # fully grown trees memorize their members
    forest = RandomForestClassifier(20, random_state=0)
    return forest.fit(members.drop(columns=LABEL).to_numpy(), members[LABEL].to_numpy())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("reference")
    tables = _tables()
    paths = {}
    for name, frame in zip(("members", "non-members", "population"), tables, strict=True):
        paths[name] = root / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    paths["model"] = root / "forest.skops"
    sio.dump(_forest(tables[0]), paths["model"])
    return root, paths


def _argv(paths, out, *extra):
    argv = ["audit-model", "--model", f"forest={paths['model']}", "--label", LABEL]
    for role in ("members", "non-members", "population"):
        argv += [f"--{role}", str(paths[role])]
    return [*argv, "--out", str(out), "--quiet", *extra]


def test_cli_trains_one_set_of_reference_models_read_by_three_attacks(files, monkeypatch):
    root, paths = files
    fits = []
    original = ShadowModels.fit

    def counting_fit(self, X, y):
        fits.append((self.n_reference_models, self.split, len(X)))
        return original(self, X, y)

    monkeypatch.setattr(ShadowModels, "fit", counting_fit)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(_argv(paths, root / "out", "--reference-models", "4")) == 0
    # one training of 4 models on the 400-record pool (targets, then population)
    assert fits == [(4, "balanced", 400)]
    summary = pd.read_csv(root / "out" / "summary.csv")
    analyses = summary["analysis"].tolist()
    assert analyses[-3:] == [SHADOW_NAME, LIRA_NAME, RMIA_NAME]
    assert any("RMIA" in name for name in analyses)
    assert (summary["status"] == "ok").all()
    rows = summary.set_index("analysis")
    # the memorizing forest, 4 reference models: measured RMIA AUC 0.95, TPR at 1 % FPR
    # 0.39; LiRA with the fixed variance and the forest's probabilities read at their
    # resolution (issue #29): TPR 0.56 (per-record Gaussians from 2 IN and 2 OUT: 0.01)
    assert rows.loc[RMIA_NAME, "auc"] > 0.85
    assert rows.loc[RMIA_NAME, "tpr_at_1pct_fpr"] > 0.2
    assert rows.loc[LIRA_NAME, "tpr_at_1pct_fpr"] > 0.2
    text = printed.getvalue()
    assert "4 reference models" in text and "every record trains exactly 2" in text
    assert "200 targets + 200 population rows" in text and "s of training" in text
    page = (root / "out" / "report.html").read_text(encoding="utf-8")
    assert "4 reference models" in page and "RMIA" in page


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_cli_refuses_bad_reference_model_counts(files, capsys, value):
    root, paths = files
    with pytest.raises(SystemExit) as info:
        main(_argv(paths, root / "bad", "--reference-models", value))
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--reference-models must be an integer >= 1" in err
    assert not (root / "bad").exists()


def test_help_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["audit-model", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--reference-models K" in out and "RMIA" in out


def test_two_reference_models_run_rmia_but_not_lira():
    members, non_members, population = _tables(60, 60, 120, seed=1)
    result = audit_model(
        {"forest": _forest(members)},
        members,
        non_members,
        label=LABEL,
        population=population,
        n_reference_models=2,
        verbose=False,
    )
    summary = result.summary
    assert RMIA_NAME in set(summary["analysis"]) and SHADOW_NAME in set(summary["analysis"])
    assert LIRA_NAME not in set(summary["analysis"])
    assert any("LiRA skipped: 2 reference models" in note for note in result.notes)
    assert any("2 reference models" in note and "exactly 1" in note for note in result.notes)
    assert not result.partial


@pytest.mark.parametrize("value", [0, 2.5, True, "4"])
def test_audit_model_refuses_bad_counts(value):
    members, non_members, population = _tables(20, 20, 40)
    with pytest.raises(ValueError, match="n_reference_models must be an integer >= 1"):
        audit_model(
            {"forest": _forest(members)},
            members,
            non_members,
            label=LABEL,
            population=population,
            n_reference_models=value,
            verbose=False,
        )


def test_cli_one_reference_model_runs_rmia_offline_only(files, monkeypatch):
    # K = 1: one model on a random half of the 200 population rows alone (no target trains
    # it), read by RMIA offline; LiRA and the shadow-model attack skipped with a note
    root, paths = files
    fits = []
    original = ShadowModels.fit

    def counting_fit(self, X, y):
        fits.append((self.n_reference_models, self.split, len(X)))
        return original(self, X, y)

    monkeypatch.setattr(ShadowModels, "fit", counting_fit)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(_argv(paths, root / "one", "--reference-models", "1")) == 0
    assert fits == [(1, "random", 200)]
    summary = pd.read_csv(root / "one" / "summary.csv")
    analyses = summary["analysis"].tolist()
    assert RMIA_OFFLINE_NAME in analyses
    assert not {SHADOW_NAME, LIRA_NAME, RMIA_NAME} & set(analyses)
    assert (summary["status"] == "ok").all()
    # the memorizing forest against one reference model: measured AUC 0.876, TPR at 1 % FPR
    # 0.24 (base seed); far from chance (0.5) with a single model
    assert summary.set_index("analysis").loc[RMIA_OFFLINE_NAME, "auc"] > 0.75
    text = " ".join(printed.getvalue().split())
    assert "only RMIA runs, offline" in text and "LiRA is skipped" in text
    assert "shadow-model attack" in text and "population rows alone" in text


def test_one_reference_model_needs_a_population_of_20():
    members, non_members, population = _tables(60, 60, 12, seed=1)
    args = ({"forest": _forest(members)}, members, non_members)
    kwargs = dict(label=LABEL, population=population, n_reference_models=1, verbose=False)
    with pytest.raises(ValueError, match="at least 20 population rows; got 12"):
        audit_model(*args, **kwargs)  # on_error="raise", the default
    result = audit_model(*args, **kwargs, on_error="report")
    assert result.partial  # the shared step failed, isolated, with its reason in the notes
    assert any("at least 20 population rows" in note for note in result.notes)
