"""What an audit found, and the claim rules every card obeys (both audits alike).

* One claim per analysis: its :class:`~sklearn_mace.metrics.EpsilonAudit` — the certified
  ε and the certified advantage at the prior, both read off one operating point, so they
  are one event. Every claim of a subject is at the level that makes *all* of them,
  figure points included, hold together at the report's confidence (Bonferroni).
* One upper bound per analysis: its :class:`~sklearn_mace.metrics.AdvantageUpperBound` —
  the certified largest advantage of any threshold rule on its scores, a second family
  at the same levels.
* The **headline** is the largest certified ε of the subject, with the analysis it comes
  from; beside it, the largest certified advantage (and its source, which may differ).
* The **verdict** (``_verdict.py``): ``"leak"`` (red) when some claim certifies leakage
  or members appear verbatim beyond chance, ``"bounded"`` (green) when every analysis's
  upper bound is within the margin above ``|2p − 1|`` and no exact test rejects,
  ``"inconclusive"`` otherwise.
* A record is **exposed** only when the certified rule of a claim that certifies leakage
  flags it (score at or above that claim's threshold): the strongest such claim among the
  table's analyses. Such a rule's flags are members with a certified probability above the
  prior. A card that certifies no leakage therefore names no record.
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._comparisons import comparison_table
from ._verdict import ClaimRules

__all__ = ["AnalysisResult", "AuditResult", "ReportInputs", "SubjectResult", "failure_notes"]

_TOLERANCE = 1e-12  # an advantage bound "above the trivial one" must beat rounding
METRIC_COLUMNS = ("auc", "tpr_at_1pct_fpr", "tpr_at_0.1pct_fpr")
ESTIMATE_COLUMNS = (
    "advantage_estimate",
    "advantage_estimate_low",
    "advantage_estimate_high",
    "epsilon_estimate",
    "p_value",
)
CLAIM_COLUMNS = (
    "epsilon_lower_bound",
    "advantage_lower_bound",
    "trivial_advantage",
    "threshold_strategy",
    "threshold",
    "fpr",
    "fnr",
    "fpr_upper",
    "fnr_upper",
)
BOUND_COLUMNS = ("advantage_upper_bound", "advantage_epsilon_upper_bound")


def shown_threshold(threshold):
    """A threshold as summary.csv writes it: the Bayes rule's "score > 0", which
    :func:`~sklearn_mace.metrics.audit_epsilon` certifies as "score ≥ the smallest positive
    float" (5e-324), is written 0, what it means; every other threshold as it is."""
    return 0.0 if threshold == np.nextafter(0.0, 1.0) else float(threshold)


def _named(items, name):
    """The item called ``name``; ``KeyError`` when there is none."""
    found = [item for item in items if item.name == name]
    if not found:
        raise KeyError(name)
    return found[0]


