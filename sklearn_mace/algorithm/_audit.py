"""Audit a training algorithm, not one output: shadow runs with and without a target.

Privacy is a property of the algorithm: ε-DP bounds every test of "was the target in the
training set?" over the algorithm's randomness, whatever the other records are. So the
auditor re-runs the recipe many times on neighbouring datasets — with the target and
without it (add/remove-one) or with a replacement instead (substitute-one) — featurizes
each output about the target, trains an attack on part of the runs and bounds the
attack's error rates on the others with exact (Clopper–Pearson) intervals; the
hypothesis-testing form of DP turns them into a certified lower bound on ε (Jagielski,
Ullman & Oprea 2020; Nasr et al. 2021, 2023; for synthetic data Stadler et al. 2022,
TAPAS, Annamalai et al. 2024).
"""

import os
import warnings
from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
from joblib import hash as joblib_hash
from sklearn.base import BaseEstimator
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..metrics._audit import _best_threshold, audit_epsilon
from ..metrics._fdp import equal_error_threshold, mu_from_error_bounds, select_threshold
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ._claims import PrivacyClaim
from ._featurize import ReleaseFeatures
from ._runs import (
    FORMAT_VERSION,
    RunPlan,
    RunStore,
    has_random_state,
    output_parameter,
    run_all,
    seeded,
)
from ._targets import METHODS, select_vulnerable_records

__all__ = ["AlgorithmAudit"]

#: How much stricter the level is at which candidate thresholds are ranked than the level
#: of the certificate. Measured over 300 simulated split audits of the Laplace mechanism
#: (1 000 runs per side): mean certified ε 0.635·ε at 10 against 0.607·ε at 1, and the
#: 2-DP mechanism claimed at ε = 1 contradicted in 97 % of audits against 92 %; equal or
#: better on Gaussian scores (shifts 1, 2, 4; 300 to 3 000 runs per side).
SELECTION_STRICTNESS = 10

#: What the default attack reads from a classifier recipe's model about the target.
MODEL_OUTPUTS = ("loss", "true_label_log_odds")


def _recipe_kind(recipe):
    if hasattr(recipe, "sample"):
        return "generator"
    if hasattr(recipe, "predict_proba") or hasattr(recipe, "decision_function"):
        return "classifier"
    raise TypeError(
        f"recipe must be a generator with fit(X) and sample(n) or a classifier with fit(X, y) "
        f"and predict_proba; got {type(recipe).__name__}."
    )


def _response(attack, X):
    if hasattr(attack, "decision_function"):
        return attack.decision_function(X)
    return attack.predict_proba(X)[:, 1]


def _column_scales(X):
    spread = X.std(axis=0)
    return np.where(spread > 0, spread, 1.0)


