"""A failure in any analysis of any audit gives a partial report and exit code 3 on the
command line (``on_error="report"``), and raises its exception in Python (the default).

One command-line run per audit covers every analysis: the audit is given a few subjects, and
each analysis (and each shared step) is made to fail on one of them only, so that every
subject keeps some analyses that succeed. The report must be written with exactly those
failures, each with its reason, and every other claim of every subject intact: a failure is
isolated from the other analyses of its subject and from the other subjects.
"""

import contextlib
import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_mace.cli import main
from sklearn_mace.report._kinds.model import _audit as _model
from sklearn_mace.report._kinds.release import _audit as _release
from tests.audit_data import audit_tables, population


def _plant(monkeypatch, engine_class, subject_of):
    """Make each analysis (and shared step) of ``engine_class`` fail on one subject.

    ``subject_of(name)`` names the subject a step fails on. Returns the planted failures.
    """
    planted = {}

    def failing(step, subject_name):
        planted[step.name] = subject_name

        def compute(engine, subject, seed):
            if subject.name == subject_name:
                raise RuntimeError(f"planted failure of {step.name}")
            return step.compute(engine, subject, seed)

        return replace(step, compute=compute)

    analyses, shared = engine_class.analyses, engine_class.shared_steps
    monkeypatch.setattr(
        engine_class,
        "analyses",
        lambda self, s: [failing(a, subject_of(a.name)) for a in analyses(self, s)],
    )
    monkeypatch.setattr(
        engine_class,
        "shared_steps",
        lambda self, s: [failing(a, subject_of(a.name)) for a in shared(self, s)],
    )
    return planted


def _run(argv):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(argv)
    return code, printed.getvalue()


def _check_partial_report(out, planted, needs):
    """Exactly the planted failures (and what needs a failed shared step) failed."""
    summary = pd.read_csv(out / "summary.csv")
    failed = summary[summary["status"] == "failed"]
    expected = {(subject, analysis) for analysis, subject in planted.items()}
    expected = {pair for pair in expected if pair[1] in set(summary["analysis"])}
    expected |= {(planted[step], analysis) for step, analysis in needs}
    assert set(zip(failed["subject"], failed["analysis"], strict=True)) == expected
    for _, row in failed.iterrows():
        assert "planted failure of" in row["reason"], row["reason"]
    ok = summary[summary["status"] == "ok"]
    assert np.isfinite(ok["epsilon_lower_bound"]).all() and ok["reason"].isna().all()
    # every subject keeps its family: failed claims are counted in the correction
    assert summary.groupby("subject")["n_claims"].nunique().eq(1).all()
    page = (out / "report.html").read_text(encoding="utf-8")
    section = page.split("<h2>Failed analyses</h2>")[1].split("<h2>")[0]
    assert section.count("planted failure of") == len(expected)
    records = pd.read_csv(out / "records.csv")
    assert set(records["subject"]) == set(summary["subject"])
    return summary


def test_every_release_analysis_failing_gives_a_partial_report_and_exit_3(tmp_path, monkeypatch):
    monkeypatch.setattr(_release, "SIZE_FRACTIONS", (0.5,))  # one figure point is enough
    mace_bayes, mace_best, domias, mc, cal, exact = (a.name for a in _release.ANALYSES)
    groups = [
        (mace_bayes, domias, exact),
        (mace_best, mc, _release.size_point(0.5).name),
        (cal, _release.MACE_FIT),
        (_release.DISTANCE,),
    ]
    subject_of = {name: f"r{i}" for i, group in enumerate(groups) for name in group}
    planted = _plant(monkeypatch, _release.ReleaseAudit, subject_of.__getitem__)
    assert len(subject_of) == len(_release.ANALYSES) + 3  # every analysis and shared step
    members, non_members, _ = audit_tables()
    folder = tmp_path / "inputs"
    folder.mkdir()
    members.to_csv(folder / "members.csv", index=False)
    non_members.to_csv(folder / "non_members.csv", index=False)
    rng = np.random.default_rng(1)
    argv = ["audit", "--members", str(folder / "members.csv")]
    argv += ["--non-members", str(folder / "non_members.csv"), "--synthetic"]
    for i in range(len(groups)):
        path = folder / f"r{i}.csv"
        population(80, rng).to_csv(path, index=False)
        argv.append(f"r{i}={path}")
    out = tmp_path / "out"
    code, printed = _run([*argv, "--no-disclosure", "--quiet", "--out", str(out)])
    assert code == 3
    mace = [_release.MACE_BAYES.name, _release.MACE_BEST.name]
    needs = [(_release.MACE_FIT, a) for a in mace] + [(_release.DISTANCE, a) for a in mace]
    summary = _check_partial_report(out, planted, needs)
    assert len(summary) == len(groups) * 7  # six analyses and the figure point, per release
    assert "analysis run(s) failed" in printed


