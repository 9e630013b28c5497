"""The default battery of the audit: which attacks run on which rows, and what is claimed.

For every synthetic release the battery scores the *target* records — the members and the
hold-out non-members — with

* DOMIAS, the density-ratio attack ``log p_G − log p_R`` with cross-validated KDE
  bandwidths (DOMIAS Eq. 2);
* MACE on the nearest-synthetic-distance query ``Q(z) = min_j ‖z − g_j‖`` (MACE Eq. 2):
  the cross-fitted Bayes-optimal attack, a certified lower bound on the optimal membership
  advantage with the p-value of "no leak", the plug-in estimate ``U_N`` (MACE Thm 6) beside
  it, and each record's held-out individual privacy risk (MACE Def. 3);
* the MC baseline (Hilprecht et al.) and GAN-leaks CAL (Chen et al.), DOMIAS Table 1.

Every attack's scores get their own certified ε lower bound
(:func:`~sklearn_mace.metrics.audit_epsilon`). A release has ``N_CLAIMS`` certified claims
(the four attacks' ε and MACE's advantage bound); each is computed at confidence
``1 − α / N_CLAIMS`` (Bonferroni), so all of them, and so the strongest, hold together with
probability ``1 − α``. The verdict uses only these claims, never ``U_N``.

DOMIAS and GAN-leaks CAL need reference rows from the population. When none are given,
half of the hold-out rows (chosen at random) become the reference and the other half stay
targets, as in the DOMIAS set-up where the reference set and the test non-members are
disjoint draws from the population.
"""

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.metrics import roc_auc_score
from sklearn.utils import check_random_state

from .._validation import check_prior
from ..metrics import advantage_bound, tpr_at_fpr
from ._attacks import (
    ATTACKS,
    attack_scores,
    certify_scores,
    mace_nearest_distance,
    nearest_distance,
)
from ._encode import encode_tables
from ._io import AuditInputError

__all__ = ["AuditResult", "ReleaseResult", "audit"]

MIN_TARGETS = 10  # per class: fewer leaves 5-fold cross-validation folds without a class
SIZE_FRACTIONS = (0.1, 0.25, 0.5, 1.0)
MACE_NAME = "MACE optimal (nearest-synthetic distance)"
MACE_BOUND_NAME = "MACE optimal advantage bound (nearest-synthetic distance)"
N_CLAIMS = len(ATTACKS) + 2  # each attack's ε, the MACE attack's ε, MACE's advantage bound
# the verdict of a release, from certified claims only: headline of each kind
VERDICTS = {
    "high": "leakage certified above ε = {epsilon:g}",
    "mid": "leakage certified",
    "low": "no leakage certified",
}
# summary.csv columns filled on the MACE row only
MACE_COLUMNS = (
    "optimal_advantage_at_least",
    "optimal_epsilon_at_least",
    "p_value",
    "advantage_estimate",
    "estimate_lower",
    "estimate_upper",
    "epsilon_estimate",
)


@dataclass
class ReleaseResult:
    """What the battery found for one synthetic release.

    Attributes
    ----------
    name : str
        The release's name (its key in the ``synthetic`` dict of :func:`audit`).
    n_synthetic : int
        Rows of the release.
    scores : dict of str -> ndarray
        Per analysis, the membership score of every target record (larger = member).
    summary : DataFrame
        One row per analysis: certified ε and advantage, AUC, TPR at low FPR, MACE's bound.
    risk : ndarray
        Held-out individual risk ``|f̂_p|`` of every target record.
    distance : ndarray
        Distance of every target record to its nearest synthetic row.
    size_curve : DataFrame
        Per number of synthetic rows: ``advantage_estimate``, ``estimate_lower``,
        ``estimate_upper`` and ``advantage_at_least``.
    strongest_epsilon : float
        The largest certified ε among the release's claims.
    strongest_analysis : str
        The analysis that gives it.
    certified_leak : bool
        Whether some claim certifies leakage (ε > 0 or an advantage above the trivial one).
    """

    name: str
    n_synthetic: int
    scores: dict  # analysis name -> membership score of every target (larger = member)
    summary: pd.DataFrame
    risk: np.ndarray  # held-out individual risk |f̂_p| of every target
    distance: np.ndarray
    # synthetic rows -> advantage_estimate, estimate_lower, estimate_upper, advantage_at_least
    size_curve: pd.DataFrame
    strongest_epsilon: float  # the largest certified ε of the release's claims
    strongest_analysis: str  # which claim gives it
    certified_leak: bool  # some claim certifies leakage (ε > 0 or advantage above trivial)

    @property
    def mace(self):
        """The MACE row of the summary (certified bound, p-value, estimate)."""
        return self.summary.iloc[0]

    @property
    def posterior_points_to(self):
        """Which side each target's held-out posterior favours (the MACE score's sign)."""
        score = self.scores[MACE_NAME]
        return np.where(score > 0, "member", np.where(score < 0, "non-member", "undecided"))


