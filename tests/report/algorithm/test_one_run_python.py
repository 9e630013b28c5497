"""The one-run card from Python (issue #30): ``audit_algorithm(..., design="one_run")`` then
``write_report(result, out)``, the path the command line takes too.

The histogram recipes need no extra package; each audit trains each recipe once with 400
canaries (about 2 s), and each written card draws one figure per recipe.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.algorithm import AlgorithmAudit, DPHistogramSynthesizer, PrivacyClaim
from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, audit_algorithm, write_report
from sklearn_mace.report._kinds.algorithm._types import OneRunResult

CANARIES = 400


STAMP = re.compile(rb"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC")


def _files(folder):
    """Every file under ``folder`` (relative POSIX path -> bytes), the page's time stamp
    (``Generated YYYY-MM-DD HH:MM UTC``, its only one) replaced by a fixed text."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    stamped = files["report.html"]
    assert len(STAMP.findall(stamped)) == 1
    files["report.html"] = STAMP.sub(b"Generated <time> UTC", stamped)
    return files


def _cards(page):
    """Each card's class, in order."""
    return re.findall(r'<div class="card (\w+)">', page)


@pytest.fixture(scope="module")
def one_run():
    """The embedded demo's two histograms, claimed pure ε = 1, seed 3."""
    return audit_algorithm(
        design="one_run", n_canaries=CANARIES, claim=PrivacyClaim.pure(1.0), random_state=3
    )


def test_python_and_the_command_line_write_the_same_files(one_run, tmp_path, capsys):
    """Same seed, same files, byte for byte but for the page's time stamp (the manifest
    lists the same files too)."""
    python = tmp_path / "python"
    paths = write_report(one_run, python)
    argv = ["audit-algorithm", "--design", "one-run", "--canaries", str(CANARIES)]
    argv += ["--claim", "pure:1", "--random-state", "3", "--out", str(tmp_path / "cli")]
    assert main([*argv, "--quiet"]) == 0
    written, printed = _files(python), _files(tmp_path / "cli")
    figures = [f"figures/{name}" for name in paths if name.endswith(".png")]
    own = sorted(["report.html", "summary.csv", "guesses.csv", *figures])
    assert len(figures) == 2 and sorted(written) == sorted([*own, ".sklearn-mace-files.json"])
    assert sorted(json.loads(written[".sklearn-mace-files.json"])["files"]) == own
    assert written.keys() == printed.keys()
    for name in written:
        assert written[name] == printed[name], name
    assert {name: path.parent for name, path in paths.items()} == {
        name: python / "figures" if name.endswith(".png") else python for name in paths
    }
    summary = pd.read_csv(python / "summary.csv")
    pd.testing.assert_frame_equal(
        summary, one_run.summary.astype({"contradicted": bool}), check_dtype=False
    )


def test_the_result_is_the_one_run_result_of_fitted_audits(one_run):
    assert isinstance(one_run, OneRunResult) and one_run.kind == "recipe"
    for recipe in one_run.recipes:
        audit = recipe.audit
        assert isinstance(audit, AlgorithmAudit) and audit.design == "one_run"
        assert len(audit.canary_included_) == CANARIES
        assert audit.claim_.describe() == PrivacyClaim.pure(1.0).describe()