@dataclass
class AnalysisResult:
    """One analysis on one subject: its scores, its certified claim, or why it failed.

    Attributes
    ----------
    name : str
        The analysis.
    figure : bool
        Whether it is a figure point (certified and counted, drawn in a figure).
    detail : str
        How its scores were made.
    scores : Scores or None
        Its held-out scores; None when it failed.
    claim : EpsilonAudit or None
        Its certified claim (:func:`~sklearn_mace.metrics.audit_epsilon`); None when it
        failed.
    bound : AdvantageUpperBound or None
        Its certified upper bound on the advantage of every threshold rule on its scores
        (:func:`~sklearn_mace.metrics.advantage_upper_bound`); None when it failed.
    metrics : dict of str -> float
        ``auc``, ``tpr_at_1pct_fpr``, ``tpr_at_0.1pct_fpr`` (descriptive), on the targets
        the claim is certified on.
    reason : str
        Why it failed; empty when it succeeded.
    contradicted : bool or None
        Whether the claim's certified point contradicts the audit's privacy claim
        (:meth:`~sklearn_mace.algorithm.PrivacyClaim.contradicted_by`), or its certified ε
        exceeds the claim's ε at δ (decided once by the engine,
        :meth:`~sklearn_mace.report._engine.AuditEngine.contradicted`); None when there
        is no such claim (releases, models) or the analysis failed.
    """

    name: str
    figure: bool = False
    detail: str = ""
    scores: object = None
    claim: object = None
    metrics: dict = field(default_factory=dict)
    reason: str = ""
    bound: object = None
    contradicted: bool = None

    @property
    def ok(self):
        """Whether the analysis produced a certified claim."""
        return self.claim is not None

    @property
    def leaks(self):
        """Whether its claim certifies leakage: ε > 0 or an advantage above ``|2p − 1|``."""
        if not self.ok:
            return False
        trivial = abs(2 * self.claim.prior - 1)
        return self.claim.epsilon_lower_bound > 0 or (
            self.claim.advantage_lower_bound > trivial + _TOLERANCE
        )

    def flags(self):
        """Which targets its certified rule calls members (score at or above the threshold).

        Returns
        -------
        flags : ndarray of bool
            One per target record, in the targets' order.
        """
        return np.asarray(self.scores.score) >= self.claim.threshold

    def flagged_precision(self):
        """Certified lower bound on P(member | flagged) at the prior, from the claim.

        Returns
        -------
        precision : float
            ``p·TPR_lo / (p·TPR_lo + (1 − p)·FPR_up)``; above the prior exactly when the
            claim certifies leakage.
        """
        c = self.claim
        tpr = max(1.0 - c.fnr_upper, 0.0)
        denominator = c.prior * tpr + (1 - c.prior) * c.fpr_upper
        return float(c.prior * tpr / denominator) if denominator > 0 else 0.0

    def row(self):
        """The analysis's row of ``summary.csv`` (without the subject columns).

        Returns
        -------
        row : dict
            Column name -> value (``docs/design.md``, "summary.csv and records.csv").
        """
        c, e = self.claim, ({} if self.scores is None else self.scores.estimates)
        row = {
            "analysis": self.name,
            "role": "figure" if self.figure else "analysis",
            "status": "ok" if self.ok else "failed",
            "reason": self.reason,
        }
        if c is None:
            row.update(dict.fromkeys(CLAIM_COLUMNS, np.nan))
        else:
            row.update(
                epsilon_lower_bound=c.epsilon_lower_bound,
                advantage_lower_bound=c.advantage_lower_bound,
                trivial_advantage=abs(2 * c.prior - 1),
                threshold_strategy=c.strategy,
                threshold=shown_threshold(c.threshold),
                fpr=c.fpr,
                fnr=c.fnr,
                fpr_upper=c.fpr_upper,
                fnr_upper=c.fnr_upper,
            )
        b = self.bound
        row.update({k: np.nan if b is None else getattr(b, k) for k in BOUND_COLUMNS})
        row.update({k: self.metrics.get(k, np.nan) for k in METRIC_COLUMNS})
        row.update({k: e.get(k, np.nan) for k in ESTIMATE_COLUMNS})
        row["detail"] = self.detail
        return row


