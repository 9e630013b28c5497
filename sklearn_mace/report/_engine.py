"""The audit engine: named analyses run on each audited subject, held to one set of claim rules.

An audit — of synthetic releases, of trained models, of a training recipe — is a
configuration of this engine: which *subjects* it audits, which *analyses* run on each, and
which *shared inputs* they read (``docs/design.md``, "The report layer"). The engine is a
loop of small steps that a configuration overrides, the structure of skorch's ``NeuralNet``:

* :meth:`AuditEngine.shared_steps` — expensive inputs computed once per subject and read by
  several analyses (MACE's cross-fitted estimator, the nearest-synthetic distances,
  reference models);
* :meth:`AuditEngine.analyses` — the named analyses of a subject; each yields one held-out
  membership score per target record (:class:`Scores`);
* :meth:`AuditEngine.run_step` — one step; an exception propagates, with its traceback
  (``on_error="raise"``, the Python API's default, as scikit-learn's
  ``GridSearchCV(error_score="raise")``), or becomes a failure with its reason
  (``on_error="report"``, the command line's): the report is then partial (exit code 3)
  and every other analysis goes on;
* :meth:`AuditEngine.certify` — every analysis's scores through
  :func:`~sklearn_mace.metrics.audit_epsilon` (on the targets its rule never saw: all of
  them, or a :attr:`Scores.certify_mask`), at the per-claim level of the subject's
  family (:meth:`AuditEngine.claim_confidence`): **one** Bonferroni correction over every
  certified number the report prints for the subject — its table rows, its headline (the
  largest of them) and its figure points. Failed analyses still count, so the correction
  is fixed before anything runs;
* :meth:`AuditEngine.bound` — every analysis's scores through
  :func:`~sklearn_mace.metrics.advantage_upper_bound` at the same per-claim level: a
  second family, of certified *upper* bounds on the advantage of every threshold rule on
  the scores, which a "leakage bounded" verdict needs (``_verdict.py``); with a claim to
  test (``privacy_claim``, the algorithm audit's), whether each certified point contradicts
  it (:meth:`~sklearn_mace.algorithm.PrivacyClaim.contradicted_by`), once, in the result;
* :meth:`AuditEngine.describe` and :meth:`AuditEngine.record_columns` — facts for the card
  and per-record columns for ``records.csv``.

Seeds are drawn up front (:meth:`AuditEngine.draw_seeds`), one per (subject, step, purpose),
each derived from ``random_state`` and the *names* of the subject and the step: a seed does
not depend on which analyses run before, succeed or fail, nor on the joblib backend.
"""

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Generic, TypeVar

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.metrics import roc_auc_score

from ..metrics import advantage_upper_bound, audit_epsilon, tpr_at_fpr
from ._results import AnalysisResult, SubjectResult

__all__ = [
    "BAYES_RULE",
    "Analysis",
    "AuditEngine",
    "Scores",
    "SharedStep",
    "Subject",
    "Targets",
    "base_seed",
    "check_device",
    "check_on_error",
    "failure_reason",
    "keyed_seed",
]

# "member iff score > 0" as audit_epsilon's explicit rule "score >= t": the Bayes decision of
# held-out log posterior odds at the prior, a threshold fixed before any data is seen
BAYES_RULE = float(np.nextafter(0.0, 1.0))
#: what a failing step does: propagate (the Python API's default) or become a report row
ON_ERROR = ("raise", "report")


@dataclass(frozen=True)
class Targets:
    """The target records of an audit: who is a member, and where each row came from.

    Attributes
    ----------
    membership : ndarray of int
        1 member (a training record), 0 non-member, one per target record.
    source : ndarray of str
        ``"members"`` or ``"non-members"``: the input table of each target.
    row : ndarray of int
        Row of each target in its input table (0-based, header excluded).
    prior : float
        P(member) at which advantages and risks are stated.
    group : ndarray, default=None
        The value of the ``group_by`` column of each target, when one is given.
    group_by : str, default=None
        The grouping column.
    """

    membership: np.ndarray
    source: np.ndarray
    row: np.ndarray
    prior: float
    group: np.ndarray = None
    group_by: str = None

    @classmethod
    def two_tables(cls, n_members, n_non_members, *, prior=None, names=("members", "non-members")):
        """Members (rows ``0 … n_members − 1`` of the first table) then non-members; the prior
        is their share unless given."""
        membership = np.r_[np.ones(n_members, dtype=int), np.zeros(n_non_members, dtype=int)]
        return cls(
            membership=membership,
            source=np.r_[np.full(n_members, names[0]), np.full(n_non_members, names[1])],
            row=np.r_[np.arange(n_members), np.arange(n_non_members)],
            prior=float(membership.mean()) if prior is None else float(prior),
        )

    @property
    def trivial_advantage(self):
        """``|2p − 1|``: the advantage of always guessing the likelier side."""
        return abs(2 * self.prior - 1)


