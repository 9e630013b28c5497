"""How one kind of audit is shown: a few words and the ordered sections of its report.

The report is the same for every audit (``_html.py``, ``_figures.py``, ``_comparisons.py``,
``_sample_size.py``, ``_summary.py``, ``_writer.py``): cards under the same claim rules, the
same claims table, the same records. A :class:`Presentation` lists the sections a kind's
report is made of (:class:`~._section.Section`: HTML, printed lines, figures, files), the
common ones it uses and its own — the release audit's copy counts, column encoding,
disclosure risks and release-size figure; the model audit's accuracies and loss histograms;
the algorithm audit's claim, targets table and power. Each kind's ``_view.py`` builds one
from a result (``presentation(result)``); the writer and the printer are handed it. The
result itself is plain data: it does not know how it is shown.
"""

from dataclasses import dataclass, field

from ._figures import Figures, common_figures
from ._html import (
    Cards,
    Claims,
    Comparisons,
    Estimates,
    Exposed,
    Failed,
    HowToRead,
    Notes,
    common_reading,
)
from ._sample_size import SampleSize

__all__ = ["Presentation", "common_sections"]


def common_sections():
    """The common report, in order: what a presentation shows unless it lists its own."""
    return (
        Cards(),
        Failed(),
        Claims(),
        Estimates(),
        Comparisons(),
        SampleSize(),
        Figures((common_figures,)),
        Exposed(),
        HowToRead((common_reading,)),
        Notes(),
    )


@dataclass(frozen=True)
class Presentation:
    """How one audit is shown.

    Attributes
    ----------
    noun : str
        What one audited subject is called (``"release"``, ``"model"``, ``"recipe"``).
    title : str
        The page's title.
    command : str
        The printed summary's first word.
    target_nouns : tuple of str
        What the targets of each side are called (the sample-size line counts them).
    exposed_columns : tuple of str
        The records.csv columns shown beside each exposed record.
    record_targets : bool
        Whether the targets are records of a table (members and non-members); an audit
        whose targets are shadow runs of a training recipe says "runs".
    relation : str
        The neighbour relation the certified ε refutes, in two words.
    subtitle : str
        The end of the page's line under the title (`` · …``).
    sections : tuple of Section
        The report's sections, in the order the page and the printed summary show them.
    """

    noun: str = "subject"
    title: str = "sklearn-mace privacy audit"
    command: str = "sklearn-mace"
    target_nouns: tuple = ("members", "non-members")
    exposed_columns: tuple = ()
    record_targets: bool = True
    relation: str = "substitute-one"
    subtitle: str = ""
    sections: tuple = field(default_factory=common_sections)