@dataclass
class SubjectResult:
    """Everything found for one audited subject (a release, a model).

    Attributes
    ----------
    name : str
        The subject.
    analyses : list of AnalysisResult
        Every analysis, failed ones included, in report order.
    claim_confidence : float
        The level of each certified number of the subject (Bonferroni over all of them).
    facts : dict
        Facts for its card and ``summary.csv`` (rows, copies, accuracies, …).
    record_columns : dict of str -> ndarray
        Per-target columns for ``records.csv`` (distances, losses, …).
    ranking : str or None
        The analysis whose held-out scores rank the records and give their risk.
    """

    name: str
    analyses: list
    claim_confidence: float
    facts: dict = field(default_factory=dict)
    record_columns: dict = field(default_factory=dict)
    ranking: str = None

    def analysis(self, name):
        """The result of the analysis called ``name`` (``KeyError`` if none).

        Parameters
        ----------
        name : str
            An analysis name.

        Returns
        -------
        result : AnalysisResult
            Its scores, claim and metrics, or the reason it failed.
        """
        return _named(self.analyses, name)

    @property
    def n_claims(self):
        """The number of certified numbers the correction covers (failed ones included)."""
        return len(self.analyses)

    @property
    def claims(self):
        """The analyses that produced a claim."""
        return [a for a in self.analyses if a.ok]

    @property
    def failures(self):
        """``(analysis, reason)`` of every failed analysis."""
        return [(a.name, a.reason) for a in self.analyses if not a.ok]

    @property
    def scores(self):
        """Analysis name -> held-out scores, table analyses that succeeded."""
        return {a.name: a.scores.score for a in self.claims if not a.figure}

    @property
    def epsilon_source(self):
        """The claim with the largest certified ε (the headline); None when no ε is > 0."""
        claims = [a for a in self.claims if a.claim.epsilon_lower_bound > 0]
        return max(claims, key=lambda a: a.claim.epsilon_lower_bound) if claims else None

    @property
    def advantage_source(self):
        """The claim with the largest certified advantage; None when none beats ``|2p − 1|``."""
        claims = [a for a in self.claims if a.leaks]
        return max(claims, key=lambda a: a.claim.advantage_lower_bound) if claims else None

    @property
    def epsilon_lower_bound(self):
        """The headline: the largest certified ε of the subject (0 when nothing succeeded)."""
        source = self.epsilon_source
        return 0.0 if source is None else source.claim.epsilon_lower_bound

    @property
    def contradicted(self):
        """Whether some claim of the subject contradicts the audit's privacy claim."""
        return any(bool(a.contradicted) for a in self.analyses)

    @property
    def certified_leak(self):
        """Whether any claim of the subject, figure points included, certifies leakage."""
        return any(a.leaks for a in self.analyses)

    @property
    def bound_source(self):
        """The analysis with the largest certified upper bound; None when one has none (it
        failed), for then the subject's leakage is not bounded."""
        if not self.analyses or any(a.bound is None for a in self.analyses):
            return None
        return max(self.analyses, key=lambda a: a.bound.advantage_upper_bound)

    @property
    def advantage_upper_bound(self):
        """The largest certified upper bound of the subject's analyses (NaN when one failed)."""
        source = self.bound_source
        return np.nan if source is None else source.bound.advantage_upper_bound

    @property
    def p_values(self):
        """``(analysis, p-value)`` of every exact "no leak" test of the subject (MACE rows)."""
        found = [(a.name, a.scores.estimates.get("p_value")) for a in self.claims]
        return [(name, float(p)) for name, p in found if p is not None and np.isfinite(p)]

    @property
    def exposure_source(self):
        """The table claim whose certified rule names exposed records, or None.

        The strongest leaking claim among the table's analyses: largest ε, then largest
        advantage.
        """
        leaking = [a for a in self.claims if a.leaks and not a.figure]
        if not leaking:
            return None
        return max(
            leaking, key=lambda a: (a.claim.epsilon_lower_bound, a.claim.advantage_lower_bound)
        )

    def exposed(self, n_targets):
        """Which targets the exposure claim's certified rule flags (none without one).

        Parameters
        ----------
        n_targets : int
            The number of target records.

        Returns
        -------
        exposed : ndarray of bool
            One per target record, in the targets' order.
        """
        source = self.exposure_source
        return np.zeros(n_targets, dtype=bool) if source is None else source.flags()

    def ranking_result(self):
        """The ranking analysis's result when it succeeded, else None.

        Returns
        -------
        result : AnalysisResult or None
            The analysis whose held-out scores rank the records and give their risk.
        """
        for result in self.claims:
            if result.name == self.ranking:
                return result
        return None