@dataclass
class Scores:
    """What an analysis yields: a held-out membership score for every target record.

    Attributes
    ----------
    score : ndarray of float
        One finite score per target, larger = more likely a member, computed without that
        record's membership label (cross-fitting, shadow models, or no labels at all).
    risk : ndarray of float, default=None
        Held-out individual risk ``|f̂_p|`` of every target (MACE Def. 3), an estimate.
    estimates : dict of str -> float
        Plug-in values of the analysis, labelled estimates in the report
        (``advantage_estimate``, ``advantage_estimate_low``, ``advantage_estimate_high``,
        ``epsilon_estimate``, ``p_value``).
    detail : str
        One line on how the scores were made (shown in the summary).
    threshold : float, default=None
        The rule's threshold when the analysis fixed it itself, on data its claim does not
        use (an algorithm audit's attack, on its fitting runs); None: the analysis's own
        :attr:`Analysis.threshold`.
    certify_mask : ndarray of bool, default=None
        The targets the claim, its upper bound and the descriptive metrics are computed
        on (those the rule never saw); None: every target.
    """

    score: np.ndarray
    risk: np.ndarray = None
    estimates: dict = field(default_factory=dict)
    detail: str = ""
    threshold: float = None
    certify_mask: np.ndarray = None


@dataclass(frozen=True)
class Analysis:
    """A named analysis: how to score the targets, and which rule its claim certifies.

    Attributes
    ----------
    name : str
        The analysis's name in every table, figure and file.
    compute : callable
        ``compute(engine, subject, seed) -> Scores``.
    threshold : "split", float or None
        The rule :func:`~sklearn_mace.metrics.audit_epsilon` certifies: ``"split"`` (chosen
        on half of the targets for the largest ε, certified on the other half), a
        threshold fixed before seeing any data (certified on every target), or None: fixed
        by ``compute`` on data the claim does not use, and given with the scores
        (:attr:`Scores.threshold`, :attr:`Scores.certify_mask`).
    needs : tuple of str
        Shared steps it reads; their failure is its failure.
    figure : bool
        A figure point: certified and counted in the correction, drawn in a figure.
    detail : str
        One line on what it is.
    """

    name: str
    compute: Callable
    threshold: object = "split"
    needs: tuple = ()
    figure: bool = False
    detail: str = ""


@dataclass(frozen=True)
class SharedStep:
    """An input computed once per subject and read by several analyses.

    Attributes
    ----------
    name : str
        Its name in the report and in its seed key; ``needs`` of analyses name it.
    compute : callable
        ``compute(engine, subject, seed) -> object``.
    needs : tuple of str
        Earlier shared steps it reads (their names).
    key : str
        The field of ``subject.shared`` (a frozen dataclass of the configuration) its
        result is stored in, read as ``subject.shared.<key>``; checked against the
        dataclass's fields before anything runs.
    """

    name: str
    compute: Callable
    needs: tuple = ()
    key: str = field(default="", kw_only=True)


InputsT = TypeVar("InputsT")
SharedT = TypeVar("SharedT")


@dataclass
class Subject(Generic[InputsT, SharedT]):
    """One audited thing (a release, a model) and what its analyses read.

    Attributes
    ----------
    name : str
        Its name in the report.
    inputs : InputsT
        What the configuration gives the analyses (the synthetic rows, the model, …): a
        frozen dataclass of the configuration (``Release``, ``QueriedModel``, …).
    shared : SharedT, default=None
        The results of the shared steps: a frozen dataclass of the configuration with one
        field per step (``None`` until the step has run, and after it failed), replaced by
        the engine as each step finishes (:meth:`AuditEngine.store`).
    """

    name: str
    inputs: InputsT = None
    shared: SharedT = None