class AlgorithmAudit(BaseEstimator):
    """Certified ε lower bound of a training recipe, from shadow runs with and without targets.

    The recipe — an unfitted generator with ``fit(X)`` and ``sample(n)`` (scikit-learn's
    ``GaussianMixture``, :class:`DPHistogramSynthesizer`, the sdv / ctgan / smartnoise
    adapters) or a classifier with ``fit(X, y)`` — is trained ``n_runs`` times on datasets
    that hold a target and ``n_runs`` times on neighbouring datasets that do not:

    * ``relation="add_remove"``: ``n_train − 1`` population records, plus the target or not;
    * ``relation="substitute"``: ``n_train − 1`` population records plus the target, or plus
      another population record (the replacement) instead.

    With ``datasets="fresh"`` every run draws its records anew from the population; with
    ``"fixed"`` one draw serves every run (only the recipe's randomness varies: a tighter,
    more worst-case audit of the same claim). Both are valid: DP bounds every pair of
    neighbouring datasets, hence every mixture of them.

    Each output is featurized about the target (``featurizer``: :class:`ReleaseFeatures`
    for a release, the model's loss and log-odds on the target for a classifier), an
    attack is trained on ``attack_fraction`` of the runs of each side, its threshold is
    chosen on its scores of those runs, and the error rates of that one rule on the
    remaining runs get exact Clopper–Pearson bounds
    (:func:`~sklearn_mace.metrics.audit_epsilon` with an explicit threshold). Under
    (ε, δ)-DP every test has ``FPR + e^ε·FNR >= 1 − δ`` (Kairouz et al. 2015), so

    ``ε >= log((1 − δ − FNR_upper) / FPR_upper)``

    holds with the stated confidence: the certified ε of the recipe under that neighbour
    relation. The runs are independent draws of the algorithm, exactly what the
    Clopper–Pearson bounds assume (Jagielski et al. 2020).

    Several targets: the runs without any target are shared, and each target's bound is
    certified at confidence ``1 − α/k`` (Bonferroni, ``α = 1 − confidence``), so all ``k``
    claims hold together with probability at least ``confidence``.

    Runs are joblib tasks (``n_jobs``; ``joblib.parallel_config(backend="dask")`` runs them
    on a Dask cluster unchanged). Every seed is drawn from ``random_state`` before any run
    starts, so the result does not depend on the backend. With ``results_path``, finished
    runs are appended to that file as they come back and an interrupted audit started again
    with the same settings resumes from it.

    Parameters
    ----------
    recipe : estimator
        Unfitted generator (``fit(X)``, ``sample(n)``) or classifier (``fit(X, y)``,
        ``predict_proba``). Cloned per run, never fitted itself; every ``random_state``
        parameter (nested ones too) is set to the run's own seed, replacing a fixed one (a
        fixed seed would make every run the same draw). A recipe without one draws from
        global generators, and the runs cannot be reproduced (a ``UserWarning`` says so).
    targets : int or array-like of shape (n_targets, n_features), default=1
        The records audited. An int ``k``: the population's ``k`` most vulnerable records
        (:func:`select_vulnerable_records` with ``vulnerability``). An array: those records,
        e.g. canaries from :func:`make_canaries`. A target that is a row of the population
        (the first row equal to it) is left out of the pool the training sets are drawn
        from; other rows with the same values stay (other people who share them: a
        histogram cell stays populated).
    relation : {"add_remove", "substitute"}, default="add_remove"
        The neighbour relation whose ε is audited.
    n_runs : int >= 10, default=1000
        Runs per side: ``n_runs`` without any target and ``n_runs`` with each target, so
        ``n_runs·(1 + n_targets)`` trainings. With ``n`` runs per side no audit can certify
        much more than ``log(n/3)``.
    train_size : float in (0, 1) or int >= 2, default=0.5
        Rows of a training set that holds the target: a fraction of the population (targets
        left out) or a count.
    datasets : {"fresh", "fixed"}, default="fresh"
        Draw each run's other records anew, or once for all runs.
    n_synthetic : int >= 1 or None, default=None
        Generators: rows of each release, ``recipe.sample(n_synthetic)``. None calls
        ``recipe.sample()`` and takes the size the recipe chooses
        (:class:`DPHistogramSynthesizer`'s histogram release). The size must not depend on
        the training set (it would leak the add/remove neighbour by itself), so recipes
        whose ``sample`` needs a size (``GaussianMixture``) need an int. Ignored for
        classifiers.
    featurizer : transformer or None, default=None
        Turns one run's output into features of the targets: its first constructor parameter
        receives the output (a release or a fitted model), then ``fit_transform(targets)``
        gives one row per target. None: :class:`ReleaseFeatures` with the population's
        standard deviations as ``scale`` for generators;
        :class:`~sklearn_mace.queries.ClassifierQuery` with ``outputs=("loss",
        "true_label_log_odds")`` for classifiers (records carry their label in the last
        column, as for ``ClassifierQuery``). Under substitute-one the featurizer also reads
        each run's replacement record (columns ``*_replacement``, the same for every target):
        both records of the swap. A featurizer whose one column is already the score
        (``is_membership_score = True``: :class:`DPSGDGradientScores`, white-box DP-SGD)
        makes the one-run design train no attack and guess on every canary.
    attack : classifier or None, default=None
        Learns member (1) vs non-member (0) runs from the features; its
        ``decision_function`` (or ``predict_proba[:, 1]``) scores a run. None: standardized
        features into a ``LogisticRegression``; under substitute-one, through piecewise-linear
        splines of each feature first (an additive model: a swap moves the target's and
        the replacement's features independently).
    attack_fraction : float in (0, 1), default=0.5
        Fraction of each side's runs that trains the attack and chooses its threshold; the
        rest certify.
    certificate : {"threshold", "rank_test"}, default="threshold"
        How the certifying runs' scores become the ε bound (multi-run design).
        ``"threshold"``: one rule's (FPR, FNR) with Clopper–Pearson bounds, as described
        above. ``"rank_test"``: that point at ``α/2`` (the figure's point and the curve
        test), and two rank tests on all certifying runs, each at ``α/2``: the members above
        the non-members' (k+1)-th highest score plus the non-members below the members'
        (k+1)-th lowest, at pre-registered ranks (3, 10 and 25 % of the runs; both tails
        and each alone, Bonferroni over the 9), calibrated by simulation on the worst case
        the claim allows — for the (ε, δ) claims at ``delta_`` the randomized-response pair,
        for the μ-GDP claims the Gaussian pair ``N(μ, 1)`` against ``N(0, 1)``; each
        pair's law dominates that of every mechanism the claim allows for such a statistic,
        and the ranks depend on the run counts only, so no run is spent choosing them (the
        argument is in ``sklearn_mace/metrics/_rank_test.py``). ``epsilon_lower_bounds_``
        is the larger of the point's ε and the ε test's, ``mu_lower_bounds_`` the larger of
        the point's μ and the μ test's: each valid at ``confidence`` (both together at
        ``1 − 3α/2``: three events at ``α/2``). Tighter where DP is pure and the output
        discrete (simulated, 1 000 runs per side, ``attack_fraction=0.1``: the DP histogram
        at ε = 1 certifies 0.79 ε against 0.64 ε; randomized response ε = 2 0.91 against
        0.89; the Gaussian count, μ ≈ 0.27, certifies a larger μ too, as the audit runs it
        with ``attack_fraction=0.1``: 0.52 μ against 0.20 μ for the split rule,
        ``benchmarks/bench_algorithm_tightness.py --part mu-rank``); its two rank tests cost
        about 1.6 CPU s each per target at 500 certifying runs per side, 20 s each at 5 000.
    claim : PrivacyClaim or None, default=None
        The claim tested, as a trade-off curve (:class:`PrivacyClaim`: pure, (ε, δ),
        μ-GDP or an accountant's ε(δ) curve, each with its neighbour relation). A claim
        stated for add/remove-one and audited with ``relation="substitute"`` is converted by
        group privacy (``claim_``, ``claim_.describe()`` says so).
    claimed_epsilon : float >= 0 or None, default=None
        Shorthand for ``claim=PrivacyClaim.approximate(claimed_epsilon, delta or 0,
        relation=relation)``; give one of ``claim`` and ``claimed_epsilon``.
    delta : float in [0, 1) or None, default=None
        The δ at which ``epsilon_lower_bounds_`` is reported (and of the ``claimed_epsilon``
        shorthand). None: the claim's own δ on the audited relation (``claim_.delta``; 0 for a
        Gaussian claim or without a claim).
    confidence : float in (0, 1), default=0.95
        Joint confidence of all targets' bounds.
    vulnerability : {"knn_distance", "local_outlier_factor", "rare_values"}, \
default="knn_distance"
        How ``targets=k`` ranks the population (:func:`vulnerability_scores`).
    design : {"multi_run", "one_run"}, default="multi_run"
        ``"multi_run"``: the shadow runs above. ``"one_run"`` (Steinke, Nasr & Jagielski
        2023): ``n_canaries`` canaries — the ``targets`` array, or that many population
        rows drawn at random — each put into **one** training set independently with
        probability ½; the recipe is trained once, the attack learns from
        ``attack_fraction`` of the canaries and scores the others, and the
        highest/lowest-scored are guessed "in"/"out" (several guess counts, Bonferroni).
        ``epsilon_lower_bounds_`` is Steinke et al.'s bound, ``mu_lower_bounds_`` and
        ``contradicted_`` read the guesses against Gaussian curves and the claimed curve
        (Mahloujifar, Melis & Chaudhuri 2025); each holds at ``confidence``. Add/remove-one
        only (a canary is in or out); one training, so ``n_runs``, ``datasets``,
        ``results_path`` and ``n_jobs`` play no part.
    n_canaries : int >= 10, default=1000
        Canaries of the one-run design when ``targets`` is not an array.
    results_path : str, path-like or None, default=None
        A file the runs' features are appended to as they finish (JSON lines); fitting again
        with the same settings resumes from it. Nothing else is written anywhere.
    n_jobs : int, default=None
        Runs in parallel through joblib (None is 1 unless in a ``joblib.parallel_config``
        context, −1 is all processors). The result does not depend on it.
    random_state : int, RandomState instance or None, default=None
        Every seed: the runs' datasets and recipes, the fixed dataset, the attack's split.
    verbose : int, default=0
        Show a progress bar over the runs when > 0.

    Attributes
    ----------
    targets_ : ndarray of shape (n_targets, n_features)
        The records audited.
    target_indices_ : ndarray of int of shape (n_targets,)
        Row of the population each target is (the first equal row; −1 for a record that
        is not one), left out of the training sets' pool.
    n_train_ : int
        Rows of a training set that holds the target.
    feature_names_ : ndarray of str
        Names of the featurizer's columns.
    run_features_ : ndarray of shape (n_targets, 2 * n_runs, n_output_features)
        Per target, the features of its ``n_runs`` runs with it, then of the ``n_runs`` runs
        without any target.
    run_membership_ : ndarray of int of shape (2 * n_runs,)
        1 for the runs with the target, 0 for those without (rows of ``run_features_``).
    certify_mask_ : ndarray of bool of shape (2 * n_runs,)
        The runs whose scores the bound uses (the others trained the attack).
    run_scores_ : ndarray of shape (n_targets, 2 * n_runs)
        The fitted attack's score of every run (the runs it was trained on included).
    attacks_ : list of fitted classifiers
        One attack per target.
    audits_ : list of EpsilonAudit
        Per target, the bound and its operating point (threshold, FPR/FNR and their upper
        bounds).
    epsilon_lower_bounds_ : ndarray of shape (n_targets,)
        Certified ε per target at δ = ``delta_``, jointly at ``confidence``
        (``certificate="rank_test"``: the larger of the point's and the rank test's; the
        same number is ``audits_[j].epsilon_lower_bound``).
    rank_epsilon_lower_bounds_ : ndarray of shape (n_targets,) or None
        ``certificate="rank_test"``: the rank test's own ε per target (at ``α/2``); None
        otherwise.
    rank_pairs_ : list of tuple or None
        ``certificate="rank_test"``: per target, the ``(k_high, k_low)`` ranks whose test gave
        that bound (None for a tail left out; ``(None, None)`` when no test certified).
    rank_mu_lower_bounds_ : ndarray of shape (n_targets,) or None
        ``certificate="rank_test"``: the μ rank test's own μ per target (at ``α/2``, Gaussian
        worst case); None otherwise.
    rank_mu_pairs_ : list of tuple or None
        ``certificate="rank_test"``: per target, the ranks whose μ test gave that bound.
    mu_lower_bounds_ : ndarray of shape (n_targets,)
        Per target, the largest μ for which the recipe is certified *not* μ-GDP (from the
        same certified point: ``Φ⁻¹(1 − fpr_u) − Φ⁻¹(fnr_u)``), jointly with the ε bounds.
        ``certificate="rank_test"``: the larger of that point's μ (at ``α/2``) and the μ
        rank test's (at ``α/2``), valid at ``confidence`` on its own.
    claim_ : PrivacyClaim or None
        The claim on the audited relation (converted by group privacy when it was stated
        for add/remove-one and the runs substitute); None without a claim.
    delta_ : float
        The δ of ``epsilon_lower_bounds_``.
    per_target_confidence_ : float
        ``1 − α/n_targets``, the level of each target's bound.
    roc_curves_ : list of tuple of ndarray
        Per target, ``(fpr, tpr)`` of the attack on the certifying runs.
    auc_ : ndarray of shape (n_targets,)
        Area under each of those ROC curves.
    contradicted_ : ndarray of bool of shape (n_targets,) or None
        Whether the target's certified point ``(fpr_u, fnr_u)`` lies below the claimed curve
        ``claim_.tradeoff`` (in either orientation); for an (ε, δ) claim at ``delta_`` that is
        ``epsilon_lower_bounds_ > ε``. ``certificate="rank_test"``: or the rank test of the
        claim's kind rejects it (a μ-GDP claim: ``rank_mu_lower_bounds_ > μ``; any other:
        ``rank_epsilon_lower_bounds_`` above its ε at ``delta_``): at most α for a true
        claim. One-run design: whether the guesses reject the
        claimed curve, or certify an ε above the claim's at ``delta_`` (no point there: one
        run refutes curves). None without a claim.
    canary_included_ : ndarray of bool of shape (n_canaries,)
        One-run design only: which canaries were in the training set (the others of
        ``run_*``/``audits_``/``roc_curves_``/``auc_`` exist for the multi-run design only).
    canary_features_, canary_scores_ : ndarray
        One-run design: the canaries' features and the attack's scores.
    guesses_ : dict of ndarray
        One-run design: per guess count, ``n_guesses``, ``n_correct``, ``steinke_epsilon``,
        ``fdp_epsilon``, ``fdp_mu``, ``claim_statistic`` (> 0: the claimed curve is
        rejected) and ``confidence``, the level of each (``α`` over the number of guess
        counts times the number of bounds: all of them hold together at ``confidence``).
    fdp_epsilon_lower_bounds_ : ndarray of shape (1,)
        One-run design: the largest ε whose (ε, δ) curve the f-DP recursion rejects.
    n_features_in_ : int
        Columns of the population.

    See Also
    --------
    DPHistogramSynthesizer : a recipe of known ε to check the audit against.
    select_vulnerable_records, make_canaries : targets worth auditing.
    sklearn_mace.metrics.audit_epsilon : the bound, from any scores.

    References
    ----------
    M. Jagielski, J. Ullman, A. Oprea. Auditing Differentially Private Machine Learning: How
    Private is Private SGD? NeurIPS 2020, §3. M. Nasr, J. Hayes, T. Steinke, B. Balle,
    F. Tramèr, M. Jagielski, N. Carlini, A. Terzis. Tight Auditing of Differentially Private
    Machine Learning. USENIX Security 2023. T. Stadler, B. Oprisanu, C. Troncoso. Synthetic
    Data — Anonymisation Groundhog Day. USENIX Security 2022. M. S. M. S. Annamalai, B. Balle,
    E. De Cristofaro, J. Hayes. It's Our Loss: No Privacy Amplification for Hidden State in
    DP-SGD With Non-Convex Loss / Nearly Tight Black-Box Auditing of DP Synthetic Data
    Generators (USENIX Security 2024). P. Kairouz, S. Oh, P. Viswanath. The Composition
    Theorem for Differential Privacy. ICML 2015, Thm 2.1.

    Examples
    --------
    The wrong-noise histogram claims ε = 1 but is 2-DP. With 200 runs per side on one
    fixed draw of the other records the attack separates the runs well (AUC 0.79), and the
    certified ε is a valid lower bound — but too small a run count to exceed the claim:
    1 000 runs per side contradicted it in 39 of 40 audits (``dp_histogram_demo``'s
    setting, measured in the issue #19 note).

    >>> import numpy as np
    >>> from sklearn_mace.algorithm import AlgorithmAudit, WrongNoiseHistogramSynthesizer
    >>> population = np.random.default_rng(0).integers(0, 3, size=(600, 2))
    >>> recipe = WrongNoiseHistogramSynthesizer(epsilon=1.0, categories=3)
    >>> audit = AlgorithmAudit(recipe, targets=[[1, 1]], n_runs=200, train_size=100,
    ...                        datasets="fixed", claimed_epsilon=1.0,
    ...                        random_state=0).fit(population)
    >>> audit.epsilon_lower_bounds_.round(2), audit.auc_.round(2), audit.contradicted_
    (array([0.83]), array([0.79]), array([False]))
    """

    _parameter_constraints: dict = {
        "recipe": [HasMethods(["fit"])],
        "targets": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "relation": [StrOptions({"add_remove", "substitute"})],
        "n_runs": [Interval(Integral, 10, None, closed="left")],
        "train_size": [
            Interval(Real, 0, 1, closed="neither"),
            Interval(Integral, 2, None, closed="left"),
        ],
        "datasets": [StrOptions({"fresh", "fixed"})],
        "n_synthetic": [None, Interval(Integral, 1, None, closed="left")],
        "featurizer": [None, HasMethods(["fit", "transform"])],
        "attack": [None, HasMethods(["fit"])],
        "attack_fraction": [Interval(Real, 0, 1, closed="neither")],
        "certificate": [StrOptions({"threshold", "rank_test"})],
        "claim": [None, PrivacyClaim],
        "claimed_epsilon": [None, Interval(Real, 0, None, closed="left")],
        "delta": [None, Interval(Real, 0, 1, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "vulnerability": [StrOptions(set(METHODS))],
        "design": [StrOptions({"multi_run", "one_run"})],
        "n_canaries": [Interval(Integral, 10, None, closed="left")],
        "results_path": [None, str, os.PathLike],
        "n_jobs": [None, Integral],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        recipe,
        *,
        targets=1,
        relation="add_remove",
        n_runs=1000,
        train_size=0.5,
        datasets="fresh",
        n_synthetic=None,
        featurizer=None,
        attack=None,
        attack_fraction=0.5,
        certificate="threshold",
        claim=None,
        claimed_epsilon=None,
        delta=None,
        confidence=0.95,
        vulnerability="knn_distance",
        design="multi_run",
        n_canaries=1000,
        results_path=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.recipe = recipe
        self.targets = targets
        self.relation = relation
        self.n_runs = n_runs
        self.train_size = train_size
        self.datasets = datasets
        self.n_synthetic = n_synthetic
        self.featurizer = featurizer
        self.attack = attack
        self.attack_fraction = attack_fraction
        self.certificate = certificate
        self.claim = claim
        self.claimed_epsilon = claimed_epsilon
        self.delta = delta
        self.confidence = confidence
        self.vulnerability = vulnerability
        self.design = design
        self.n_canaries = n_canaries
        self.results_path = results_path
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ set-up

    def _resolve_targets(self, X):
        if isinstance(self.targets, Integral) and not isinstance(self.targets, bool):
            indices = select_vulnerable_records(X, self.targets, method=self.vulnerability)
            return X[indices], indices
        targets = check_array(self.targets, dtype=np.float64, input_name="targets")
        if targets.shape[1] != X.shape[1]:
            raise ValueError(
                f"targets have {targets.shape[1]} columns but the population X has "
                f"{X.shape[1]}; a target is a record of the same table."
            )
        # rows by value (+ 0.0 makes −0.0 and 0.0 one key, as == does): a dict instead of
        # comparing every target with every row (1 000 canaries × 570 rows took 0.5 s)
        rows_of = {}
        for row, values in enumerate(X + 0.0):
            rows_of.setdefault(values.tobytes(), []).append(row)
        indices = np.full(len(targets), -1)
        for j, target in enumerate(targets + 0.0):
            rows = rows_of.get(target.tobytes())
            if rows:  # the first equal row not already another target's
                indices[j] = rows.pop(0)
        return targets, indices

    def _resolve_n_train(self, n_pool):
        extra = self.relation == "substitute"  # the replacement comes from the pool too
        if isinstance(self.train_size, Integral):
            n_train = int(self.train_size)
        else:
            n_train = int(round(self.train_size * n_pool))
        if not 2 <= n_train <= n_pool + 1 - extra:
            raise ValueError(
                f"train_size={self.train_size!r} gives training sets of {n_train} rows, but the "
                f"population has {n_pool} row(s) besides the targets: at least 2 and at most "
                f"{n_pool + 1 - extra} are possible. Give a larger population or another "
                "train_size."
            )
        return n_train

    def _default_featurizer(self, kind, pool):
        if self.featurizer is not None:
            return self.featurizer
        if kind == "generator":
            return ReleaseFeatures(None, scale=_column_scales(pool))
        from ..queries._classifier import ClassifierQuery

        return ClassifierQuery(None, outputs=MODEL_OUTPUTS, device="cpu")

    def _check_n_synthetic(self, kind):
        if kind != "generator" or self.n_synthetic is not None:
            return
        import inspect

        try:
            parameters = list(inspect.signature(self.recipe.sample).parameters.values())
        except (TypeError, ValueError):
            return
        if parameters and parameters[0].default not in (None, inspect.Parameter.empty):
            raise ValueError(
                f"n_synthetic=None calls {type(self.recipe).__name__}.sample() with no size, "
                f"which draws its default {parameters[0].name}={parameters[0].default!r} rows; "
                "give n_synthetic, the same for every run."
            )

    def _fit_one_run(self, X, kind):
        from ._one_run import fit_one_run

        if self.relation != "add_remove":
            raise ValueError(
                "design='one_run' inserts or leaves out each canary: it audits "
                "relation='add_remove' only (an add/remove claim is what it refutes)."
            )
        featurizer = self._default_featurizer(kind, X)
        fit_one_run(self, X, kind, featurizer)
        self.feature_names_ = self._feature_names(
            RunPlanNames(featurizer), self.canary_features_.shape[1]
        )
        return self

    def _resolve_claim(self):
        """The claim on the audited relation and the δ of the ε bounds: ``(claim_, delta_)``."""
        if self.claim is not None and self.claimed_epsilon is not None:
            raise ValueError(
                "give either claim or claimed_epsilon (its pure/(ε, δ) shorthand), not both."
            )
        claim = self.claim
        if self.claimed_epsilon is not None:
            delta = 0.0 if self.delta is None else self.delta
            claim = PrivacyClaim.approximate(self.claimed_epsilon, delta, relation=self.relation)
        if claim is not None:
            claim = claim.under(self.relation)
        if self.delta is not None:
            return claim, float(self.delta)
        return claim, 0.0 if claim is None else claim.delta

    def _replacement_rows(self, pool):
        """Substitute-one: the pool rows equal to no target (a replacement must differ)."""
        if self.relation != "substitute":
            return None
        equal = (pool[:, None, :] == self.targets_[None, :, :]).all(axis=2).any(axis=1)
        rows = np.flatnonzero(~equal)
        if rows.size == 0:
            raise ValueError(
                "relation='substitute' needs a replacement record that differs from the "
                "targets, but every population row equals a target."
            )
        return rows

    def _seeds(self, n_total):
        rng = check_random_state(self.random_state)
        # runs' (data, recipe) seeds, then (fixed dataset, attack split): all up front
        return rng.randint(np.iinfo(np.int32).max, size=(n_total + 1, 2)).astype(np.int64)

    # ------------------------------------------------------------------ fit

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Run the recipe with and without every target, attack the runs, certify ε.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The population the training sets are drawn from (numeric). For a classifier
            recipe the class label is the last column.
        y : None
            Ignored.

        Returns
        -------
        self : AlgorithmAudit
            The fitted audit.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=3)
        kind = _recipe_kind(self.recipe)
        self.claim_, self.delta_ = self._resolve_claim()
        if self.design == "one_run":
            if self.certificate != "threshold":  # an option the design would silently ignore
                from ._one_run import certificate_refusal

                raise ValueError(certificate_refusal(self.certificate))
            return self._fit_one_run(X, kind)
        self._check_n_synthetic(kind)
        if not has_random_state(self.recipe):
            warnings.warn(
                f"recipe {type(self.recipe).__name__} has no random_state parameter: its runs "
                "draw from global generators and cannot be reproduced.",
                UserWarning,
                stacklevel=2,
            )
        self.targets_, self.target_indices_ = self._resolve_targets(X)
        is_target = np.zeros(len(X), dtype=bool)
        is_target[self.target_indices_[self.target_indices_ >= 0]] = True
        pool = X[~is_target]
        self.n_train_ = self._resolve_n_train(len(pool))

        n_targets = len(self.targets_)
        n_total = self.n_runs * (1 + n_targets)
        seeds = self._seeds(n_total)
        featurizer = self._default_featurizer(kind, pool)
        plan = RunPlan(
            recipe=self.recipe,
            kind=kind,
            featurizer=featurizer,
            output_parameter=output_parameter(featurizer),
            pool=pool,
            targets=self.targets_,
            relation=self.relation,
            n_train=self.n_train_,
            n_runs=self.n_runs,
            n_synthetic=self.n_synthetic if kind == "generator" else None,
            fixed_seed=None,
            replacement_rows=self._replacement_rows(pool),
        )
        fingerprint = (
            None
            if self.results_path is None
            else joblib_hash(
                (
                    FORMAT_VERSION,
                    self.recipe,
                    kind,
                    plan.featurizer,
                    pool,
                    self.targets_,
                    self.relation,
                    self.n_train_,
                    self.n_runs,
                    plan.n_synthetic,
                    self.datasets,
                )
            )
        )
        store = RunStore(self.results_path)
        done, seeds = store.load(fingerprint, seeds, self.random_state is not None)
        store.start(fingerprint, seeds)
        if self.datasets == "fixed":
            plan = replace(plan, fixed_seed=int(seeds[-1, 0]))

        from tqdm.auto import tqdm

        with tqdm(
            total=n_total,
            initial=len(done),
            desc="shadow runs",
            unit="run",
            disable=not self.verbose,
        ) as progress:
            results = run_all(plan, seeds[:-1], done, store, n_jobs=self.n_jobs, progress=progress)
        self._certify(plan, results, int(seeds[-1, 1]))
        return self

    # ------------------------------------------------------------------ certify

    def _certify(self, plan, results, split_seed):
        n, k = self.n_runs, len(self.targets_)
        without = np.stack([results[run] for run in range(n)])  # (n, k, q)
        q = without.shape[2]
        features = np.empty((k, 2 * n, q))
        for j in range(k):
            with_j = np.concatenate([results[n * (1 + j) + i] for i in range(n)])
            features[j] = np.vstack([with_j, without[:, j, :]])
        membership = np.r_[np.ones(n, dtype=int), np.zeros(n, dtype=int)]

        rng = np.random.RandomState(split_seed)
        n_fit = int(round(self.attack_fraction * n))
        if not 5 <= n_fit <= n - 1:
            raise ValueError(
                f"attack_fraction={self.attack_fraction} of n_runs={n} trains the attack on "
                f"{n_fit} run(s) per side; at least 5 are needed and at least one must be left "
                "to certify. Use more runs or another attack_fraction."
            )
        fit_part = np.zeros(2 * n, dtype=bool)
        fit_part[rng.permutation(n)[:n_fit]] = True
        fit_part[n + rng.permutation(n)[:n_fit]] = True
        alpha_k = (1.0 - self.confidence) / k
        attack_seed = int(rng.randint(np.iinfo(np.int32).max))
        ranked = self.certificate == "rank_test"
        rank_seed = int(rng.randint(np.iinfo(np.int32).max)) if ranked else None

        template = self._default_attack()
        self.attacks_, self.audits_, self.roc_curves_ = [], [], []
        self.rank_epsilon_lower_bounds_ = np.zeros(k) if ranked else None
        self.rank_mu_lower_bounds_ = np.zeros(k) if ranked else None
        self.rank_pairs_ = [] if ranked else None
        self.rank_mu_pairs_ = [] if ranked else None
        scores = np.empty((k, 2 * n))
        for j in range(k):
            attack, audit, scores[j], roc = self._certify_one(
                template,
                features[j],
                membership,
                fit_part,
                alpha_k / 2 if ranked else alpha_k,
                attack_seed,
            )
            if ranked:
                ranks = _rank_certify(
                    audit,
                    scores[j][~fit_part],
                    membership[~fit_part],
                    alpha_k,
                    self.delta_,
                    [rank_seed, j],
                )
                audit = ranks.audit
                self.rank_epsilon_lower_bounds_[j], self.rank_mu_lower_bounds_[j] = ranks.bounds
                self.rank_pairs_.append(ranks.pairs[0])
                self.rank_mu_pairs_.append(ranks.pairs[1])
            self.attacks_.append(attack)
            self.audits_.append(audit)
            self.roc_curves_.append(roc)

        self.feature_names_ = self._feature_names(plan, q)
        self.run_features_ = features
        self.run_membership_ = membership
        self.certify_mask_ = ~fit_part
        self.run_scores_ = scores
        self.per_target_confidence_ = 1.0 - alpha_k
        self.epsilon_lower_bounds_ = np.array([audit.epsilon_lower_bound for audit in self.audits_])
        fpr_upper = np.array([audit.fpr_upper for audit in self.audits_])
        fnr_upper = np.array([audit.fnr_upper for audit in self.audits_])
        self.mu_lower_bounds_ = mu_from_error_bounds(fpr_upper, fnr_upper)
        if ranked:  # each the larger of the point's (α/2) and its rank test's (α/2)
            self.mu_lower_bounds_ = np.maximum(self.mu_lower_bounds_, self.rank_mu_lower_bounds_)
        self.auc_ = np.array([_auc(fpr, tpr) for fpr, tpr in self.roc_curves_])
        self.contradicted_ = (
            None if self.claim_ is None else self.claim_.contradicted_by(fpr_upper, fnr_upper)
        )
        if ranked and self.claim_ is not None:
            self.contradicted_ = self.contradicted_ | _rank_contradicts(self)

    def _default_attack(self):
        """The attack: the user's, or a standardized logistic regression — additive in
        piecewise-linear splines of each feature under substitute-one.

        A swap moves two independent things (the target's cell up, the replacement's down):
        the likelihood ratio is then a *sum* of one function per feature, and for a noisy
        count each is a step, not a line. A linear score of both counts reaches ε ≈ 1.07 on
        the wrong-noise histogram (claims 1, truly 2) at 500 certifying runs per side, the
        additive spline model 1.27 (40 simulated audits each: contradicted in 72 % and 95 %).
        """
        if self.attack is not None:
            return self.attack
        from sklearn.linear_model import LogisticRegression

        if self.relation == "substitute":
            from sklearn.preprocessing import SplineTransformer

            splines = SplineTransformer(
                degree=1, n_knots=10, knots="quantile", extrapolation="constant"
            )
            return make_pipeline(StandardScaler(), splines, LogisticRegression())
        return make_pipeline(StandardScaler(), LogisticRegression())

    def _certify_one(self, template, features, membership, fit_part, alpha_k, seed):
        """Fit the attack and choose its threshold on the training runs; bound on the rest.

        The threshold is chosen on the fitted attack's own scores of the runs it was trained
        on, so it is on the scale of the scores it is applied to (thresholds taken from
        cross-validated scores of other fits land on another count of a discrete feature,
        and cost half the bound, measured on the DP histogram). An attack that overfits its
        training runs picks a worse threshold; the bound stays valid, since the certifying
        runs are used for nothing else. Candidates are ranked by their bound at a level
        ``SELECTION_STRICTNESS`` times smaller than the certificate's: that favours
        thresholds with more runs behind them over the luckiest of many noisy estimates.
        """
        from sklearn.metrics import roc_curve

        attack = seeded(template, seed).fit(features[fit_part], membership[fit_part])
        scores = _response(attack, features)
        s_fit, y_fit = scores[fit_part], membership[fit_part]
        certify = ~fit_part
        s_certify, y_certify = scores[certify], membership[certify]
        audit = certify_rule(
            (s_fit[y_fit == 1], s_fit[y_fit == 0]),
            (s_certify[y_certify == 1], s_certify[y_certify == 0]),
            claim=self.claim_,
            delta=self.delta_,
            alpha=alpha_k,
        )
        fpr, tpr, _ = roc_curve(y_certify, s_certify)
        return attack, audit, scores, (fpr, tpr)

    def _feature_names(self, plan, n_columns):
        """The default featurizers' column names; positions for a featurizer of the user's."""
        names = None
        if isinstance(plan.featurizer, ReleaseFeatures):
            names = plan.featurizer._names(self.n_features_in_)
        elif self.featurizer is None:
            names = list(MODEL_OUTPUTS)
        if names is not None and self.relation == "substitute":
            names = [*names, *(f"{name}_replacement" for name in names)]
        if names is None or len(names) != n_columns:
            names = [f"feature_{i}" for i in range(n_columns)]
        return np.asarray(names, dtype=object)

    # ------------------------------------------------------------------ report

    def _one_run_summary(self, claimed_epsilon):
        import pandas as pd

        return pd.DataFrame([_one_run_row(self, claimed_epsilon)])

    def summary(self):
        """One row per target: the certified ε, its operating point and the verdict.

        Returns
        -------
        table : pandas.DataFrame
            Columns ``target`` (position), ``target_index`` (population row, −1 for a
            record outside it), ``target_record`` (the values, as text),
            ``claim`` (in words, on the audited relation), ``claimed_epsilon`` (the claim's ε
            at ``delta``), ``epsilon_lower_bound``, ``mu_lower_bound``, ``contradicted`` (None
            without a claim), ``relation``, ``delta``, ``confidence`` (joint),
            ``per_target_confidence``,
            ``n_targets``, ``n_runs`` (per side), ``n_certify_members``,
            ``n_certify_nonmembers``, ``threshold``, ``fpr``, ``fnr``, ``fpr_upper``,
            ``fnr_upper``, ``auc``, ``roc_fpr`` and ``roc_tpr`` (arrays: the attack's ROC on
            the certifying runs). The one-run design gives one row: ``design``, ``claim``,
            ``claimed_epsilon``, ``epsilon_lower_bound`` (Steinke et al.),
            ``fdp_epsilon_lower_bound``, ``mu_lower_bound``, ``contradicted``, ``relation``,
            ``delta``, ``confidence``, ``n_canaries``, ``n_scored_canaries`` and the guesses
            behind the ε bound (``n_guesses``, ``n_correct``).
        """
        import pandas as pd

        check_is_fitted(self)
        claimed_epsilon = None if self.claim_ is None else self.claim_.epsilon_at(self.delta_)
        if self.design == "one_run":
            return self._one_run_summary(claimed_epsilon)
        rows = []
        for j, audit in enumerate(self.audits_):
            fpr, tpr = self.roc_curves_[j]
            rows.append(
                {
                    "target": j,
                    "target_index": int(self.target_indices_[j]),
                    "target_record": "(" + ", ".join(f"{v:g}" for v in self.targets_[j]) + ")",
                    "claim": None if self.claim_ is None else self.claim_.describe(),
                    "claimed_epsilon": claimed_epsilon,
                    "epsilon_lower_bound": audit.epsilon_lower_bound,
                    "mu_lower_bound": float(self.mu_lower_bounds_[j]),
                    "contradicted": None
                    if self.contradicted_ is None
                    else bool(self.contradicted_[j]),
                    "relation": self.relation,
                    "delta": self.delta_,
                    "confidence": self.confidence,
                    "per_target_confidence": self.per_target_confidence_,
                    "n_targets": len(self.audits_),
                    "n_runs": self.n_runs,
                    "n_certify_members": audit.n_members,
                    "n_certify_nonmembers": audit.n_nonmembers,
                    "threshold": audit.threshold,
                    "fpr": audit.fpr,
                    "fnr": audit.fnr,
                    "fpr_upper": audit.fpr_upper,
                    "fnr_upper": audit.fnr_upper,
                    "auc": float(self.auc_[j]),
                    "roc_fpr": fpr,
                    "roc_tpr": tpr,
                }
            )
        return pd.DataFrame(rows)


class RunPlanNames:
    """What :meth:`AlgorithmAudit._feature_names` reads of a plan: its featurizer."""

    def __init__(self, featurizer):
        self.featurizer = featurizer


def _select_threshold(members, nonmembers, *, claim, delta, level, n_members, n_nonmembers):
    """Where on the curve to test: the threshold whose certified point is predicted to lie
    furthest below the claim — the largest ε at ``delta`` without a claim or for an (ε, δ)
    claim at that δ (the one objective of earlier versions), the largest ε margin over an
    accountant's pairs. A Gaussian claim is tested at its curve's symmetric point, where the
    selection runs' two error rates are equal: there a Gaussian mechanism's μ bound is at
    its best, and the estimate is a median, stable with few runs (simulated Gaussian count,
    μ = 0.27, 100 audits: mean certified 0.22 μ at 1 000 runs per side and 0.735 μ at
    10 000, against 0.07 μ and 0.72 μ for the largest predicted μ on a grid of 50 quantiles
    and the attainable 0.22 μ and 0.74 μ)."""
    epsilon_objective = claim is None or (
        claim.kind in ("pure", "approximate") and claim.delta == delta
    )
    if epsilon_objective:
        return _best_threshold(
            members,
            nonmembers,
            np.unique(np.r_[members, nonmembers]),
            level,
            level,
            delta=delta,
            objective="epsilon",
            prior=0.5,
            n_members=n_members,
            n_nonmembers=n_nonmembers,
        )
    if claim.kind == "gaussian":
        return equal_error_threshold(members, nonmembers)
    return select_threshold(
        members,
        nonmembers,
        claim.margin,
        n_members=n_members,
        n_nonmembers=n_nonmembers,
        level=level,
    )


def certify_rule(selection, certifying, *, claim, delta, alpha):
    """Choose a threshold on the selection scores, certify its rule on the others.

    ``selection`` and ``certifying`` are ``(member_scores, nonmember_scores)`` pairs. The
    threshold is chosen on ``selection`` only (:func:`_select_threshold`, ranked at
    ``alpha / 2 / SELECTION_STRICTNESS``); the rule "member iff score ≥ t" then gets exact
    Clopper–Pearson upper bounds ``(fpr_u, fnr_u)`` on the certifying scores at ``α/2`` each
    (:func:`~sklearn_mace.metrics.audit_epsilon`, explicit threshold), so with probability
    at least ``1 − α`` both hold. Returns that :class:`~sklearn_mace.metrics.EpsilonAudit`;
    ``mu_from_error_bounds`` and ``claim.margin`` read the same point.
    """
    members, nonmembers = certifying
    threshold = _select_threshold(
        *selection,
        claim=claim,
        delta=delta,
        level=alpha / 2 / SELECTION_STRICTNESS,
        n_members=len(members),
        n_nonmembers=len(nonmembers),
    )
    return audit_epsilon(
        members, nonmembers, threshold=float(threshold), delta=delta, confidence=1.0 - alpha
    )


@dataclass(frozen=True)
class RankCertificate:
    """One target's rank tests (``certificate="rank_test"``): ``bounds`` = (ε at ``delta``,
    μ), ``pairs`` = the ``(k_high, k_low)`` that gave each, ``audit`` = the point's
    :class:`~sklearn_mace.metrics.EpsilonAudit` carrying the larger ε."""

    bounds: tuple
    pairs: tuple
    audit: object


def _rank_certify(audit, scores, membership, alpha, delta, seed):
    """``certificate="rank_test"``: the rank grid on the certifying scores at ``α/2``
    against (ε, δ) claims (:func:`~sklearn_mace.metrics._rank_test.rank_grid_epsilon`,
    randomized-response worst case) and at ``α/2`` against μ-GDP claims
    (:func:`~sklearn_mace.metrics._rank_test.rank_grid_mu`, Gaussian worst case), each from
    its own stream of ``seed`` (independent of the scores). ``audit`` (the threshold's point,
    certified at ``α/2``) carries the larger ε; the ε bound (point or ε test) and the μ bound
    (point or μ test) each fail with probability at most α."""
    from ..metrics._rank_test import rank_grid_epsilon, rank_grid_mu

    members, nonmembers = scores[membership == 1], scores[membership == 0]
    epsilon, epsilon_pair = rank_grid_epsilon(
        members, nonmembers, delta=delta, alpha=alpha / 2, rng=np.random.default_rng(seed)
    )
    mu, mu_pair = rank_grid_mu(
        members, nonmembers, alpha=alpha / 2, rng=np.random.default_rng([*seed, 1])
    )
    best = max(audit.epsilon_lower_bound, epsilon)
    return RankCertificate(
        bounds=(epsilon, mu),
        pairs=(epsilon_pair, mu_pair),
        audit=replace(audit, epsilon_lower_bound=best, confidence=1.0 - alpha),
    )


def _rank_contradicts(audit):
    """The rank test of the claim's own kind, beside the point: for a μ-GDP claim the μ
    test above the claimed μ; otherwise the ε test at ``delta_`` above the claim's ε there
    (an f-DP claim implies (ε(δ), δ)-DP). With the point's verdict at ``α/2``, a true claim
    is contradicted with probability at most α."""
    claim = audit.claim_
    if claim.kind == "gaussian":
        return audit.rank_mu_lower_bounds_ > claim.mu
    return audit.rank_epsilon_lower_bounds_ > claim.epsilon_at(audit.delta_)


def _one_run_row(audit, claimed_epsilon):
    guesses = audit.guesses_
    best = int(np.argmax(guesses["steinke_epsilon"]))
    return {
        "design": "one_run",
        "claim": None if audit.claim_ is None else audit.claim_.describe(),
        "claimed_epsilon": claimed_epsilon,
        "epsilon_lower_bound": float(audit.epsilon_lower_bounds_[0]),
        "fdp_epsilon_lower_bound": float(audit.fdp_epsilon_lower_bounds_[0]),
        "mu_lower_bound": float(audit.mu_lower_bounds_[0]),
        "contradicted": None if audit.contradicted_ is None else bool(audit.contradicted_[0]),
        "relation": audit.relation,
        "delta": audit.delta_,
        "confidence": audit.confidence,
        "n_canaries": len(audit.targets_),
        "n_scored_canaries": int(audit.certify_mask_.sum()),
        "n_guesses": int(guesses["n_guesses"][best]),
        "n_correct": int(guesses["n_correct"][best]),
    }


def _auc(fpr, tpr):
    from sklearn.metrics import auc

    return float(auc(fpr, tpr))