@pytest.mark.parametrize(
    "result",
    [None, {"epsilon": 1.0}, "report", pd.DataFrame({"epsilon_lower_bound": [1.0]})],
    ids=["none", "dict", "str", "frame"],
)
def test_write_report_refuses_what_it_cannot_write_naming_result(result, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(TypeError, match=r"^result must be what an audit function") as info:
        write_report(result, out)
    assert type(result).__name__ in str(info.value)
    assert not out.exists()  # refused before out is touched


def test_write_report_refuses_a_fitted_audit_and_a_result_of_an_unknown_kind(one_run, tmp_path):
    """A fitted ``AlgorithmAudit`` is not a result (``audit_algorithm`` wraps it); a result
    whose ``kind`` no registered kind has, or that its kind does not write, is refused."""
    from types import SimpleNamespace

    out = tmp_path / "out"
    for result in (
        one_run.recipes[0].audit,
        SimpleNamespace(kind="table"),
        SimpleNamespace(kind="recipe"),  # the kind exists, but writes no such object
    ):
        with pytest.raises(TypeError, match="^result must be"):
            write_report(result, out)
    assert not out.exists()


def test_a_one_run_result_takes_no_presentation(one_run, tmp_path):
    from sklearn_mace.report._present import Presentation

    with pytest.raises(TypeError, match="^presentation= shows an AuditResult"):
        write_report(one_run, tmp_path / "out", presentation=Presentation())
    assert not (tmp_path / "out" / "report.html").exists()


def test_the_title_reaches_the_one_run_page(one_run, tmp_path):
    write_report(one_run, tmp_path / "out", title="Trainer audit, <one run>")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<title>Trainer audit, &lt;one run&gt;</title>" in page


def test_the_writer_keeps_its_safety_from_python(one_run, tmp_path):
    """Staged and listed: a user's ``guesses.csv`` in ``out`` stops the write before anything
    is drawn; a user's other file stays through two writes; a multi-run report's files the
    one-run card does not write are removed (the manifest), never a file it did not write."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "guesses.csv").write_text("mine\n")
    with pytest.raises(AuditInputError, match=r"^out '.*' holds a file 'guesses.csv'"):
        write_report(one_run, out)
    assert sorted(p.name for p in out.iterdir()) == ["guesses.csv"]
    (out / "guesses.csv").rename(out / "mine.csv")
    multi = audit_algorithm(["dp-histogram"], n_runs=20, verbose=False)
    write_report(multi, out)
    assert (out / "records.csv").exists()
    write_report(one_run, out)
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert "records.csv" not in names and "mine.csv" in names and "guesses.csv" in names
    assert (out / "mine.csv").read_text() == "mine\n"
    assert not [p for p in tmp_path.iterdir() if p.name != "out"]  # nothing beside out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_null_run_stays_grey_through_python(seed, tmp_path):
    """A histogram whose noise drowns every count (claimed and truly ε = 0.001: scale 1 000
    per cell) leaks nothing one run can see: not contradicted, so not red, and never green
    (one run proves no claim) — the card, the printed verdict and summary.csv agree."""
    result = audit_algorithm(
        ["dp-histogram"],
        design="one_run",
        n_canaries=CANARIES,
        claimed_epsilon=1e-3,
        random_state=seed,
    )
    out = tmp_path / "out"
    write_report(result, out)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert _cards(page) == ["inconclusive"]
    assert "inconclusive: the claim is not contradicted" in page
    summary = pd.read_csv(out / "summary.csv")
    assert summary["contradicted"].tolist() == [False]
    assert summary["epsilon_lower_bound"].iloc[0] <= 1e-3
    assert 'class="card bounded"' not in page and 'class="card leak"' not in page


# ------------------------------------------------ what certificate= and the rest mean in one run
@pytest.mark.parametrize(
    ("keywords", "parameter"),
    [
        ({"certificate": "rank_test"}, "certificate='rank_test'"),
        ({"targets": 3}, "targets=3"),
        ({"relation": "substitute"}, "relation='substitute'"),
        ({"design": "one-run"}, "design must be"),
    ],
    ids=["certificate", "targets", "relation", "design"],
)
def test_one_run_refuses_the_multi_run_options_naming_them(keywords, parameter):
    arguments = {"design": "one_run", "n_canaries": CANARIES, **keywords}
    with pytest.raises(AuditInputError) as info:
        audit_algorithm(**arguments)
    assert str(info.value).startswith(parameter) and "--" not in str(info.value)


def test_white_box_is_refused_in_the_multi_run_design():
    with pytest.raises(AuditInputError, match=r"^white_box=True .* design='one_run'"):
        audit_algorithm(["dp-histogram"], n_runs=20, white_box=True, verbose=False)


def test_the_rank_certificate_message_says_what_one_run_certifies_with(capsys, tmp_path):
    """Refused alike in Python (``audit_algorithm`` and ``AlgorithmAudit``, naming
    ``certificate``) and on the command line (naming ``--certificate``): the rank test needs
    independent runs; one run certifies with Steinke et al.'s bound and the f-DP analysis."""
    with pytest.raises(AuditInputError) as report_error:
        audit_algorithm(design="one_run", certificate="rank_test")
    population = np.random.default_rng(0).integers(0, 3, size=(600, 2))
    audit = AlgorithmAudit(
        DPHistogramSynthesizer(epsilon=1.0, categories=3),
        design="one_run",
        n_canaries=100,
        certificate="rank_test",
    )
    with pytest.raises(ValueError) as estimator_error:
        audit.fit(population)
    for error in (report_error, estimator_error):
        text = str(error.value)
        assert text.startswith("certificate='rank_test' applies to the multi-run design")
        assert "independent runs" in text and "Steinke, Nasr & Jagielski" in text
        assert "f-DP analysis of Mahloujifar, Melis & Chaudhuri" in text
        assert "epsilon_lower_bounds_" in text and "mu_lower_bounds_" in text
    argv = ["audit-algorithm", "--design", "one-run", "--certificate", "rank-test"]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--certificate rank-test certifies the multi-run design's independent runs" in err
    assert "Steinke, Nasr & Jagielski's bound and the f-DP analysis" in err
    assert "certificate=" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--targets", "3"], "--targets chooses the multi-run design's target records"),
        (["--neighbour", "substitute"], "it audits --neighbour add-remove only"),
    ],
    ids=["targets", "neighbour"],
)
def test_the_command_line_refuses_multi_run_options_in_one_run(flags, message, capsys, tmp_path):
    argv = ["audit-algorithm", "--design", "one-run", *flags, "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err
