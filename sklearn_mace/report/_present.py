"""What each kind of audit adds to the common report: the hooks of a presentation.

The report itself (``_html.py``, ``_figures.py``, ``_summary.py``, ``_writer.py``) is the same
for every audit: cards under the same claim rules, the same claims table, the same records.
A presentation adds what only its kind has — the release audit's copy counts, column
encoding, disclosure risks and release-size figure; the model audit's accuracies and loss
histograms. A new kind of audit subclasses :class:`Presentation` and hands an instance to its
:class:`~sklearn_mace.report.AuditResult`.
"""

__all__ = ["Presentation"]


class Presentation:
    """The defaults: nothing beyond the common report."""

    noun = "subject"  # what one audited subject is called ("release", "model")
    title = "sklearn-mace privacy audit"
    command = "sklearn-mace"  # the printed summary's first word
    #: the records.csv columns shown beside each exposed record in report.html
    exposed_columns = ()
    #: the card's headline per case ("above", "leak", "disclosure", "inconclusive",
    #: "bounded" -> text with ``{epsilon}``); None: the common ones (``_verdict.VERDICTS``)
    verdicts = None
    #: whether a card may be green ("leakage bounded"): an algorithm card, which tests a
    #: claimed ε with finitely many runs, never proves it
    can_bound = True
    #: whether only a certified ε above the claimed one turns a card red (an algorithm
    #: card: a DP recipe may leak up to its claim)
    red_needs_claim = False
    #: whether the targets are records of a table (members and non-members), so that the
    #: common parts about records apply: exposed records, the held-out risk figure, the ROC
    #: figure of every target and the common "How to read" items. An audit whose targets
    #: are something else (the shadow runs of a training recipe) turns them off and says
    #: what its numbers mean itself.
    record_targets = True
    #: what the targets of each side are called (the sample-size line counts them)
    target_nouns = ("members", "non-members")

    def relation_name(self, result):
        """The neighbour relation the certified ε refutes, in two words."""
        return "substitute-one"

    def facts_line(self, result, subject):
        """HTML after the subject's name on its card."""
        return ""

    def meaning(self, result, subject, verdict):
        """The card's last line: what the verdict means; None: the common text."""
        return None

    def relation_line(self, result, subject):
        """HTML: which DP guarantees the headline ε refutes; None: the common text
        (members against fresh records: substitute-one)."""
        return None

    def thresholds_note(self, result):
        """What the claims table's threshold column means; None: the common text."""
        return None

    def exposure_line(self, result, subject, records):
        """HTML: the card's line on exposed records; None: the common one."""
        return None

    def verdict_line(self, result, subject):
        """The printed summary's line for ``subject``; None: the common one."""
        return None

    def summary_header(self, result):
        """The printed summary's first line; None: the common one."""
        return None

    def card_lines(self, result, subject):
        """HTML lines on the subject's card, after the claims."""
        return ""

    def subtitle(self, result):
        """The page's line under the title (after the inputs)."""
        return ""

    def sections(self, result):
        """HTML sections after the estimates table."""
        return []

    def inputs_section(self, result):
        """An HTML section on how the inputs were used, after "How to read"."""
        return ""

    def how_to_read(self, result):
        """Further ``<li>`` items of "How to read the numbers"."""
        return []

    def figures(self, result):
        """Further figures: file name -> (matplotlib Figure, caption)."""
        return {}

    def summary_lines(self, result):
        """Further lines of the printed summary (after the notes)."""
        return []

    def extra_files(self, result, out):
        """Further files written beside the report: key -> path."""
        return {}