@dataclass
class AuditResult:
    """Everything the report shows: per-release results and how the inputs were used.

    Attributes
    ----------
    releases : list of ReleaseResult
        One result per synthetic release, in the order given.
    membership : ndarray
        1 member, 0 non-member, one per target record.
    target_source : ndarray of str
        ``"members"`` or ``"non-members"``: the table of each target record.
    target_row : ndarray of int
        Row number of each target in its input table (0-based, header excluded).
    prior : float
        P(member) at which advantages and risks are stated.
    confidence : float
        Every certified claim of a release holds together at this level.
    claim_confidence : float
        The level of each single claim (Bonferroni over the claims).
    delta : float
        The δ of (ε, δ)-DP of the ε lower bounds.
    epsilon : float
        The ε target: a certified ε above it is verdict ``"high"``.
    column_report : DataFrame
        How each input column was encoded (see :func:`encode_tables`).
    feature_names : list of str
        Names of the encoded features.
    n_rows : dict of str -> int
        Rows of each input table.
    target_group : ndarray, default=None
        Value of the ``group_by`` column of each target, when one is given.
    group_by : str, default=None
        The grouping column.
    notes : list of str
        Remarks on how the inputs were used, shown in the report.
    """

    releases: list
    membership: np.ndarray  # 1 member, 0 non-member, one per target record
    target_source: np.ndarray  # "members" / "non-members"
    target_row: np.ndarray  # row number in its input table (0-based, header excluded)
    prior: float
    confidence: float  # every certified claim of a release holds together at this level
    claim_confidence: float  # the level of each single claim (Bonferroni over N_CLAIMS)
    delta: float
    epsilon: float
    column_report: pd.DataFrame
    feature_names: list
    n_rows: dict
    target_group: np.ndarray = None  # value of the --group-by column, when one is given
    group_by: str = None
    notes: list = field(default_factory=list)

    def verdict(self, release):
        """The verdict on one release, from its certified claims only (never U_N).

        Parameters
        ----------
        release : ReleaseResult
            One of ``releases``.

        Returns
        -------
        verdict : {"high", "mid", "low"}
            ``"high"``: a certified ε above the ``epsilon`` target; ``"mid"``: some leakage
            certified; ``"low"``: nothing certified.
        """
        if release.strongest_epsilon > self.epsilon:
            return "high"
        return "mid" if release.certified_leak else "low"

    def headline(self, release):
        """The verdict in words (see :data:`VERDICTS`).

        Parameters
        ----------
        release : ReleaseResult
            One of ``releases``.

        Returns
        -------
        headline : str
            E.g. ``"leakage certified above ε = 1"``.
        """
        return VERDICTS[self.verdict(release)].format(epsilon=self.epsilon)

    @property
    def summary(self):
        """One row per (release, analysis), the table printed and written to summary.csv."""
        return pd.concat([r.summary for r in self.releases], ignore_index=True)

    @property
    def records(self):
        """Every target with its held-out risk, members first, most exposed first.

        Within a release, members come first, then non-members; each block is ordered by
        the held-out log posterior odds of MACE's cross-fitted attack (``score: MACE…``),
        so records whose posterior points to "member" lead, most confident first
        (``posterior_points_to`` says which side; ``heldout_risk`` is ``|f̂_p|``, which
        also counts confident "non-member" calls).
        """
        frames = []
        for release in self.releases:
            frame = pd.DataFrame(
                {
                    "release": release.name,
                    "source": self.target_source,
                    "row": self.target_row,
                    "member": self.membership.astype(int),
                    **({} if self.group_by is None else {self.group_by: self.target_group}),
                    "nearest_synthetic_distance": release.distance,
                    "heldout_risk": release.risk,
                    "posterior_points_to": release.posterior_points_to,
                }
            )
            for name, score in release.scores.items():
                frame[f"score: {name}"] = score
            frame = frame.sort_values(
                ["member", f"score: {MACE_NAME}"], ascending=False, kind="stable"
            )
            frame.insert(1, "rank", np.arange(1, len(frame) + 1))
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)


