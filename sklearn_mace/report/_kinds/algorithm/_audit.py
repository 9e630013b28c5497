"""The algorithm audit as a report: the engine configured for training recipes.

What ``sklearn-mace audit-algorithm`` runs (``docs/design.md``, "Auditing an algorithm"). An
audited **subject** is a training recipe (a generator); its shared step is an
:class:`~sklearn_mace.algorithm.AlgorithmAudit` — ``n_runs`` trainings without any target and
``n_runs`` with each target, featurized about the targets, one attack per target trained on
``attack_fraction`` of the runs of each side, its threshold chosen there. Each audited target
record is one **analysis** of the recipe: its scores are the attack's scores of the runs, and
the engine certifies the attack's rule (fixed on the fitting runs: ``threshold`` explicit) on
the other runs only, at the recipe's per-claim level ``1 − α/K`` for its ``K`` targets — the
audit's own Bonferroni correction, so the certified numbers are the audit's. The rule and
the runs it is certified on come with the scores (``Scores.threshold``,
``Scores.certify_mask``): the analyses are the same before and after the shadow runs, and
the engine's own certifier, upper bound, metrics and verdict ("contradicted", decided once
per target by the engine) serve this audit as they serve the others.

The engine's "target records" are therefore the runs: run ``i`` of the member side is, for
target ``j``, the ``i``-th run with target ``j`` in its training set; of the other side, the
``i``-th run without any target (shared by every target, as in the audit).
"""

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pandas as pd

from ..._engine import (
    Analysis,
    AuditEngine,
    Scores,
    SharedStep,
    Subject,
    Targets,
    base_seed,
    check_device,
    check_on_error,
)
from ..._io import AuditInputError
from ..._results import AuditResult, failure_notes
from ..._verdict import ClaimRules
from ._recipes import DPSGD, HISTOGRAMS, RECIPES, WHITE_BOX, available_recipes
from ._types import (
    AlgorithmInputs,
    AlgorithmReportInputs,
    AlgorithmShared,
    AuditedRecipe,
    OneRunRecipe,
    OneRunResult,
)

__all__ = ["RECIPES", "AlgorithmReport", "audit_algorithm", "available_recipes"]

RUNS = "shadow runs"
#: the δ of a DP-SGD recipe's calibration, and of its certified ε unless one is given
DPSGD_DELTA = 1e-5
#: a population column with at most this many distinct values is categorical
MAX_LEVELS = 20
RELATIONS = {"add_remove": "add/remove-one", "substitute": "substitute-one"}
#: how the certifying runs give a target's ε (``AlgorithmAudit``'s ``certificate``)
CERTIFICATES = ("threshold", "rank_test")
#: a recipe's card: red only when the claim is contradicted (a DP recipe may leak up to its
#: claim), never green (no number of runs proves a DP claim)
CLAIM_RULES = ClaimRules(
    can_bound=False,
    red_needs_claim=True,
    headlines={
        "above": "the claim is contradicted: {claim}",
        "inconclusive": "inconclusive: the claim is not contradicted: {claim}",
    },
)


def make_recipe(name, *, epsilon, relation, domain):
    """An unfitted built-in recipe; the histograms claim ``epsilon`` under ``relation``."""
    from .... import algorithm

    if name in HISTOGRAMS:
        Recipe = (
            algorithm.DPHistogramSynthesizer
            if name == "dp-histogram"
            else algorithm.WrongNoiseHistogramSynthesizer
        )
        return Recipe(epsilon, categories=domain, relation=relation)
    if name == "gaussian-mixture":
        from sklearn.mixture import GaussianMixture

        return GaussianMixture(n_components=5, random_state=0)
    if name == "sdv":
        return algorithm.SDVGenerator()
    if name == "ctgan":
        return algorithm.CTGANGenerator(epochs=50)
    if name in DPSGD:
        Recipe = {
            "dpsgd-logreg": algorithm.DPSGDLogisticRegression,
            "dpsgd-logreg-noise-bug": algorithm.NoiseBugDPSGDLogisticRegression,
            "dpsgd-mlp": algorithm.DPSGDMLPClassifier,
        }[name]
        return Recipe(epsilon=epsilon, delta=DPSGD_DELTA)
    return algorithm.SmartNoiseGenerator("mst", epsilon=epsilon)


def encode_population(frame):
    """The population as numbers: ``(X, domain)``.

    A column with at most :data:`MAX_LEVELS` distinct values (or any non-numeric one) is
    categorical and becomes its codes ``0 … k − 1`` (sorted values); others stay numbers.
    ``domain`` lists each column's codes when every column is categorical (the domain a
    histogram recipe needs, read from the population, never from a training set), else None.
    """
    if frame.isna().any().any():
        column = frame.columns[frame.isna().any()][0]
        raise AuditInputError(
            f"the population column '{column}' has missing values; fill or drop them first."
        )
    columns, domain = [], []
    for name in frame.columns:
        values = frame[name]
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        if numeric and values.nunique() > MAX_LEVELS:
            columns.append(values.to_numpy(dtype=np.float64))
            domain = None
            continue
        codes, levels = pd.factorize(values, sort=True)
        columns.append(codes.astype(np.float64))
        if domain is not None:
            domain.append(np.arange(len(levels), dtype=float))
    return np.column_stack(columns), domain


