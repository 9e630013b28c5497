"""The parts a report is made of: sections, and the result as one presentation shows it.

A report is an ordered list of :class:`Section` objects (a :class:`~._present.Presentation`
lists them). Each section gives its HTML for report.html (``html``), its lines for the
printed summary (``lines``), the figures it adds to "Figures" (``figures``) and the files it
writes beside the report (``files``); each returns nothing by default, so a section defines
only what it shows. The page and the printed summary take the sections in the list's order.
"""

from functools import cached_property

__all__ = ["Report", "Section"]


class Report:
    """An audit result as one presentation shows it: what every section reads.

    Parameters
    ----------
    result : AuditResult
        The audit (plain data).
    presentation : Presentation
        How it is shown: a few words and the ordered sections.

    Attributes
    ----------
    figures : list of str
        The ``<figure>`` elements drawn so far (filled by the writer before the page is
        rendered; empty for the printed summary).
    """

    def __init__(self, result, presentation):
        self.result = result
        self.presentation = presentation
        self.figures = []

    @cached_property
    def summary(self):
        """The table of ``summary.csv``, computed once."""
        return self.result.summary

    @cached_property
    def records(self):
        """The table of ``records.csv``, computed once."""
        return self.result.records

    @cached_property
    def comparisons(self):
        """The table of ``comparisons.csv``, computed once."""
        return self.result.comparisons


class Section:
    """One part of the report; every method returns nothing unless a section overrides it."""

    def html(self, report):
        """Its HTML on report.html ("" when it shows nothing there)."""
        return ""

    def lines(self, report):
        """Its lines of the printed summary ([] when it prints nothing)."""
        return []

    def figures(self, report):
        """The figures it adds to "Figures": file name -> (matplotlib Figure, caption)."""
        return {}

    def files(self, report, out):
        """The files it writes into the folder ``out`` beside the report: key -> path."""
        return {}