def failure_notes(subjects, other=()):
    """One note listing every failed step, or none (the report is then complete)."""
    failures = [(s.name, a, reason) for s in subjects for a, reason in s.failures]
    failures += [tuple(f) for f in other]
    if not failures:
        return []
    listed = "; ".join(f"{analysis} on '{name}': {reason}" for name, analysis, reason in failures)
    return [
        f"{len(failures)} analysis run(s) failed and are missing from this report (listed "
        f"under 'Failed analyses' in report.html, status 'failed' in summary.csv): {listed}"
    ]


def _posterior_points_to(score):
    return np.where(score > 0, "member", np.where(score < 0, "non-member", "undecided"))


@dataclass(frozen=True, kw_only=True)
class ReportInputs:
    """How an audit's inputs were used, as its report shows them (``AuditResult.inputs``).

    Each configuration subclasses it with its own fields (``ReleaseReportInputs``,
    ``ModelReportInputs``, ``AlgorithmReportInputs``); the common layer reads these two.

    Attributes
    ----------
    unparsed_columns : dict of str -> list of str
        Per subject, the columns accepted as mostly not numbers (a release audit's
        ``allow_unparsed``): its card cannot be green.
    claim : PrivacyClaim or None
        An algorithm audit's claim on the audited relation (the card's headline names it).
    """

    unparsed_columns: dict = field(default_factory=dict)
    claim: object = None