def shadow_runs(engine, subject, seed):
    """The shared step: the recipe's :class:`~sklearn_mace.algorithm.AlgorithmAudit`."""
    from ....algorithm import AlgorithmAudit

    settings = engine.inputs
    return AlgorithmAudit(
        subject.inputs.recipe,
        targets=settings.targets,
        relation=settings.relation,
        n_runs=settings.n_runs,
        train_size=settings.train_size,
        datasets="fixed",
        n_synthetic=subject.inputs.n_synthetic,
        featurizer=subject.inputs.featurizer,
        claim=settings.claim,
        delta=engine.delta,
        confidence=engine.confidence,
        certificate=settings.certificate,
        n_jobs=engine.n_jobs,
        random_state=seed,
        verbose=settings.verbose,
    ).fit(settings.population)


@dataclass
class RankScores(Scores):
    """:class:`Scores` of a target audited with ``certificate="rank_test"``: its rank test's
    ε (at half the target's level, on the certifying runs) and the ranks ``(k_high, k_low)``
    whose test gave it (``(None, None)``: none; None for a tail left out); ``rank_mu``, its
    μ rank test's μ (Gaussian worst case, also at half the level)."""

    rank_epsilon: float = 0.0
    rank_pair: tuple = (None, None)
    rank_mu: float = 0.0