def _attack_row(release, name, m, score, certified):
    """AUC, TPR at low FPR and the certified ε (with its operating point) of an attack."""
    return {
        "release": release,
        "analysis": name,
        "auc": roc_auc_score(m, score),
        "tpr_at_1pct_fpr": tpr_at_fpr(m, score, fpr=0.01),
        "tpr_at_0.1pct_fpr": tpr_at_fpr(m, score, fpr=0.001),
        **certified,
        **dict.fromkeys(MACE_COLUMNS, np.nan),
    }


def _check_sizes(name, n_rows, minimum):
    if n_rows < minimum:
        raise AuditInputError(
            f"Too few rows for the audit: the {name} table has {n_rows} row(s); it needs at "
            f"least {minimum}."
        )


def _seed(rng):
    """A fresh integer seed from the audit's generator, so every step is reproducible."""
    return int(rng.randint(np.iinfo(np.int32).max))


class _SilentProgress:
    """The part of tqdm's interface ``_run_release`` uses, doing nothing (in workers)."""

    def set_postfix_str(self, text):
        pass

    def update(self, n=1):
        pass


def _run_release(
    name, synthetic, reference, targets, m, *, prior, confidence, delta, rng, progress
):
    scores = {}
    for attack_name, make_attack in ATTACKS.items():
        progress.set_postfix_str(f"{name}: {attack_name}")
        try:
            scores[attack_name] = attack_scores(make_attack, synthetic, reference, targets, rng)
        except ValueError as exc:  # e.g. a singular covariance: duplicated or constant data
            raise AuditInputError(
                f"{attack_name} cannot run on the synthetic release '{name}': {exc}"
            ) from exc
        progress.update()
    progress.set_postfix_str(f"{name}: {MACE_NAME}")
    distance = nearest_distance(targets, synthetic)
    mace = mace_nearest_distance(
        distance, m, prior=prior, confidence=confidence, delta=delta, random_state=_seed(rng)
    )
    scores = {MACE_NAME: mace["score"], **scores}
    rows = []
    for analysis, score in scores.items():
        try:
            certified = certify_scores(
                m, score, prior=prior, delta=delta, confidence=confidence, random_state=_seed(rng)
            )
        except ValueError as exc:  # e.g. non-finite scores
            raise AuditInputError(
                f"The scores of {analysis} on the synthetic release '{name}' cannot be "
                f"certified: {exc}"
            ) from exc
        rows.append(_attack_row(name, analysis, m, score, certified))
    rows[0].update({k: mace[k] for k in MACE_COLUMNS})
    summary = pd.DataFrame(rows)
    claims = {
        **dict(zip(summary["analysis"], summary["epsilon_at_least"], strict=True)),
        MACE_BOUND_NAME: mace["optimal_epsilon_at_least"],
    }
    strongest = max(claims, key=claims.get)
    trivial = abs(2 * prior - 1)
    certified_leak = bool(
        claims[strongest] > 0 or mace["optimal_advantage_at_least"] > trivial + 1e-12
    )
    progress.update()
    curve = []
    for fraction in SIZE_FRACTIONS:
        n = max(int(round(fraction * len(synthetic))), 1)
        progress.set_postfix_str(f"{name}: advantage with {n} synthetic rows")
        subset = (
            synthetic[rng.choice(len(synthetic), n, replace=False)]
            if n < len(synthetic)
            else synthetic
        )
        fit = (
            mace
            if n == len(synthetic)
            else mace_nearest_distance(
                nearest_distance(targets, subset),
                m,
                prior=prior,
                confidence=confidence,
                delta=delta,
                random_state=_seed(rng),
            )
        )
        curve.append(
            (
                n,
                fit["advantage_estimate"],
                fit["estimate_lower"],
                fit["estimate_upper"],
                fit["optimal_advantage_at_least"],
            )
        )
        progress.update()
    return ReleaseResult(
        name=name,
        n_synthetic=len(synthetic),
        scores=scores,
        summary=summary,
        risk=mace["risk"],
        distance=distance,
        size_curve=pd.DataFrame(
            curve,
            columns=[
                "synthetic_rows",
                "advantage_estimate",
                "estimate_lower",
                "estimate_upper",
                "advantage_at_least",
            ],
        ),
        strongest_epsilon=float(claims[strongest]),
        strongest_analysis=strongest,
        certified_leak=certified_leak,
    )