@dataclass
class AuditResult:
    """Everything a report shows, for either audit (releases or models).

    Attributes
    ----------
    kind : str
        ``"release"`` (synthetic data) or ``"model"`` (a trained classifier).
    subjects : list of SubjectResult
        One per audited release or model, in the order given.
    targets : Targets
        The target records (membership, provenance, prior, groups).
    confidence : float
        Every certified number printed for a subject holds together at this level.
    delta : float
        The δ of the (ε, δ) lower bounds.
    claimed_epsilon : float
        The ε a DP claim states: a certified ε above it is verdict ``"high"``.
    n_rows : dict of str -> int
        Rows of each input table.
    inputs : ReportInputs
        How the inputs were used (encoded columns, label column, …), a frozen dataclass
        of the configuration read as attributes (``result.inputs.column_report``).
    notes : list of str
        Remarks shown in the report.
    other_failures : list of tuple
        ``(subject, analysis, reason)`` of failed steps outside the subjects' analyses.
    tables : dict of str -> DataFrame
        Further tables written beside the report (``disclosure``).
    claim_rules : ClaimRules
        What turns the cards' claims into their verdicts (whether a card may be green,
        whether only a contradicted claim makes it red, the headlines): plain data, so the
        verdict and ``summary.csv`` never depend on how the result is shown.
    bounded_margin : float
        A card is green ("leakage bounded") only when every analysis's certified upper
        bound on the advantage is at most ``|2p − 1| + bounded_margin``.
    comparisons : DataFrame
        Paired comparisons of the subjects, the table of ``comparisons.csv``, computed once
        when the result is made (unless given): for each analysis whose certified rule is
        fixed in advance and each pair of subjects, the difference of the two rules'
        held-out advantages with its test
        (:func:`~sklearn_mace.metrics.advantage_difference_test`, Holm-adjusted over the
        table); empty with fewer than two subjects (``_comparisons.py``).
    """

    kind: str
    subjects: list
    targets: object
    confidence: float
    delta: float
    claimed_epsilon: float
    n_rows: dict
    inputs: ReportInputs = field(default_factory=ReportInputs)
    notes: list = field(default_factory=list)
    other_failures: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    claim_rules: ClaimRules = field(default_factory=ClaimRules)
    bounded_margin: float = 0.1
    comparisons: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.comparisons is None:
            self.comparisons = comparison_table(self)

    @property
    def prior(self):
        """P(member) at which advantages and risks are stated."""
        return self.targets.prior

    @property
    def membership(self):
        """1 member, 0 non-member, one per target record."""
        return self.targets.membership

    def subject(self, name):
        """The result of the subject called ``name`` (``KeyError`` if none).

        Parameters
        ----------
        name : str
            A release or model name.

        Returns
        -------
        subject : SubjectResult
            Its analyses, claims and facts.
        """
        return _named(self.subjects, name)

    def verdict(self, subject):
        """The card's colour, from its certified claims, its upper bounds and its facts.

        Parameters
        ----------
        subject : SubjectResult
            One of ``subjects``.

        Returns
        -------
        verdict : {"leak", "inconclusive", "bounded"}
            ``"leak"`` (red): leakage certified, or members verbatim in the release beyond
            chance; ``"bounded"`` (green): every analysis's upper bound within
            ``bounded_margin`` of the trivial advantage, no exact test rejecting;
            ``"inconclusive"`` otherwise (``docs/design.md``, "One card, one set of claim
            rules").
        """
        from ._verdict import verdict

        return verdict(self, subject)

    def headline(self, subject):
        """The card's first line: :meth:`verdict` in words.

        Parameters
        ----------
        subject : SubjectResult
            The release or model whose verdict is spelled out.

        Returns
        -------
        headline : str
            E.g. ``"leakage certified above ε = 1"``, ``"inconclusive: no leakage
            certified, and none bounded"`` or ``"leakage bounded"``.
        """
        from ._verdict import headline

        return headline(self, subject)

    @property
    def failures(self):
        """One row per failed step: ``subject``, ``analysis``, ``reason``."""
        rows = [(s.name, a, reason) for s in self.subjects for a, reason in s.failures]
        rows += [tuple(failure) for failure in self.other_failures]
        return pd.DataFrame(rows, columns=["subject", "analysis", "reason"])

    @property
    def partial(self):
        """Whether some step failed (the report is then partial; the CLI exits 3)."""
        return bool(self.other_failures) or any(s.failures for s in self.subjects)

    @property
    def summary(self):
        """One row per (subject, analysis): the table of ``summary.csv``."""
        rows = []
        for subject in self.subjects:
            for result in subject.analyses:
                row = {"subject": subject.name, **result.row()}
                row.update(
                    claim_confidence=subject.claim_confidence,
                    n_claims=subject.n_claims,
                    delta=self.delta,
                )
                row.update(subject.facts)
                rows.append(row)
        return pd.DataFrame(rows)

    @property
    def records(self):
        """Every target record of every subject, ranked: the table of ``records.csv``.

        Within a subject: members first; among them the exposed records first (flagged by
        the certified rule of the exposure claim), then by the ranking analysis's held-out
        score, largest first. ``risk_estimate`` is that analysis's held-out ``|f̂_p|`` and
        ``posterior_points_to`` the side its posterior favours.
        """
        return pd.concat([self._records_of(s) for s in self.subjects], ignore_index=True)

    def _records_of(self, subject):
        t, n = self.targets, len(self.targets.membership)
        ranking = subject.ranking_result()
        score = np.full(n, np.nan) if ranking is None else ranking.scores.score
        risk = None if ranking is None else ranking.scores.risk
        frame = pd.DataFrame(
            {
                "subject": subject.name,
                "source": t.source,
                "row": t.row,
                "member": t.membership.astype(int),
                **({} if t.group_by is None else {t.group_by: t.group}),
                "risk_estimate": np.full(n, np.nan) if risk is None else risk,
                "posterior_points_to": _posterior_points_to(score),
                "exposed": subject.exposed(n),
                **subject.record_columns,
            }
        )
        seen = []
        for name, values in subject.scores.items():
            if not any(values is other for other in seen):  # one column per distinct score
                frame[f"score: {name}"] = values
                seen.append(values)
        order = np.lexsort((-np.nan_to_num(score, nan=-np.inf), ~frame["exposed"], -t.membership))
        frame = frame.iloc[order].reset_index(drop=True)
        frame.insert(1, "rank", np.arange(1, n + 1))
        return frame
