"""The report is its presentation's sections: the page and the printed summary take them in
order, a section's figures and files are written and listed, and a result is shown by
whatever presentation it is handed (it stores none)."""

import io
from dataclasses import fields

from sklearn_mace.report import AuditResult, write_report
from sklearn_mace.report._engine import BAYES_RULE, Analysis
from sklearn_mace.report._figures import figure
from sklearn_mace.report._present import Presentation, common_sections
from sklearn_mace.report._section import Section
from sklearn_mace.report._summary import print_summary
from tests.report.test_report_comparisons import _audit, _shifted


class _Marker(Section):
    """A section that shows, prints, draws and writes one thing each."""

    def html(self, report):
        return f"<p>marker of {len(report.result.subjects)} subjects</p>"

    def lines(self, report):
        return ["marker line"]

    def figures(self, report):
        fig, ax = figure()
        ax.plot([0, 1], [0, 1])
        return {"marker.png": (fig, "the marker's figure")}

    def files(self, report, out):
        path = out / "marker.txt"
        path.write_text("marker", encoding="utf-8")
        return {"marker": path}


def _presentation():
    common = common_sections()  # Cards, Failed, Claims, …
    return Presentation(noun="thing", sections=(common[0], _Marker(), *common[1:]))


def test_a_result_stores_no_presentation():
    assert "presentation" not in {f.name for f in fields(AuditResult)}


def test_the_page_and_the_summary_follow_the_sections_order(tmp_path):
    result = _audit([Analysis("Bayes rule", _shifted(2.0), threshold=BAYES_RULE)], ["a", "b"])
    paths = write_report(result, tmp_path / "out", presentation=_presentation())
    page = paths["report"].read_text(encoding="utf-8")
    cards, marker = page.index('<div class="cards">'), page.index("<p>marker of 2 subjects</p>")
    assert cards < marker < page.index("<h2>Certified claims of every analysis</h2>")
    assert "thing a" in page and "Comparisons of the things" in page
    # its figure is drawn into figures/ and embedded, its file written and listed
    assert paths["marker.png"].read_bytes().startswith(b"\x89PNG")
    assert 'data-file="figures/marker.png"' in page
    assert paths["marker"].read_text(encoding="utf-8") == "marker"
    manifest = (tmp_path / "out" / ".sklearn-mace-files.json").read_text(encoding="utf-8")
    assert "marker.txt" in manifest and "figures/marker.png" in manifest
    printed = io.StringIO()
    print_summary(result, _presentation(), paths, file=printed)
    lines = printed.getvalue().splitlines()
    verdicts = [i for i, line in enumerate(lines) if line.startswith(("a: [", "b: ["))]
    comparisons = next(i for i, line in enumerate(lines) if line.startswith("comparisons:"))
    assert max(verdicts) < lines.index("marker line") < comparisons
    assert lines[-1].startswith("report: ")


def test_a_presentation_without_a_section_shows_none_of_it(tmp_path):
    result = _audit([Analysis("Bayes rule", _shifted(2.0), threshold=BAYES_RULE)], ["a", "b"])
    common = common_sections()
    bare = Presentation(sections=tuple(s for s in common if type(s).__name__ != "Comparisons"))
    page = write_report(result, tmp_path / "out", presentation=bare)["report"]
    text = page.read_text(encoding="utf-8")
    assert "Comparisons of the" not in text and "Certified claims of every analysis" in text
    printed = io.StringIO()
    print_summary(result, bare, {"report": page}, file=printed)
    assert "comparisons:" not in printed.getvalue()