def failure_reason(exc):
    """One line saying why a step failed: the exception's type and message."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_on_error(on_error):
    """``on_error``, or a ``ValueError`` naming it and what is allowed."""
    if not isinstance(on_error, str) or on_error not in ON_ERROR:
        raise ValueError(
            "on_error must be 'raise' (a failing analysis raises its exception) or 'report' "
            f"(it becomes a failure in a partial report); got {on_error!r}."
        )
    return on_error


def check_device(device):
    """``device``, where an audit's kernel passes run, or an :class:`AuditInputError` (a
    ``ValueError``) naming it and what is allowed: ``"auto"`` (CUDA when available, else the
    CPU), ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a ``torch.device``. A CUDA device the machine
    lacks is refused here, before any work, rather than in the first pass that uses it
    (:func:`~sklearn_mace.utils._torch.resolve_device`, the estimators' own check)."""
    from ..utils._torch import resolve_device
    from ._io import AuditInputError

    try:
        resolved = resolve_device(device)
    except (TypeError, ValueError) as error:
        raise AuditInputError(str(error)) from None
    if resolved.type == "cuda" and resolved.index is not None:
        import torch

        count = torch.cuda.device_count()
        if resolved.index >= count:
            raise AuditInputError(
                f"device={str(device)!r} names a GPU this machine lacks: it has {count} "
                f"(cuda:0 to cuda:{count - 1}); use 'auto', 'cpu', 'cuda' or one of those."
            )
    return device


def keyed_seed(base, *keys):
    """A seed derived from ``base`` and the names ``keys`` (order-free across steps)."""
    words = [zlib.crc32(str(key).encode("utf-8")) for key in keys]
    return int(np.random.SeedSequence([base, *words]).generate_state(1)[0] % (2**31 - 1))


def base_seed(random_state):
    """The integer every seed of a run derives from (fresh entropy for None)."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy % 2**32)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    return int(random_state)


class _SilentProgress:
    """The part of tqdm's interface the engine uses, doing nothing (in joblib workers)."""

    def set_postfix_str(self, text):
        pass

    def update(self, n=1):
        pass


class AuditEngine:
    """Runs every analysis on every subject; configurations override the steps.

    Parameters
    ----------
    targets : Targets
        The target records, shared by every subject.
    confidence : float in (0, 1)
        Every certified number printed for a subject holds together at this level.
    delta : float in [0, 1)
        The δ of the (ε, δ) lower bounds.
    random_state : int, RandomState or None
        The base of every seed.
    n_jobs : int, default=None
        joblib workers; :attr:`parallel_subjects` says whether subjects run in parallel.
    inputs : frozen dataclass, default=None
        Inputs every subject's analyses share (the target records, reference rows, …),
        read as attributes (``ReleaseInputs``, ``ModelInputs``, ``AlgorithmInputs``).
    on_error : {"raise", "report"}, default="raise"
        A failing step raises its exception (``"raise"``), or becomes a failure with its
        reason while every other step goes on (``"report"``: a partial report).
    privacy_claim : PrivacyClaim, default=None
        A claim each certified point is tested against
        (:attr:`~sklearn_mace.report.AnalysisResult.contradicted`); None: none.
    """

    kind = "subject"
    #: the analysis whose scores rank the records (its held-out risk and posterior)
    ranking = None
    #: whether subjects run in parallel (they must then pickle)
    parallel_subjects = True

    def __init__(
        self,
        targets,
        *,
        confidence,
        delta,
        random_state,
        n_jobs=None,
        inputs=None,
        on_error="raise",
        privacy_claim=None,
    ):
        self.targets = targets
        self.inputs = inputs
        self.confidence = confidence
        self.delta = delta
        self.base_seed = base_seed(random_state)
        self.n_jobs = n_jobs
        self.on_error = check_on_error(on_error)
        self.privacy_claim = privacy_claim
        self.seeds_ = {}

    # ------------------------------------------------------------------ configuration
    def shared_steps(self, subject):
        """The shared inputs of ``subject``, in order (none by default)."""
        return []

    def analyses(self, subject):
        """The analyses of ``subject``, in report order."""
        raise NotImplementedError

    def describe(self, subject, results):
        """Facts about ``subject`` for its card and ``summary.csv`` (none by default)."""
        return {}

    def record_columns(self, subject, results):
        """Per-target columns of ``subject`` for ``records.csv`` (none by default)."""
        return {}

    # ------------------------------------------------------------------ the loop
    def claim_confidence(self, n_claims):
        """Level of each certified number so that all ``n_claims`` hold at ``confidence``."""
        return 1.0 - (1.0 - self.confidence) / max(n_claims, 1)

    def seed(self, subject, step, purpose):
        """The seed of one step, drawn up front by :meth:`draw_seeds`."""
        return self.seeds_[(subject, step, purpose)]

    def draw_seeds(self, subjects):
        """Every seed of the run, keyed by (subject, step, purpose)."""
        self.seeds_ = {}
        for subject in subjects:
            self.check_steps(subject)
            steps = [s.name for s in self.shared_steps(subject)]
            steps += [a.name for a in self.analyses(subject)]
            for step in steps:
                for purpose in ("scores", "certify"):
                    key = (subject.name, step, purpose)
                    self.seeds_[key] = keyed_seed(self.base_seed, *key)
        return self.seeds_

    def check_steps(self, subject):
        """A configuration error, before anything runs: a shared step whose ``key`` is not a
        field of ``subject.shared``, or a ``needs`` naming no shared step of the subject."""
        steps = self.shared_steps(subject)
        if steps and not is_dataclass(subject.shared):
            raise TypeError(
                f"subject {subject.name!r} has shared steps but its shared results are "
                f"{type(subject.shared).__name__}, not a dataclass with one field per step."
            )
        known = {f.name for f in fields(subject.shared)} if steps else set()
        for step in steps:
            if step.key not in known:
                raise TypeError(
                    f"shared step {step.name!r} stores its result in {step.key!r}, which is "
                    f"not a field of {type(subject.shared).__name__} ({sorted(known)})."
                )
        names = {step.name for step in steps}
        for step in [*steps, *self.analyses(subject)]:
            unknown = [need for need in step.needs if need not in names]
            if unknown:
                raise ValueError(
                    f"{step.name!r} needs {unknown[0]!r}, which is not a shared step of "
                    f"{subject.name!r} ({sorted(names)})."
                )

    def store(self, subject, step, value):
        """Keep a shared step's result: ``subject.shared`` with its ``key`` field set."""
        subject.shared = replace(subject.shared, **{step.key: value})

    def run(self, subjects, progress=None):
        """Audit every subject; returns one :class:`SubjectResult` each, in order."""
        progress = _SilentProgress() if progress is None else progress
        self.draw_seeds(subjects)
        if not self.parallel_subjects or effective_n_jobs(self.n_jobs) == 1 or len(subjects) < 2:
            return [self.run_subject(subject, progress) for subject in subjects]
        results = []
        tasks = (delayed(self.run_subject)(s, _SilentProgress()) for s in subjects)
        for subject, result in zip(
            subjects, Parallel(n_jobs=self.n_jobs, return_as="generator")(tasks), strict=True
        ):
            results.append(result)
            progress.update(self.n_steps(subject))
        return results

    def n_steps(self, subject):
        """Steps of one subject (for the progress bar)."""
        return len(self.shared_steps(subject)) + len(self.analyses(subject))

    def run_with_progress(self, subjects, *, desc, verbose):
        """:meth:`run` behind a tqdm progress bar on stderr (none when not ``verbose``)."""
        from tqdm.auto import tqdm

        total = sum(self.n_steps(subject) for subject in subjects)
        with tqdm(total=total, desc=desc, disable=not verbose, unit="step") as progress:
            return self.run(subjects, progress)

    def run_subject(self, subject, progress):
        """The shared steps, then every analysis, certified at the subject's level."""
        failed = {}
        for step in self.shared_steps(subject):
            progress.set_postfix_str(f"{subject.name}: {step.name}")
            missing = [need for need in step.needs if need in failed]
            if missing:
                failed[step.name] = f"needs {missing[0]}, which failed: {failed[missing[0]]}"
            else:
                value, reason = self.run_step(step.compute, subject, step.name)
                if reason is None:
                    self.store(subject, step, value)
                else:
                    failed[step.name] = reason
            progress.update()
        analyses = self.analyses(subject)
        results = []
        for analysis in analyses:
            progress.set_postfix_str(f"{subject.name}: {analysis.name}")
            results.append(self.run_analysis(analysis, subject, failed, len(analyses)))
            progress.update()
        return SubjectResult(
            name=subject.name,
            analyses=results,
            claim_confidence=self.claim_confidence(len(analyses)),
            facts=self.describe(subject, results),
            record_columns=self.record_columns(subject, results),
            ranking=self.ranking,
        )

    def run_step(self, compute, subject, name):
        """``(value, None)``; when ``compute`` raises, the exception itself
        (``on_error="raise"``) or ``(None, reason)`` (``on_error="report"``)."""
        try:
            return compute(self, subject, self.seed(subject.name, name, "scores")), None
        except Exception as exc:  # noqa: BLE001  any failure of one step is reported
            if self.on_error == "raise":
                raise
            return None, failure_reason(exc)

    def run_analysis(self, analysis, subject, failed, n_claims):
        """Score, certify and summarise one analysis of a subject's ``n_claims``; a failure
        is kept with its reason."""
        result = AnalysisResult(name=analysis.name, figure=analysis.figure, detail=analysis.detail)
        missing = [need for need in analysis.needs if need in failed]
        if missing:
            result.reason = f"needs {missing[0]}, which failed: {failed[missing[0]]}"
            return result

        def scored_and_certified(engine, subject, seed):
            scores = analysis.compute(engine, subject, seed)
            self.check_scores(scores.score, analysis.name)
            seed = self.seed(subject.name, analysis.name, "certify")
            claim = self.certify(analysis, scores, n_claims, seed)
            return scores, claim, self.bound(analysis, scores, n_claims)

        outcome, reason = self.run_step(scored_and_certified, subject, analysis.name)
        if reason is not None:
            result.reason = reason
            return result
        result.scores, result.claim, result.bound = outcome
        result.metrics = self.ranking_metrics(result.scores)
        result.contradicted = self.contradicted(result.claim, result.scores)
        if result.scores.detail:
            result.detail = result.scores.detail
        return result

    def check_scores(self, score, name):
        """One finite score per target, or a ``ValueError`` naming the analysis."""
        score = np.asarray(score, dtype=float)
        n = len(self.targets.membership)
        if score.shape != (n,) or not np.isfinite(score).all():
            raise ValueError(
                f"{name} gave scores of shape {score.shape} ({np.sum(~np.isfinite(score))} not "
                f"finite) for {n} target records; one finite score per record is needed."
            )

    def certified_part(self, scores):
        """``(membership, score)`` of the targets the claim is certified on: every target,
        or those of ``scores.certify_mask`` (the runs an algorithm audit's attack never
        saw)."""
        m, score = self.targets.membership, np.asarray(scores.score, dtype=float)
        if scores.certify_mask is None:
            return m, score
        keep = np.asarray(scores.certify_mask, dtype=bool)
        return m[keep], score[keep]

    def certify(self, analysis, scores, n_claims, seed):
        """The analysis's certified claim: :func:`~sklearn_mace.metrics.audit_epsilon` of its
        rule (the analysis's threshold, or the one its scores bring) on the targets the rule
        never saw (:meth:`certified_part`), at the level of one of the subject's
        ``n_claims`` (:meth:`claim_confidence`, from the engine's ``confidence``)."""
        m, score = self.certified_part(scores)
        threshold = analysis.threshold if scores.threshold is None else scores.threshold
        if threshold is None:
            raise ValueError(
                f"{analysis.name} has threshold=None, so its scores must give the threshold "
                "(Scores.threshold); they give none."
            )
        return audit_epsilon(
            score[m == 1],
            score[m == 0],
            delta=self.delta,
            confidence=self.claim_confidence(n_claims),
            threshold=threshold,
            prior=self.targets.prior,
            random_state=seed,
        )

    def bound(self, analysis, scores, n_claims):
        """The analysis's certified upper bound on the advantage of every threshold rule on
        its held-out scores (:func:`~sklearn_mace.metrics.advantage_upper_bound`), at the
        claim's level, on the targets the claim is certified on (:meth:`certified_part`)."""
        m, score = self.certified_part(scores)
        return advantage_upper_bound(
            score[m == 1],
            score[m == 0],
            prior=self.targets.prior,
            delta=self.delta,
            confidence=self.claim_confidence(n_claims),
        )

    def contradicted(self, claim, scores=None):
        """Whether ``claim`` contradicts :attr:`privacy_claim` (None without one): its
        certified point (exact upper bounds on FPR and FNR) lies below the claimed curve, or
        its certified ε exceeds the claim's ε at :attr:`delta` — the same rule as
        ``AlgorithmAudit.contradicted_``. For a threshold's ε, read off that point, the second
        follows from the first; a rank test's ε (``certificate="rank_test"``) may exceed it.
        ``scores`` (the analysis's) is for engines whose rule reads more than the point."""
        if self.privacy_claim is None:
            return None
        point = self.privacy_claim.contradicted_by(claim.fpr_upper, claim.fnr_upper)
        beyond = claim.epsilon_lower_bound > self.privacy_claim.epsilon_at(self.delta)
        return bool(point or beyond)

    def ranking_metrics(self, scores):
        """AUC and TPR at 1 % and 0.1 % FPR of the scores, on the targets the claim is
        certified on (descriptive, not certified)."""
        m, score = self.certified_part(scores)
        return {
            "auc": float(roc_auc_score(m, score)),
            "tpr_at_1pct_fpr": float(tpr_at_fpr(m, score, fpr=0.01)),
            "tpr_at_0.1pct_fpr": float(tpr_at_fpr(m, score, fpr=0.001)),
        }