@pytest.fixture
def one_blas_thread():
    """Tiny models: BLAS threads only add start-up and spin-wait time on shared cores."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.fixture
def model_files(tmp_path):
    """Digits tables and one small skops model trained on the members."""
    sio = pytest.importorskip("skops.io")
    from sklearn.datasets import load_digits

    frame = load_digits(as_frame=True).frame.rename(columns={"target": "digit"})
    order = np.random.default_rng(0).permutation(len(frame))
    parts = np.split(order, [60, 120, 420])[:3]
    paths = {}
    for name, rows in zip(("members", "non-members", "population"), parts, strict=True):
        paths[name] = tmp_path / f"{name}.csv"
        frame.iloc[rows].to_csv(paths[name], index=False)
    members = frame.iloc[parts[0]]
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=300))
    model.fit(members.drop(columns="digit").to_numpy(), members["digit"].to_numpy())
    paths["model"] = tmp_path / "model.skops"
    sio.dump(model, paths["model"])
    return paths


def test_every_model_analysis_failing_gives_a_partial_report_and_exit_3(
    model_files, tmp_path, monkeypatch, one_blas_thread
):
    btta, cbtta, mace_bayes, mace_best = (a.name for a in _model.ANALYSES)
    shadow, lira, rmia = (a.name for a in _model.POPULATION_ANALYSES)
    groups = [
        (btta, shadow, mace_bayes),
        (cbtta, lira, mace_best),
        (_model.MACE_FIT, rmia),
        (_model.REFERENCE,),
    ]
    subject_of = {name: f"m{i}" for i, group in enumerate(groups) for name in group}
    planted = _plant(monkeypatch, _model.ModelAudit, subject_of.__getitem__)
    assert len(subject_of) == 9  # every analysis, the shared MACE fit and reference models
    argv = ["audit-model", "--label", "digit", "--quiet", "--out", str(tmp_path / "out")]
    argv += ["--model", *[f"m{i}={model_files['model']}" for i in range(len(groups))]]
    for role in ("members", "non-members", "population"):
        argv += [f"--{role}", str(model_files[role])]
    code, printed = _run(argv)
    assert code == 3
    needs = [(_model.MACE_FIT, _model.MACE_BAYES.name), (_model.MACE_FIT, _model.MACE_BEST.name)]
    needs += [(_model.REFERENCE, a.name) for a in _model.POPULATION_ANALYSES]
    summary = _check_partial_report(tmp_path / "out", planted, needs)
    assert len(summary) == len(groups) * 7
    assert "analysis run(s) failed" in printed


def test_every_algorithm_analysis_failing_gives_a_partial_report_and_exit_3(tmp_path, monkeypatch):
    from sklearn_mace.report._kinds.algorithm import _audit as _algorithm

    # one recipe per failure: a target's analysis on each histogram, the shadow runs (the
    # shared step every target needs) on the mixture, which then trains nothing
    first, second = "most common record", "empty-cell canary"
    recipes = ["dp-histogram", "wrong-noise-histogram", "gaussian-mixture"]
    groups = [(first,), (second,), (_algorithm.RUNS,)]
    subject_of = {
        name: _algorithm.RECIPES[recipe]
        for recipe, group in zip(recipes, groups, strict=True)
        for name in group
    }
    planted = _plant(monkeypatch, _algorithm.AlgorithmReport, subject_of.__getitem__)
    out = tmp_path / "out"
    argv = ["audit-algorithm", "--recipe", *recipes, "--n-runs", "20"]
    code, printed = _run([*argv, "--quiet", "--out", str(out)])
    assert code == 3
    needs = [(_algorithm.RUNS, first), (_algorithm.RUNS, second)]
    summary = _check_partial_report(out, planted, needs)
    assert len(summary) == len(recipes) * 2  # two targets per recipe
    assert summary["contradicted"].isna().eq(summary["status"] == "failed").all()
    assert "analysis run(s) failed" in printed


def _misspelt_release_analysis(monkeypatch):
    """The release audit's MACE Bayes rule reading an estimate by a misspelt key."""
    real = _release.MACE_BAYES

    def misspelt(engine, subject, seed):
        scores = real.compute(engine, subject, seed)
        scores.estimates["p_value"] = scores.estimates["p_valeu"]  # the typo
        return scores

    planted = replace(real, compute=misspelt)
    analyses = [planted if a is real else a for a in _release.ANALYSES]
    monkeypatch.setattr(_release, "ANALYSES", analyses)
    monkeypatch.setattr(_release, "SIZE_FRACTIONS", ())
    return real.name