def _group_labels(group_by, members, non_members, max_categories):
    for name, frame in (("members", members), ("non-members", non_members)):
        if group_by not in frame.columns:
            raise AuditInputError(
                f"The {name} table has no column {group_by!r} to group by; it has "
                f"{list(frame.columns)}."
            )
    labels = pd.concat([members[group_by], non_members[group_by]], ignore_index=True)
    labels = labels.astype("string").fillna("<missing>").to_numpy(dtype=object)
    if len(set(labels)) > max_categories:
        raise AuditInputError(
            f"--group-by {group_by!r} has {len(set(labels))} distinct values; pick a column "
            f"with at most {max_categories} (a category, not an identifier or a measurement)."
        )
    return labels


def audit(
    members,
    non_members,
    synthetic,
    reference=None,
    *,
    columns=None,
    prior=None,
    confidence=0.95,
    delta=0.0,
    epsilon=1.0,
    max_categories=20,
    group_by=None,
    random_state=0,
    n_jobs=None,
    verbose=True,
):
    """Run the default battery on one or more synthetic releases.

    Parameters
    ----------
    members : DataFrame
        The training rows of the generator.
    non_members : DataFrame
        Hold-out rows from the same population, never seen by the generator.
    synthetic : DataFrame or dict of str -> DataFrame
        The released synthetic rows; a dict audits several releases side by side.
    reference : DataFrame, default=None
        Further population rows for DOMIAS and GAN-leaks CAL; default: half the hold-out.
    columns : list of str, default=None
        Audit only these columns (default: all, which must match across the tables).
    prior : float in (0, 1), default=None
        P(member) at which advantages and risks are stated; default: the fraction of
        members among the target records.
    confidence : float in (0, 1), default=0.95
        ``1 − α``: the certified claims of a release (every analysis's ε lower bound and
        MACE's advantage lower bound) hold together with this probability; each is computed
        at ``1 − α / N_CLAIMS`` (Bonferroni), and so is the McDiarmid interval of ``U_N``.
    delta : float in [0, 1), default=0.0
        The δ of (ε, δ)-DP at which the ε lower bounds are stated.
    epsilon : float >= 0, default=1.0
        The ε whose DP bound the figures draw.
    max_categories : int >= 1, default=20
        Text columns with more distinct values are dropped (see ``_encode``).
    group_by : str, default=None
        A column of the members and non-members whose values group the records in the risk
        figure and in records.csv (subgroups, DOMIAS §5.3); it may or may not be audited.
    random_state : int, default=0
        Seeds every random step (reference split, bandwidth folds, cross-fitting, the
        operating-point splits), so the same inputs give the same report.
    n_jobs : int, default=None
        Releases audited in parallel (joblib; ``None`` is 1, ``-1`` all cores, and
        ``joblib.parallel_config`` picks the backend, e.g. Dask). Each release's seed is
        drawn up front, so the report does not depend on ``n_jobs``.
    verbose : bool, default=True
        Show a progress bar on stderr.

    Returns
    -------
    result : AuditResult
        Per-release results; :func:`write_report` turns them into the report.

    Examples
    --------
    A release that copies its training rows is caught; a fresh draw is not:

    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.report import audit
    >>> rng = np.random.default_rng(0)
    >>> def table(n):
    ...     return pd.DataFrame({"age": rng.integers(20, 70, n).astype(float),
    ...                          "income": rng.normal(50, 10, n).round(1)})
    >>> members, non_members = table(30), table(30)
    >>> result = audit(members, non_members, {"copy": members, "fresh": table(30)},
    ...                verbose=False)
    >>> [(r.name, result.verdict(r)) for r in result.releases]
    [('copy', 'high'), ('fresh', 'low')]
    >>> result.headline(result.releases[0])
    'leakage certified above ε = 1'
    """
    from tqdm.auto import tqdm

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}.")
    if prior is not None:
        check_prior(prior)
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1); got {delta!r}.")
    advantage_bound(epsilon)  # epsilon >= 0, checked before anything is computed or written
    if (
        isinstance(max_categories, bool)
        or not isinstance(max_categories, Integral)
        or (max_categories < 1)
    ):
        raise ValueError(f"max_categories must be an int >= 1; got {max_categories!r}.")
    if not isinstance(synthetic, dict):
        synthetic = {"synthetic": synthetic}
    if not synthetic:
        raise AuditInputError("At least one synthetic table is needed.")
    rng = check_random_state(random_state)
    tables = {"members": members, "non-members": non_members}
    tables.update({f"synthetic '{k}'": v for k, v in synthetic.items()})
    if reference is not None:
        tables["reference"] = reference
    arrays, feature_names, column_report = encode_tables(
        tables, columns, max_categories=max_categories
    )
    n_features = len(feature_names)
    X_mem, X_non = arrays["members"], arrays["non-members"]
    notes = []
    groups = (
        None if group_by is None else _group_labels(group_by, members, non_members, max_categories)
    )
    row_non = np.arange(len(X_non))
    if reference is None:
        _check_sizes("non-members", len(X_non), 2 * MIN_TARGETS)
        perm = rng.permutation(len(X_non))
        ref_idx, row_non = np.sort(perm[: len(perm) // 2]), np.sort(perm[len(perm) // 2 :])
        X_ref, X_non = X_non[ref_idx], X_non[row_non]
        notes.append(
            f"No reference rows were given: {len(ref_idx)} of the {len(perm)} hold-out rows "
            "(chosen at random) serve as the population reference for DOMIAS and GAN-leaks "
            f"CAL; the other {len(row_non)} are the non-member targets."
        )
    else:
        X_ref = arrays["reference"]
    _check_sizes("members", len(X_mem), MIN_TARGETS)
    _check_sizes("non-member target", len(X_non), MIN_TARGETS)
    # KDEs with a full-covariance bandwidth need more rows than features
    _check_sizes("reference", len(X_ref), max(MIN_TARGETS, n_features + 1))
    for key in synthetic:
        _check_sizes(
            f"synthetic '{key}'",
            len(arrays[f"synthetic '{key}'"]),
            max(MIN_TARGETS, n_features + 1),
        )
    targets = np.vstack([X_mem, X_non])
    m = np.r_[np.ones(len(X_mem), dtype=int), np.zeros(len(X_non), dtype=int)]
    prior_value = float(m.mean()) if prior is None else float(prior)
    claim_confidence = 1.0 - (1.0 - confidence) / N_CLAIMS
    steps = len(synthetic) * (len(ATTACKS) + 1 + len(SIZE_FRACTIONS))
    seeds = {key: _seed(rng) for key in synthetic}

    def run(key, progress):
        return _run_release(
            key,
            arrays[f"synthetic '{key}'"],
            X_ref,
            targets,
            m,
            prior=prior_value,
            confidence=claim_confidence,
            delta=float(delta),
            rng=check_random_state(seeds[key]),
            progress=progress,
        )

    with tqdm(total=steps, desc="sklearn-mace audit", disable=not verbose, unit="step") as progress:
        if effective_n_jobs(n_jobs) == 1 or len(synthetic) == 1:
            releases = [run(key, progress) for key in synthetic]
        else:  # workers cannot share the bar: it advances a release at a time
            releases = []
            tasks = (delayed(run)(key, _SilentProgress()) for key in synthetic)
            for release in Parallel(n_jobs=n_jobs, return_as="generator")(tasks):
                releases.append(release)
                progress.update(steps // len(synthetic))
    n_rows = {name: len(frame) for name, frame in tables.items()}
    return AuditResult(
        releases=releases,
        membership=m,
        target_source=np.r_[
            np.full(len(X_mem), "members"), np.full(len(X_non), "non-members")
        ].astype(object),
        target_row=np.r_[np.arange(len(X_mem)), row_non],
        prior=prior_value,
        target_group=None
        if groups is None
        else groups[np.r_[np.arange(len(X_mem)), len(X_mem) + row_non]],
        group_by=group_by,
        confidence=confidence,
        claim_confidence=claim_confidence,
        delta=float(delta),
        epsilon=epsilon,
        column_report=column_report,
        feature_names=feature_names,
        n_rows=n_rows,
        notes=notes,
    )