def target_scores(engine, subject, seed, *, target):
    """The attack's score of every run, for one target (larger: the target trained it),
    with its rule: the threshold chosen on the fitting runs, certified on the others (and,
    with ``certificate="rank_test"``, the audit's rank test of the target: :class:`RankScores`)."""
    audit = subject.shared.runs
    n_fit = int((~audit.certify_mask_).sum() // 2)
    features = ", ".join(audit.feature_names_)
    scores = Scores(
        score=audit.run_scores_[target],
        detail=f"attack on {features}, trained and its threshold chosen on {n_fit} runs per "
        f"side; certified on the other {audit.n_runs - n_fit} per side",
        threshold=float(audit.audits_[target].threshold),
        certify_mask=audit.certify_mask_,
    )
    if audit.certificate != "rank_test":
        return scores
    return RankScores(
        **vars(scores),
        rank_epsilon=float(audit.rank_epsilon_lower_bounds_[target]),
        rank_pair=audit.rank_pairs_[target],
        rank_mu=float(audit.rank_mu_lower_bounds_[target]),
    )


class AlgorithmReport(AuditEngine):
    """The engine configured for training recipes (one subject per recipe).

    Recipes run one after the other; ``n_jobs`` goes to each recipe's runs.
    """

    kind = "recipe"
    parallel_subjects = False

    def shared_steps(self, subject):
        """The shadow runs of the recipe."""
        return [SharedStep(RUNS, shadow_runs, key="runs")]

    def analyses(self, subject):
        """One analysis per target; its rule comes with its scores (``threshold=None``):
        the attack's threshold, fixed on the fitting runs, certified on the others."""
        return [
            Analysis(name, partial(target_scores, target=j), threshold=None, needs=(RUNS,))
            for j, name in enumerate(self.inputs.target_names)
        ]

    def certify(self, analysis, scores, n_claims, seed):
        """The engine's certificate of the target's rule; with ``certificate="rank_test"``
        (:class:`RankScores`) that point at half the target's level (the engine's certifier
        at ``2·n_claims``: ``α/(2K)``), its ε raised to the rank test's, which holds at the
        other half — ``AlgorithmAudit``'s own rule, so the numbers are the audit's. The
        figure's point and the curve test read the point (μ: the larger of the point's and
        the μ rank test's, :class:`RankScores`); the ε holds at ``1 − α/K``."""
        if not isinstance(scores, RankScores):
            return super().certify(analysis, scores, n_claims, seed)
        point = super().certify(analysis, scores, 2 * n_claims, seed)
        best = max(point.epsilon_lower_bound, scores.rank_epsilon)
        return replace(point, epsilon_lower_bound=best, confidence=self.claim_confidence(n_claims))

    def contradicted(self, claim, scores=None):
        """The engine's rule; with ``certificate="rank_test"`` and a μ-GDP claim, the point
        below the claimed curve or the μ rank test above the claimed μ (the rank test of the
        claim's own kind, as ``AlgorithmAudit.contradicted_``: at most α for a true claim)."""
        gaussian = self.privacy_claim is not None and self.privacy_claim.kind == "gaussian"
        if not (gaussian and isinstance(scores, RankScores)):
            return super().contradicted(claim, scores)
        point = self.privacy_claim.contradicted_by(claim.fpr_upper, claim.fnr_upper)
        return bool(point or scores.rank_mu > self.privacy_claim.mu)

    def describe(self, subject, results):
        """The recipe's settings, and its true ε when it is a mechanism of known ε."""
        audit = subject.shared.runs
        facts = {
            "recipe_name": subject.inputs.key,
            "true_epsilon": subject.inputs.true_epsilon,
            "relation": self.inputs.relation,
            "n_runs": self.inputs.n_runs,
        }
        if audit is not None:
            facts["train_size"] = audit.n_train_
            facts["n_certify_runs"] = int(audit.certify_mask_.sum() // 2)
        return facts

    def record_columns(self, subject, results):
        """``certifying_run``: whether a run certifies (the attack never saw it)."""
        audit = subject.shared.runs
        return {} if audit is None else {"certifying_run": audit.certify_mask_}


def _runs(n_runs):
    """The engine's "targets": ``n_runs`` runs with the target, then as many without any."""
    return Targets.two_tables(
        n_runs, n_runs, prior=0.5, names=("with the target", "without any target")
    )


def _on_terminal():
    """Whether stderr, where the progress bars go, is a terminal: the runs' bar sits under
    the recipes' bar, and nested bars move the cursor, which a log or a pipe shows as `[A`
    escapes, so the inner one is drawn on a terminal only."""
    import sys

    return bool(getattr(sys.stderr, "isatty", lambda: False)())


@dataclass
class AlgorithmResult(AuditResult):
    """:class:`AuditResult` of an algorithm audit: ``summary`` adds the claim's columns."""

    @property
    def summary(self):
        """One row per (recipe, target): the common columns of ``summary.csv`` (``subject``
        the recipe, ``analysis`` the target, …, then the recipe's facts), then the claim's
        own: ``claimed_epsilon`` (the claim's ε at ``delta``), ``contradicted`` (the
        certified point below the claimed curve, as the engine decided it; empty for a
        failed target), ``claim`` (in words, on the audited relation), ``mu_lower_bound``
        (with the rank test: the larger of the point's and the μ rank test's);
        with ``certificate="rank_test"`` also ``certificate``, ``rank_epsilon_lower_bound``
        (the rank test's own ε; ``epsilon_lower_bound`` is the larger of it and the point's)
        and the ranks whose test gave it, ``rank_k_high`` and ``rank_k_low`` (empty for a
        tail left out) (:func:`rank_columns`)."""
        from ....metrics._fdp import mu_from_error_bounds

        frame = super().summary
        ok = frame["status"] == "ok"
        fpr_upper = frame["fpr_upper"].to_numpy(dtype=float)
        fnr_upper = frame["fnr_upper"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            mu = pd.Series(mu_from_error_bounds(fpr_upper, fnr_upper), index=frame.index)
        if self.inputs.certificate == "rank_test":  # the larger of the point's and the test's
            mu = np.maximum(mu, rank_mus(self.subjects, frame.index))
        verdicts = [a.contradicted for s in self.subjects for a in s.analyses]
        frame = frame.assign(
            claimed_epsilon=self.claimed_epsilon,
            contradicted=pd.Series(verdicts, index=frame.index, dtype=object),
            claim=self.inputs.claim.describe(),
            mu_lower_bound=mu.where(ok, np.nan),
        )
        if self.inputs.certificate == "threshold":
            return frame  # the columns as they were before the rank test
        analyses = [a for s in self.subjects for a in s.analyses]
        return frame.assign(**rank_columns(analyses, frame.index))


def rank_mus(subjects, index):
    """Each analysis's μ rank test's μ (``certificate="rank_test"``; NaN where it failed)."""
    found = [a.scores if a.ok else None for s in subjects for a in s.analyses]
    return pd.Series([np.nan if s is None else s.rank_mu for s in found], index=index)


def rank_columns(analyses, index):
    """``certificate``, ``rank_epsilon_lower_bound``, ``rank_k_high``, ``rank_k_low`` of
    each analysis of a ``certificate="rank_test"`` audit (NaN / empty where it failed, or
    for a tail the best test left out)."""
    found = [a.scores if a.ok else None for a in analyses]
    epsilon = [np.nan if s is None else s.rank_epsilon for s in found]
    pairs = [(None, None) if s is None else s.rank_pair for s in found]
    return {
        "certificate": "rank_test",
        "rank_epsilon_lower_bound": pd.Series(epsilon, index=index, dtype=float),
        "rank_k_high": pd.Series([p[0] for p in pairs], index=index, dtype="Int64"),
        "rank_k_low": pd.Series([p[1] for p in pairs], index=index, dtype="Int64"),
    }


def _targets_and_names(X, targets, demo):
    """The target records and their names: the demo's, or the most vulnerable records."""
    from ....algorithm import select_vulnerable_records

    if targets is None and demo is not None:
        return demo.targets, demo.target_names
    k = 2 if targets is None else int(targets)
    if k > len(X) - 3:
        raise AuditInputError(
            f"targets={k} asks for more targets than the population can spare ({len(X)} rows)."
        )
    rows = select_vulnerable_records(X, k)
    names = [f"vulnerable record {rank} (population row {row})" for rank, row in enumerate(rows, 1)]
    return X[rows], names


def _subject(key, *, epsilon, relation, domain, n_train, group=1):
    from ....algorithm import ReleaseFeatures

    recipe = make_recipe(key, epsilon=epsilon, relation=relation, domain=domain)
    histogram = key in HISTOGRAMS
    # known for the histograms (Δ / noise scale): the claim, or twice it for the wrong noise;
    # twice again on substitute-one runs of a histogram calibrated for add/remove-one
    factor = {"dp-histogram": 1.0, "wrong-noise-histogram": 2.0}.get(key, np.nan)
    true_epsilon = factor * group * epsilon
    return Subject(
        RECIPES[key],
        AuditedRecipe(
            key=key,
            recipe=recipe,
            true_epsilon=true_epsilon,
            # the histogram's release is its expanded noisy counts: its count of the target's
            # cell is all it says about the target (the Laplace mechanism itself)
            featurizer=ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None)
            if histogram
            else None,
            n_synthetic=None if histogram else n_train,
        ),
        AlgorithmShared(),
    )


def _population(population, recipes, random_state):
    """``(X, domain, demo, n_rows)``: the embedded demo's population (``demo``, its targets
    and training size: :func:`~sklearn_mace.datasets.make_categorical_population`), or the
    user's population encoded (a histogram recipe needs it categorical) and None."""
    from ....datasets import make_categorical_population

    trainers = [r for r in recipes if r in DPSGD]
    if trainers:
        raise AuditInputError(
            f"the recipe {trainers[0]} is audited in one run, with Dirac canaries: pass "
            "design='one_run'."
        )
    if population is None:
        demo = make_categorical_population(random_state=random_state)
        domain = [np.arange(k, dtype=float) for k in demo.categories]
        return demo.data, domain, demo, {"embedded demo population": len(demo.data)}
    X, domain = encode_population(population)
    missing = [r for r in recipes if r in HISTOGRAMS and domain is None]
    if missing:
        raise AuditInputError(
            f"the recipe {missing[0]} needs a categorical population (every column with at "
            f"most {MAX_LEVELS} distinct values); pick another recipe or bin the columns."
        )
    return X, domain, None, {"population": len(X)}


CLAIM_KINDS = {"pure": 1, "approx": 2, "gaussian": 1}
CLAIM_FORMS = "pure:EPS, approx:EPS,DELTA or gaussian:MU, optionally :add_remove or :substitute"


def parse_claim(text):
    """``KIND:NUMBERS[:RELATION]`` (e.g. ``gaussian:0.27``, ``approx:1,1e-5:substitute``) as
    ``(kind, numbers, relation or None)``; ``ValueError`` saying what is allowed."""
    parts = str(text).strip().split(":")
    kind = parts[0].strip().lower()
    if kind not in CLAIM_KINDS or len(parts) not in (2, 3):
        raise ValueError(f"must be {CLAIM_FORMS}; got {text!r}")
    relation = parts[2].strip().replace("-", "_") if len(parts) == 3 else None
    if relation not in (None, "add_remove", "substitute"):
        raise ValueError(f"relation must be add_remove or substitute; got {parts[2]!r}")
    try:
        numbers = tuple(float(v) for v in parts[1].split(","))
    except ValueError:
        raise ValueError(f"must be {CLAIM_FORMS}; got {text!r}") from None
    if len(numbers) != CLAIM_KINDS[kind]:
        raise ValueError(f"{kind} takes {CLAIM_KINDS[kind]} number(s); got {text!r}")
    make_claim((kind, numbers, relation), "add_remove")  # checks the numbers
    return kind, numbers, relation


def make_claim(parsed, relation):
    """The :class:`~sklearn_mace.algorithm.PrivacyClaim` of :func:`parse_claim`'s output;
    ``relation`` when the text named none."""
    from ....algorithm import PrivacyClaim

    kind, numbers, named = parsed
    build = {"pure": PrivacyClaim.pure, "approx": PrivacyClaim.approximate}
    build["gaussian"] = PrivacyClaim.gaussian
    return build[kind](*numbers, relation=named or relation)


def _claims(claim, claimed_epsilon, delta, relation):
    """``(stated, audited, delta)``: the claim as stated (``claimed_epsilon`` and ``delta``
    when no ``claim``), on the audited relation, and the δ of the certified ε."""
    from ....algorithm import PrivacyClaim

    if claim is None:
        claim = PrivacyClaim.approximate(
            claimed_epsilon, 0.0 if delta is None else delta, relation=relation
        )
    elif not isinstance(claim, PrivacyClaim):
        raise AuditInputError(
            f"claim must be a PrivacyClaim (sklearn_mace.algorithm); got {type(claim).__name__}."
        )
    try:
        audited = claim.under(relation)
    except ValueError as error:
        raise AuditInputError(str(error)) from error
    return claim, audited, float(audited.delta if delta is None else delta)


def audit_algorithm(
    recipes=("dp-histogram", "wrong-noise-histogram"),
    population=None,
    *,
    targets=None,
    claimed_epsilon=1.0,
    claim=None,
    delta=None,
    confidence=0.95,
    relation="add_remove",
    n_runs=1000,
    certificate="threshold",
    n_jobs=None,
    random_state=0,
    verbose=True,
    on_error="raise",
    device="auto",
    design="multi_run",
    n_canaries=1000,
    white_box=False,
):
    """Audit training recipes: shadow runs (one claim per target) or one run with canaries.

    Parameters
    ----------
    recipes : sequence of str, default=("dp-histogram", "wrong-noise-histogram")
        Built-in recipes (:data:`RECIPES`; the adapters when their package is installed).
        The histograms claim ``claimed_epsilon`` under ``relation``.
    population : DataFrame or None, default=None
        The records training sets are drawn from; None: the embedded demo population
        (3 000 records over a 60-cell categorical domain) and its two targets, the most
        common record and a canary in the empty cell.
    targets : int or None, default=None
        Audit the population's ``targets`` most vulnerable records (mean distance to the
        nearest records); None: the demo's two targets, or 2 on a population table.
    claimed_epsilon : float >= 0, default=1.0
        The ε the recipes claim under ``relation`` (with ``delta``: an (ε, δ) claim); the
        histograms are calibrated to it. Ignored when ``claim`` is given.
    claim : PrivacyClaim or None, default=None
        The claim as a trade-off curve (:class:`~sklearn_mace.algorithm.PrivacyClaim`),
        stated for its own relation: an add/remove-one claim audited with
        ``relation="substitute"`` is converted by group privacy (the card says so). The
        histograms are calibrated to a pure or (ε, δ) claim's ε under its relation.
    delta : float in [0, 1) or None, default=None
        The δ at which ε is certified (and of the ``claimed_epsilon`` claim); None: the
        claim's own δ on the audited relation (0 for ``claimed_epsilon`` alone).
    confidence : float in (0, 1), default=0.95
        Each recipe's target claims hold together at this level (Bonferroni).
    relation : {"add_remove", "substitute"}, default="add_remove"
        The neighbour relation of the claim and of the runs.
    n_runs : int >= 10, default=1000
        Runs per side (``design="multi_run"``; one run has none).
    certificate : {"threshold", "rank_test"}, default="threshold"
        How each target's certifying runs give its ε
        (:class:`~sklearn_mace.algorithm.AlgorithmAudit`'s ``certificate``): the attack's
        threshold rule, or ``"rank_test"``: that rule's point at half the target's level
        (the trade-off figure and the curve test still read it) and a rank test of both
        tails without a selection split at the other half; the ε is the larger (the card and
        ``summary.csv`` say which, ``rank_epsilon_lower_bound``), and a claim is also
        contradicted when it exceeds the claimed ε at ``delta``; likewise μ, with a rank
        test calibrated on the Gaussian pair (a μ-GDP claim is also contradicted when it
        exceeds the claimed μ). Tighter on pure DP
        mechanisms with discrete outputs (the DP histogram at ε = 1, 1 000 runs per side:
        about 0.8 ε against 0.64 ε); two rank tests (ε and μ) of about 1.6 CPU s each per
        target at 500 certifying runs per side (20 s each at 5 000). Multi-run only (the one-run
        design, :func:`audit_algorithm_one_run`, has its own bound).
    n_jobs : int, default=None
        Runs in parallel (joblib); the result does not depend on it.
    random_state : int, default=0
        The base of every seed (and of the demo population).
    verbose : bool, default=True
        Progress bars on stderr.
    on_error : {"raise", "report"}, default="raise"
        A failing step (the shadow runs of a recipe, one target's analysis) raises its
        exception (``"raise"``, as scikit-learn's ``GridSearchCV(error_score="raise")``),
        or becomes a failure with its reason in a partial report while the others go on
        (``"report"``, what ``sklearn-mace audit-algorithm`` does: exit code 3).
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Where the audit's kernel passes run, as in the other audits; checked (a CUDA device
        the machine lacks is an input error before any work), but no step of this audit
        has such a pass today: the built-in recipes train on the CPU and the runs'
        features (each target against each release) are computed in NumPy.
    design : {"multi_run", "one_run"}, default="multi_run"
        ``"multi_run"``: the shadow runs above. ``"one_run"``: each recipe trained **once**
        with ``n_canaries`` canaries, each in its training set independently with
        probability ½ (Steinke, Nasr & Jagielski 2023;
        :class:`~sklearn_mace.algorithm.AlgorithmAudit` with ``design="one_run"``,
        add/remove-one). Its bounds are Steinke et al.'s ε and the f-DP analysis of
        Mahloujifar, Melis & Chaudhuri (2025) — the f-DP ε, the empirical μ and the test of
        the claimed curve —, always both, holding together at ``confidence`` per recipe; so
        ``certificate`` stays ``"threshold"`` (the rank test needs independent runs; one
        run's canaries share one training), ``targets`` None and ``relation``
        ``"add_remove"`` (an input error names each otherwise). ``n_runs``, ``n_jobs``,
        ``verbose`` and ``on_error`` are unused (one training, no analysis to fail). The
        DP-SGD recipes (``dpsgd-logreg``, ``dpsgd-logreg-noise-bug``, ``dpsgd-mlp``) are
        audited in one run only: Dirac canaries, the accountant's curve as their claim
        unless ``claim`` is given, ε certified at δ = 1e-5 unless ``delta`` is.
    n_canaries : int >= 10, default=1000
        ``design="one_run"``: canaries per recipe, drawn from the population (at most its
        size minus 2; the DP-SGD recipes: that many Dirac canaries).
    white_box : bool, default=False
        ``design="one_run"`` of ``dpsgd-logreg`` and ``dpsgd-logreg-noise-bug``: read each
        canary's coordinate of their per-step noisy gradients
        (:class:`~sklearn_mace.algorithm.DPSGDGradientScores`, every canary guessed on)
        instead of the final model.

    Returns
    -------
    result : AuditResult or OneRunResult
        ``design="multi_run"``: one subject per recipe. ``design="one_run"``: one fitted
        :class:`~sklearn_mace.algorithm.AlgorithmAudit` per recipe (``result.recipes``)
        and ``result.summary``, one row per recipe (``recipe``, then the one-run columns of
        :meth:`~sklearn_mace.algorithm.AlgorithmAudit.summary`). :func:`write_report`
        writes either, as ``sklearn-mace audit-algorithm`` does (``--design one-run``:
        report.html, summary.csv, guesses.csv, one trade-off figure per recipe).

    Examples
    --------
    >>> from sklearn_mace.report import audit_algorithm
    >>> result = audit_algorithm(["dp-histogram"], n_runs=40, verbose=False)
    >>> result.summary[["analysis", "contradicted"]].to_dict("list")
    {'analysis': ['most common record', 'empty-cell canary'], 'contradicted': [False, False]}

    One run instead: the correct and the wrong-noise histogram (truly ε = 2), both claiming
    ε = 1, one training each with 400 canaries (a few seconds):

    >>> one_run = audit_algorithm(design="one_run", n_canaries=400)
    >>> one_run.summary[["design", "n_canaries", "contradicted"]].to_dict("list")
    {'design': ['one_run', 'one_run'], 'n_canaries': [400, 400], 'contradicted': [False, False]}

    Population rows as canaries interfere (a histogram cell holds others too), so one run
    of 400 does not catch the wrong noise here; ``write_report(one_run, out)`` writes the
    card that says how much it could have certified at most.
    """
    check_on_error(on_error)
    check_device(device)
    _check_design(design, targets=targets, relation=relation, certificate=certificate)
    _check_white_box(recipes, white_box, multi_run=design == "multi_run")
    if design == "one_run":  # its body: audit_algorithm_one_run
        same = dict(claim=claim, delta=delta, confidence=confidence, random_state=random_state)
        own = dict(claimed_epsilon=claimed_epsilon, n_canaries=n_canaries, white_box=white_box)
        return audit_algorithm_one_run(recipes, population, **same, **own)
    stated, audited, delta = _claims(claim, claimed_epsilon, delta, relation)
    X, domain, demo, n_rows = _population(population, recipes, random_state)
    target_X, names = _targets_and_names(X, targets, demo)
    n_train = demo.train_size if demo is not None else int(round(0.5 * (len(X) - len(names))))
    calibration = stated.epsilons[0] if stated.kind in ("pure", "approximate") else claimed_epsilon
    context = dict(epsilon=calibration, relation=stated.relation, domain=domain, n_train=n_train)
    context["group"] = 1 if stated.relation == relation else 2
    subjects = [_subject(key, **context) for key in recipes]
    engine = AlgorithmReport(
        _runs(n_runs),
        confidence=confidence,
        delta=delta,
        random_state=random_state,
        n_jobs=n_jobs,
        on_error=on_error,
        privacy_claim=audited,
        inputs=AlgorithmInputs(
            population=X,
            targets=target_X,
            target_names=names,
            relation=relation,
            n_runs=n_runs,
            train_size=n_train,
            claim=stated,
            verbose=int(verbose and _on_terminal()),  # nested bars: see _on_terminal
            device=device,
            certificate=certificate,
        ),
    )
    results = engine.run_with_progress(subjects, desc="recipes", verbose=verbose)
    return _result(results, engine, audited, n_rows)


DESIGNS = ("multi_run", "one_run")


def _check_design(design, *, targets, relation, certificate):
    """``design`` and ``certificate``, and the multi-run options a one-run audit cannot
    honour (an input error naming each, never an option silently dropped)."""
    from ....algorithm._one_run import certificate_refusal

    _check_certificate(certificate)
    if not isinstance(design, str) or design not in DESIGNS:
        raise AuditInputError(
            f"design must be 'multi_run' (shadow runs per target) or 'one_run' (one training "
            f"with n_canaries canaries); got {design!r}."
        )
    if design == "multi_run":
        return
    if certificate != "threshold":
        raise AuditInputError(certificate_refusal(certificate))
    if targets is not None:
        raise AuditInputError(
            f"targets={targets!r} chooses the multi-run design's target records; "
            "design='one_run' draws n_canaries canaries from the population: leave targets "
            "out."
        )
    if relation != "add_remove":
        raise AuditInputError(
            f"relation={relation!r}: design='one_run' puts each canary in or leaves it out, "
            "so it audits relation='add_remove' only."
        )


def _check_certificate(certificate):
    """``certificate``, or an input error naming it and what is allowed."""
    if not isinstance(certificate, str) or certificate not in CERTIFICATES:
        raise AuditInputError(
            f"certificate must be 'threshold' (the attack's threshold rule) or 'rank_test' (a "
            f"rank test of both tails beside it); got {certificate!r}."
        )


def _result(results, engine, audited, n_rows):
    """The audit's result: one subject per recipe, its claim on the audited relation."""
    settings = engine.inputs
    return AlgorithmResult(
        kind="recipe",
        subjects=results,
        targets=engine.targets,
        confidence=engine.confidence,
        delta=engine.delta,
        claimed_epsilon=float(audited.epsilon_at(engine.delta)),
        n_rows=n_rows,
        inputs=AlgorithmReportInputs(
            relation=settings.relation,
            n_runs=settings.n_runs,
            target_names=settings.target_names,
            claim=audited,
            certificate=settings.certificate,
        ),
        notes=failure_notes(results),
        claim_rules=CLAIM_RULES,
    )


def audit_algorithm_one_run(
    recipes=("dp-histogram", "wrong-noise-histogram"),
    population=None,
    *,
    n_canaries=1000,
    claimed_epsilon=1.0,
    claim=None,
    delta=None,
    confidence=0.95,
    random_state=0,
    white_box=False,
):
    """One-run audits of training recipes: one training each, ``n_canaries`` canaries.

    The body of ``audit_algorithm(..., design="one_run")``, the public path (which checks
    the multi-run options first).

    Each recipe is trained once with ``n_canaries`` population records, each included
    independently with probability ½ (:class:`~sklearn_mace.algorithm.AlgorithmAudit` with
    ``design="one_run"``, add/remove-one). The DP-SGD recipes (``dpsgd-logreg``,
    ``dpsgd-logreg-noise-bug``, ``dpsgd-mlp``) are calibrated to the claimed ε at δ = 1e-5
    and get ``n_canaries`` Dirac canaries instead
    (:func:`~sklearn_mace.algorithm.make_dirac_canaries`; the population's last column is
    the label, :func:`classification_records`); their claim is their accountant's curve
    unless ``claim`` is given. :func:`write_report` (and the command line, through it)
    writes one card per recipe from the result (``_one_run_view.py``).

    Parameters
    ----------
    recipes : sequence of str, default=("dp-histogram", "wrong-noise-histogram")
        Built-in recipes (:data:`RECIPES`).
    population : DataFrame or None, default=None
        The records; None: the embedded demo population (the DP-SGD recipes: scikit-learn's
        bundled breast-cancer table).
    n_canaries : int >= 10, default=1000
        Canaries, drawn from the population (the DP-SGD recipes: Dirac canaries).
    claimed_epsilon, claim, delta, confidence, random_state
        As for :func:`audit_algorithm` (the relation is add/remove-one).
    white_box : bool, default=False
        Read the linear DP-SGD recipes white-box: their per-step noisy gradients
        (``record_gradients=True``) through
        :class:`~sklearn_mace.algorithm.DPSGDGradientScores`, every canary guessed on, no
        attack to learn (their recipe name says "white-box"). ``dpsgd-mlp`` records none.

    Returns
    -------
    result : OneRunResult
        One fitted :class:`~sklearn_mace.algorithm.AlgorithmAudit` per recipe
        (``result.recipes``); ``result.summary`` has one row per recipe: ``recipe`` then the
        one-run columns of :meth:`~sklearn_mace.algorithm.AlgorithmAudit.summary`.
    """
    _check_white_box(recipes, white_box)
    stated, _, certified_delta = _claims(claim, claimed_epsilon, delta, "add_remove")
    calibration = stated.epsilons[0] if stated.kind in ("pure", "approximate") else claimed_epsilon
    settings = dict(n_canaries=n_canaries, epsilon=calibration, confidence=confidence)
    settings["seed"] = base_seed(random_state)
    audits, n_rows = {}, {}
    others = [key for key in recipes if key not in DPSGD]
    if others:
        X, domain, demo, n_rows = _population(population, others, random_state)
        n_train = demo.train_size if demo is not None else int(round(0.5 * (len(X) - n_canaries)))
        _check_canaries(n_canaries, len(X))
        for key in others:
            audits[key] = _one_run_audit(
                key, X, domain, n_train, claim=stated, delta=certified_delta, **settings
            )
    for key in recipes:
        if key in DPSGD:  # the accountant's curve is the claim unless one is given
            audits[key], rows = _dpsgd_one_run_audit(
                key, population, claim=claim, delta=delta, white_box=white_box, **settings
            )
            source = "population (label last)" if population is not None else "breast-cancer table"
            n_rows = {**n_rows, source: rows}
    # a white-box reading is named on the card: it is another attack than the black-box one
    suffix = ", white-box: per-step gradients" if white_box else ""
    return OneRunResult(
        recipes=tuple(OneRunRecipe(key, RECIPES[key] + suffix, audits[key]) for key in recipes),
        confidence=confidence,
        n_rows=n_rows,
    )


def _check_white_box(recipes, white_box, multi_run=False):
    """White-box reading needs recipes that record their noisy gradients, in one run."""
    if not white_box:
        return
    if multi_run:
        raise AuditInputError(
            "white_box=True reads one training's per-step noisy gradients: it needs "
            "design='one_run'."
        )
    others = [key for key in recipes if key not in WHITE_BOX]
    if others:
        raise AuditInputError(
            f"white_box=True reads the per-step noisy gradients of {', '.join(WHITE_BOX)}; "
            f"the recipe {others[0]} records none (audit it with white_box=False)."
        )


def _check_canaries(n_canaries, n_rows):
    if not 10 <= n_canaries <= n_rows - 2:
        raise AuditInputError(
            f"n_canaries={n_canaries} must be between 10 and the population's size minus 2 "
            f"({n_rows - 2})."
        )


def _one_run_audit(key, X, domain, n_train, *, n_canaries, epsilon, claim, delta, confidence, seed):
    """One training of a built-in recipe with ``n_canaries`` population records as canaries:
    its fitted audit."""
    from ....algorithm import AlgorithmAudit

    subject = _subject(key, epsilon=epsilon, relation="add_remove", domain=domain, n_train=n_train)
    return AlgorithmAudit(
        subject.inputs.recipe,
        design="one_run",
        n_canaries=n_canaries,
        train_size=min(n_train, len(X) - n_canaries),
        n_synthetic=subject.inputs.n_synthetic,
        featurizer=subject.inputs.featurizer,
        claim=claim,
        delta=delta,
        confidence=confidence,
        random_state=seed,
    ).fit(X)


def _dpsgd_one_run_audit(
    key, population, *, n_canaries, epsilon, claim, delta, confidence, seed, white_box
):
    """One training of a DP-SGD recipe with Dirac canaries
    (:func:`~sklearn_mace.algorithm.make_dirac_canaries`, each in with probability ½): its
    fitted audit and the number of records. The recipe is calibrated to ``epsilon`` at
    δ = 1e-5 and claims its accountant's curve (``privacy_claim()``) unless ``claim`` is
    given; its ε is certified at δ = 1e-5 unless ``delta`` is. ``white_box``: the recipe
    records its noisy gradients and :class:`~sklearn_mace.algorithm.DPSGDGradientScores`
    reads them."""
    from ....algorithm import AlgorithmAudit, DPSGDGradientScores, make_dirac_canaries

    records = classification_records(population)
    _check_dirac_memory(len(records), records.shape[1], n_canaries)
    members, canaries = make_dirac_canaries(records, n_canaries)
    recipe = make_recipe(key, epsilon=epsilon, relation="add_remove", domain=None)
    if white_box:
        recipe.set_params(record_gradients=True)
    audit = AlgorithmAudit(
        recipe,
        design="one_run",
        targets=canaries,
        train_size=len(members),
        featurizer=DPSGDGradientScores() if white_box else None,
        claim=recipe.privacy_claim() if claim is None else claim,
        delta=DPSGD_DELTA if delta is None else delta,
        confidence=confidence,
        random_state=seed,
    ).fit(members)
    return audit, len(records)


#: the most memory the Dirac canaries' dense table may take (each canary adds a column)
DIRAC_MAX_BYTES = 2 * 1024**3


def _check_dirac_memory(n_records, n_columns, n_canaries):
    """Each Dirac canary is a column of its own: refuse a table that would not fit."""
    needed = 8 * (n_records + n_canaries) * (n_columns + n_canaries)
    if needed > DIRAC_MAX_BYTES:
        raise AuditInputError(
            f"n_canaries={n_canaries} Dirac canaries on {n_records} records make a "
            f"{needed / 1024**3:.1f} GiB table (a column per canary); at most "
            f"{DIRAC_MAX_BYTES / 1024**3:.0f} GiB: use fewer canaries."
        )


def classification_records(population):
    """The records a DP-SGD recipe trains on: standardized features, the label last.

    Parameters
    ----------
    population : DataFrame or None
        Numeric columns, the label last; None: scikit-learn's bundled breast-cancer table
        (569 records, 30 features, offline).

    Returns
    -------
    records : ndarray of shape (n_records, n_features + 1)
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    if population is None:
        X, y = load_breast_cancer(return_X_y=True)
    else:
        numeric = population.select_dtypes("number")
        if (
            numeric.shape[1] != population.shape[1]
            or numeric.shape[1] < 2
            or population.isna().any().any()
        ):
            raise AuditInputError(
                "a DP-SGD recipe reads the population as numeric features (at least one) with "
                "the label in the last column, without missing values; encode the other "
                "columns first."
            )
        X, y = numeric.iloc[:, :-1].to_numpy(float), numeric.iloc[:, -1].to_numpy()
    return np.column_stack([StandardScaler().fit_transform(X), y])