def test_a_misspelt_key_raises_in_python(monkeypatch):
    from sklearn_mace.report import audit_release

    _misspelt_release_analysis(monkeypatch)
    members, non_members, releases = audit_tables()
    with pytest.raises(KeyError, match="p_valeu") as raised:
        audit_release(members, non_members, releases, disclosure=False, verbose=False)
    # the exception itself, with its traceback down to the line of the typo
    assert raised.traceback[-1].name == "misspelt"


def test_a_misspelt_key_is_a_failed_row_of_a_partial_report_on_the_cli(tmp_path, monkeypatch):
    name = _misspelt_release_analysis(monkeypatch)
    members, non_members, releases = audit_tables()
    paths = {"members": members, "non-members": non_members, **releases}
    for key, frame in paths.items():
        frame.to_csv(tmp_path / f"{key}.csv", index=False)
    argv = ["audit", "--members", str(tmp_path / "members.csv")]
    argv += ["--non-members", str(tmp_path / "non-members.csv"), "--synthetic"]
    argv += [f"{key}={tmp_path / f'{key}.csv'}" for key in releases]
    out = tmp_path / "out"
    code, _ = _run([*argv, "--no-disclosure", "--quiet", "--out", str(out)])
    assert code == 3
    summary = pd.read_csv(out / "summary.csv")
    failed = summary[summary["status"] == "failed"]
    assert set(failed["analysis"]) == {name} and len(failed) == len(releases)
    assert (failed["reason"] == "KeyError: 'p_valeu'").all()
    assert (summary.loc[summary["status"] == "ok", "reason"].isna()).all()


@pytest.mark.parametrize("on_error", ["ignore", "RAISE", None])
def test_on_error_is_checked_before_any_work(on_error):
    from sklearn_mace.report import audit_algorithm, audit_model, audit_release

    message = r"on_error must be 'raise' .* or 'report' .*; got "
    with pytest.raises(ValueError, match=message):
        audit_release(None, None, {"s": None}, on_error=on_error, verbose=False)
    with pytest.raises(ValueError, match=message):
        audit_model({}, None, None, label="y", on_error=on_error, verbose=False)
    with pytest.raises(ValueError, match=message):
        audit_algorithm(["dp-histogram"], on_error=on_error, verbose=False)
