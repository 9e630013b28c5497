"""The default battery of the audit: which attacks run on which rows, and what is claimed.

For every synthetic release the battery scores the *target* records — the members and the
hold-out non-members — with

* DOMIAS, the density-ratio attack ``log p_G − log p_R`` with cross-validated KDE
  bandwidths (DOMIAS Eq. 2);
* MACE on the nearest-synthetic-distance query ``Q(z) = min_j ‖z − g_j‖`` (MACE Eq. 2):
  the cross-fitted Bayes-optimal attack, a certified lower bound on the optimal membership
  advantage with the p-value of "no leak", the plug-in estimate ``U_N`` (MACE Thm 6) beside
  it, and each record's held-out individual privacy risk (MACE Def. 3);
* the MC baseline (Hilprecht et al.) and GAN-leaks CAL (Chen et al.), DOMIAS Table 1;
* the exact-copy test: "member" iff the record appears verbatim in the release, i.e. some
  synthetic row equals it on every audited column (raw values; numbers compared as numbers,
  so ``39`` and ``39.0`` are equal; a missing value equals a missing value). Its threshold is
  fixed before seeing any data, so its ε bound needs no split
  (:func:`~sklearn_mace.metrics.audit_epsilon` with an explicit threshold): a release that
  publishes half of 1000 members verbatim and no non-member certifies ε ≈ 4.4.

Every analysis's scores get their own certified ε lower bound
(:func:`~sklearn_mace.metrics.audit_epsilon`). A release has ``N_CLAIMS`` certified claims
(the five analyses' ε and MACE's advantage bound); each is computed at confidence
``1 − α / N_CLAIMS`` (Bonferroni), so all of them, and so the strongest, hold together with
probability ``1 − α``. The verdict uses only these claims, never ``U_N``.

Copies are counted for every release: **exact copies** are the targets that appear verbatim
(as above); **near copies** are the targets whose nearest synthetic row lies within
``NEAR_COPY_DISTANCE`` = 0.1 in the encoded space (numeric columns in standard deviations,
a differing category counts 1), exact copies included — so a near copy has every category
equal and its numbers within a tenth of a standard deviation in all. Members and non-members
are counted apart: copies of non-members are what an independent generator makes by chance.

One failing analysis never sinks the report: each analysis of each release runs on its own,
and a failure (e.g. a singular covariance in DOMIAS) is recorded with its reason
(:attr:`AuditResult.failures`), its summary row marked ``status="failed"``, and the other
analyses go on. The number of claims stays ``N_CLAIMS``, so the Bonferroni correction stays
valid (conservative) when some fail. Errors in the inputs (:class:`AuditInputError`) are
raised before anything is computed.

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
from ..metrics import advantage_bound, audit_epsilon, tpr_at_fpr
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
DISCLOSURE_NAME = "attribute inference and linkability"
MAX_DISCLOSURE_RECORDS = 500  # targets, and controls, attacked (anonymeter's default n_attacks)
MACE_BOUND_NAME = "MACE optimal advantage bound (nearest-synthetic distance)"
EXACT_NAME = "Exact copy (verbatim in the release)"
SIZE_CURVE_NAME = "MACE advantage vs release size (figure)"
NEAR_COPY_DISTANCE = 0.1  # encoded space: standard deviations; a differing category is 1
# each analysis's ε (MACE, the attacks, the exact copy) and MACE's advantage bound
N_CLAIMS = len(ATTACKS) + 3
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
# summary.csv columns filled on the exact-copy row only: the release's copy counts
COPY_COLUMNS = (
    "member_targets",
    "nonmember_targets",
    "member_exact_copies",
    "nonmember_exact_copies",
    "member_near_copies",
    "nonmember_near_copies",
)
CURVE_COLUMNS = (
    "synthetic_rows",
    "advantage_estimate",
    "estimate_lower",
    "estimate_upper",
    "advantage_at_least",
)
CLAIM_COLUMNS = (
    "epsilon_at_least",
    "advantage_at_least",
    "threshold",
    "fpr",
    "fnr",
    "fpr_upper",
    "fnr_upper",
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
    exact_copy : ndarray of bool, default=None
        Whether each target record appears verbatim in the release; ``None`` when the
        exact-copy analysis failed.
    copies : dict of str -> int
        The release's copy counts, keyed by the ``COPY_COLUMNS`` of summary.csv
        (``member_targets``, ``nonmember_targets``, ``member_exact_copies``,
        ``nonmember_exact_copies``, ``member_near_copies``, ``nonmember_near_copies``);
        NaN for a count whose analysis failed.
    failures : list of (str, str)
        ``(analysis, reason)`` of every analysis of the release that failed.
    """

    name: str
    n_synthetic: int
    scores: dict  # analysis name -> membership score of every target (succeeded ones only)
    summary: pd.DataFrame
    risk: np.ndarray  # held-out individual risk |f̂_p| of every target (NaN if MACE failed)
    distance: np.ndarray  # nearest-synthetic distance of every target (NaN if it failed)
    # synthetic rows -> advantage_estimate, estimate_lower, estimate_upper, advantage_at_least
    size_curve: pd.DataFrame
    strongest_epsilon: float  # the largest certified ε of the release's claims
    strongest_analysis: str  # which claim gives it ("" when no claim succeeded)
    certified_leak: bool  # some claim certifies leakage (ε > 0 or advantage above trivial)
    # is each target verbatim in the release (None if the exact-copy analysis failed)
    exact_copy: np.ndarray = None
    copies: dict = field(default_factory=dict)  # the COPY_COLUMNS of this release
    failures: list = field(default_factory=list)  # (analysis, reason) of what failed

    @property
    def mace(self):
        """The MACE row of the summary (certified bound, p-value, estimate)."""
        return self.summary.set_index("analysis").loc[MACE_NAME]

    @property
    def posterior_points_to(self):
        """Which side each target's held-out posterior favours (the MACE score's sign)."""
        score = self.scores.get(MACE_NAME)
        if score is None:  # MACE failed: no posterior
            return np.full(len(self.risk), "undecided", dtype=object)
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
    disclosure : DataFrame, default=None
        Attribute-inference and linkability risks of every release (the table of
        :func:`~sklearn_mace.disclosure.disclosure_summary`); ``None`` when the disclosure
        analyses were not run or failed.
    disclosure_error : str, default=None
        Why the disclosure analyses failed, when they did.
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
    disclosure: pd.DataFrame = None  # attribute inference and linkability, per release
    disclosure_error: str = None  # why the disclosure analyses failed, when they did

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

    def ranking_certified(self, release):
        """Whether MACE's own advantage bound is above the trivial ``|2p − 1|``.

        Only then is its ranking of the records (the "most exposed" member) backed by a
        certified claim; otherwise its held-out risk interval is no better than [0, 1].

        Parameters
        ----------
        release : ReleaseResult
            One of ``releases``.

        Returns
        -------
        certified : bool
            True when the MACE analysis succeeded and its certified advantage lower bound
            exceeds ``|2·prior − 1|``.
        """
        mace = release.mace
        trivial = abs(2 * self.prior - 1)
        return bool(mace["status"] == "ok" and mace["optimal_advantage_at_least"] > trivial + 1e-12)

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
    def failures(self):
        """The analyses that failed: one row per (release, analysis) with its reason.

        Empty when every analysis succeeded; the CLI then exits 0, else 3 (partial report).
        """
        rows = [
            (release.name, analysis, reason)
            for release in self.releases
            for analysis, reason in release.failures
        ]
        if self.disclosure_error is not None:
            rows.append(("every release", DISCLOSURE_NAME, self.disclosure_error))
        return pd.DataFrame(rows, columns=["release", "analysis", "reason"])

    @property
    def partial(self):
        """Whether some analysis failed (the report is then partial)."""
        return self.disclosure_error is not None or any(
            release.failures for release in self.releases
        )

    @property
    def summary(self):
        """One row per (release, analysis), the table printed and written to summary.csv.

        ``status`` is ``"ok"`` or ``"failed"`` (then ``reason`` says why and the numbers are
        empty). MACE's columns (``optimal_advantage_at_least`` …) are filled on the MACE row
        only; the release's copy counts (``member_exact_copies``, ``nonmember_exact_copies``,
        ``member_near_copies``, ``nonmember_near_copies``, out of ``member_targets`` and
        ``nonmember_targets``) on the exact-copy row only.
        """
        return pd.concat([r.summary for r in self.releases], ignore_index=True)

    @property
    def records(self):
        """Every target with its held-out risk, members first, most exposed first.

        Within a release, members come first, then non-members; each block is ordered by
        the held-out log posterior odds of MACE's cross-fitted attack (``score: MACE…``),
        so the members whose posterior points to "member" lead, highest held-out risk first.
        ``posterior_points_to`` says which side the risk points to: ``heldout_risk`` is
        ``|f̂_p|``, which also counts confident "non-member" calls, so a non-member with a
        large risk is one confidently (and rightly) called a non-member. Non-member rows
        are kept for comparison but never rank above a member. ``verbatim_in_release`` says
        whether the record appears verbatim in the release.
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
                    "verbatim_in_release": release.exact_copy,
                    "heldout_risk": release.risk,
                    "posterior_points_to": release.posterior_points_to,
                }
            )
            for name, score in release.scores.items():
                frame[f"score: {name}"] = score
            keys = ["member"] + ([f"score: {MACE_NAME}"] if MACE_NAME in release.scores else [])
            frame = frame.sort_values(keys, ascending=False, kind="stable")
            frame.insert(1, "rank", np.arange(1, len(frame) + 1))
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)


def _attack_row(release, name, m, score, certified):
    """AUC, TPR at low FPR and the certified ε (with its operating point) of an analysis."""
    return {
        "release": release,
        "analysis": name,
        "status": "ok",
        "reason": "",
        "auc": roc_auc_score(m, score),
        "tpr_at_1pct_fpr": tpr_at_fpr(m, score, fpr=0.01),
        "tpr_at_0.1pct_fpr": tpr_at_fpr(m, score, fpr=0.001),
        **certified,
        **dict.fromkeys(MACE_COLUMNS, np.nan),
        **dict.fromkeys(COPY_COLUMNS, np.nan),
    }


def _failed_row(release, name, reason):
    return {
        "release": release,
        "analysis": name,
        "status": "failed",
        "reason": reason,
        **dict.fromkeys(("auc", "tpr_at_1pct_fpr", "tpr_at_0.1pct_fpr"), np.nan),
        **dict.fromkeys(CLAIM_COLUMNS, np.nan),
        **dict.fromkeys(MACE_COLUMNS, np.nan),
        **dict.fromkeys(COPY_COLUMNS, np.nan),
    }


def _reason(exc):
    """One line saying why an analysis failed."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_sizes(name, n_rows, minimum):
    if n_rows < minimum:
        raise AuditInputError(
            f"Too few rows for the audit: the {name} table has {n_rows} row(s); it needs at "
            f"least {minimum}."
        )


def _seed(rng):
    """A fresh integer seed from the audit's generator, so every step is reproducible."""
    return int(rng.randint(np.iinfo(np.int32).max))


def row_keys(tables, columns):
    """A 64-bit key per row of every table, equal for rows equal on ``columns``.

    Numbers are compared as numbers (a column whose non-missing values all parse as numbers
    in every table is compared as float, so ``39`` equals ``39.0`` and ``-0.0`` equals
    ``0.0``), anything else as text; a missing value equals a missing value. Keys are
    pandas' row hashes: two different rows share a key with probability about 2⁻⁶⁴.

    Parameters
    ----------
    tables : dict of str -> DataFrame
    columns : list of str

    Returns
    -------
    keys : dict of str -> ndarray of uint64
    """
    columns = list(columns)
    sizes = [len(frame) for frame in tables.values()]
    pooled = pd.concat(
        [frame[columns].reset_index(drop=True) for frame in tables.values()], ignore_index=True
    )
    comparable = {}
    for position in range(len(columns)):
        series = pooled.iloc[:, position]
        if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
            comparable[position] = series.astype(float) + 0.0
            continue
        parsed = pd.to_numeric(series, errors="coerce")
        if parsed.notna().sum() == series.notna().sum() and series.notna().any():
            comparable[position] = parsed.astype(float) + 0.0
        else:
            comparable[position] = series.astype("string").fillna("\x00<missing>")
    keys = pd.util.hash_pandas_object(pd.DataFrame(comparable), index=False).to_numpy()
    return dict(zip(tables, np.split(keys, np.cumsum(sizes)[:-1]), strict=True))


def exact_copy_certificate(m, copied, *, prior, delta, confidence):
    """Certified ε of the fixed rule "member iff verbatim in the release".

    The rule is fixed before seeing any data, so :func:`~sklearn_mace.metrics.audit_epsilon`
    evaluates it on every target with no split (an explicit threshold): with ``k1`` of
    ``n1`` members and ``k0`` of ``n0`` non-members copied, exact Clopper–Pearson bounds on
    FPR = k0/n0 and FNR = 1 − k1/n1 give the ε no (ε, δ)-DP generator could exceed.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.r_[np.ones(1000, dtype=int), np.zeros(1000, dtype=int)]
    >>> copied = np.r_[np.ones(500), np.zeros(1500)]
    >>> row = exact_copy_certificate(m, copied, prior=0.5, delta=0.0, confidence=0.95)
    >>> round(row["epsilon_at_least"], 2), row["fpr"], row["fnr"]
    (4.85, 0.0, 0.5)
    """
    m, copied = np.asarray(m), np.asarray(copied, dtype=float)
    result = audit_epsilon(
        copied[m == 1],
        copied[m == 0],
        delta=delta,
        confidence=confidence,
        prior=prior,
        threshold=1.0,
    )
    return {
        "epsilon_at_least": result.epsilon_lower_bound,
        "advantage_at_least": result.advantage_lower_bound,
        "threshold": result.threshold,
        "fpr": result.fpr,
        "fnr": result.fnr,
        "fpr_upper": result.fpr_upper,
        "fnr_upper": result.fnr_upper,
    }


class _SilentProgress:
    """The part of tqdm's interface ``_run_release`` uses, doing nothing (in workers)."""

    def set_postfix_str(self, text):
        pass

    def update(self, n=1):
        pass


class _Failures:
    """Runs each analysis on its own: a failure is recorded with its reason, not raised."""

    def __init__(self):
        self.items = []  # (analysis, reason)

    def attempt(self, analysis, compute):
        try:
            return compute()
        except Exception as exc:  # noqa: BLE001  any failure of one analysis is reported
            self.items.append((analysis, _reason(exc)))
            return None

    def reason(self, analysis):
        return next((r for a, r in self.items if a == analysis), None)


def _run_release(
    name,
    synthetic,
    reference,
    targets,
    m,
    *,
    target_keys,
    synthetic_keys,
    prior,
    confidence,
    delta,
    rng,
    progress,
):
    failures = _Failures()
    order = [MACE_NAME, *ATTACKS, EXACT_NAME]
    # seeds drawn up front: a failing analysis changes no other analysis's numbers
    seeds = {analysis: (_seed(rng), _seed(rng)) for analysis in order}
    curve_seed = _seed(rng)
    scores = {}
    for attack_name, make_attack in ATTACKS.items():
        progress.set_postfix_str(f"{name}: {attack_name}")
        score = failures.attempt(
            attack_name,
            lambda make=make_attack, s=seeds[attack_name][0]: attack_scores(
                make, synthetic, reference, targets, s
            ),
        )
        if score is not None:
            scores[attack_name] = score
        progress.update()
    progress.set_postfix_str(f"{name}: {MACE_NAME}")
    distance = failures.attempt(MACE_NAME, lambda: nearest_distance(targets, synthetic))
    mace = None
    if distance is not None:
        mace = failures.attempt(
            MACE_NAME,
            lambda: mace_nearest_distance(
                distance,
                m,
                prior=prior,
                confidence=confidence,
                delta=delta,
                random_state=seeds[MACE_NAME][0],
            ),
        )
    if mace is not None:
        scores[MACE_NAME] = mace["score"]
    exact = failures.attempt(EXACT_NAME, lambda: np.isin(target_keys, synthetic_keys).astype(float))
    if exact is not None:
        scores[EXACT_NAME] = exact
    rows, claims = [], {}
    for analysis in order:
        if analysis not in scores:
            rows.append(_failed_row(name, analysis, failures.reason(analysis)))
            continue
        score = scores[analysis]

        def certify(analysis=analysis, score=score):
            if analysis == EXACT_NAME:
                certified = exact_copy_certificate(
                    m, score, prior=prior, delta=delta, confidence=confidence
                )
            else:
                certified = certify_scores(
                    m,
                    score,
                    prior=prior,
                    delta=delta,
                    confidence=confidence,
                    random_state=seeds[analysis][1],
                )
            return _attack_row(name, analysis, m, score, certified)

        row = failures.attempt(analysis, certify)
        if row is None:  # e.g. non-finite scores
            del scores[analysis]
            rows.append(_failed_row(name, analysis, failures.reason(analysis)))
            continue
        claims[analysis] = row["epsilon_at_least"]
        rows.append(row)
    n1, n0 = int(m.sum()), int(len(m) - m.sum())
    copies = dict.fromkeys(COPY_COLUMNS, np.nan)
    copies.update(member_targets=n1, nonmember_targets=n0)
    if exact is not None:
        copies.update(
            member_exact_copies=int(exact[m == 1].sum()),
            nonmember_exact_copies=int(exact[m == 0].sum()),
        )
    if distance is not None:
        near = distance <= NEAR_COPY_DISTANCE
        copies.update(
            member_near_copies=int(near[m == 1].sum()),
            nonmember_near_copies=int(near[m == 0].sum()),
        )
    for row in rows:
        if row["analysis"] == MACE_NAME and mace is not None:
            row.update({k: mace[k] for k in MACE_COLUMNS})
        if row["analysis"] == EXACT_NAME:
            row.update(copies)
    summary = pd.DataFrame(rows)
    summary[list(COPY_COLUMNS)] = summary[list(COPY_COLUMNS)].astype("Int64")  # counts
    trivial = abs(2 * prior - 1)
    advantage_certified = False
    if MACE_NAME in claims:
        claims[MACE_BOUND_NAME] = mace["optimal_epsilon_at_least"]
        advantage_certified = mace["optimal_advantage_at_least"] > trivial + 1e-12
    strongest = max(claims, key=claims.get) if claims else ""
    strongest_epsilon = float(claims[strongest]) if claims else 0.0
    certified_leak = bool(strongest_epsilon > 0 or advantage_certified)
    progress.update()
    curve = failures.attempt(
        SIZE_CURVE_NAME,
        lambda: _size_curve(
            name,
            synthetic,
            targets,
            m,
            mace,
            prior=prior,
            confidence=confidence,
            delta=delta,
            rng=check_random_state(curve_seed),
            progress=progress,
        ),
    )
    if curve is None:
        curve = pd.DataFrame(columns=list(CURVE_COLUMNS), dtype=float)
    return ReleaseResult(
        name=name,
        n_synthetic=len(synthetic),
        scores={analysis: scores[analysis] for analysis in order if analysis in scores},
        summary=summary,
        risk=np.full(len(m), np.nan) if mace is None else mace["risk"],
        distance=np.full(len(m), np.nan) if distance is None else distance,
        size_curve=curve,
        strongest_epsilon=strongest_epsilon,
        strongest_analysis=strongest,
        certified_leak=certified_leak,
        exact_copy=None if exact is None else exact.astype(bool),
        copies=copies,
        failures=failures.items,
    )


def _size_curve(name, synthetic, targets, m, mace, *, prior, confidence, delta, rng, progress):
    """MACE's advantage when only a random part of the release is published (a figure)."""
    curve = []
    for fraction in SIZE_FRACTIONS:
        n = max(int(round(fraction * len(synthetic))), 1)
        progress.set_postfix_str(f"{name}: advantage with {n} synthetic rows")
        if n == len(synthetic) and mace is not None:
            fit = mace
        else:
            subset = synthetic[rng.choice(len(synthetic), n, replace=False)]
            fit = mace_nearest_distance(
                nearest_distance(targets, subset),
                m,
                prior=prior,
                confidence=confidence,
                delta=delta,
                random_state=_seed(rng),
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
    return pd.DataFrame(curve, columns=list(CURVE_COLUMNS))


def _holdout_copy_notes(releases):
    """A warning for each release that copies more hold-out rows than members verbatim.

    The claims stay valid — such a release does tell members from non-members, a leak about
    the hold-out rows — but it usually means the release was generated from the hold-out
    rows, or that they overlap the training rows: the inputs deserve a look.
    """
    notes = []
    for release in releases:
        members, others = (
            release.copies.get(f"{side}_exact_copies") for side in ("member", "nonmember")
        )
        if members is None or others is None or np.isnan([members, others]).any():
            continue
        if others > members:
            notes.append(
                f"Release '{release.name}' holds {int(others)} hold-out (non-member) rows "
                f"verbatim but only {int(members)} members: was it generated from the hold-out "
                "rows, or do they overlap the training rows? Its claims then measure how the "
                "release exposes the hold-out rows."
            )
    return notes


def _disclosure(tables, synthetic, kept, confidence, seed, notes):
    """Attribute inference and linkability on the raw audited columns, or why not.

    The control records are the non-members (and the reference rows, when given): population
    records the generator never saw. At most ``MAX_DISCLOSURE_RECORDS`` targets and as many
    controls are attacked, drawn at random (anonymeter's ``n_attacks``): the attack on each
    record is unchanged, the rates' exact intervals say how precise they are, and the cost,
    linear in records × release rows × columns, stays bounded for large releases. Numeric
    columns with missing values have no distance in the mixed metric and are left out (named
    in a note).
    """
    from ..disclosure import disclosure_summary

    rng = check_random_state(seed)
    members = tables["members"]
    numeric_gaps = [
        c
        for c in kept
        if pd.api.types.is_numeric_dtype(members[c])
        and any(frame[c].isna().any() for frame in tables.values())
    ]
    columns = [c for c in kept if c not in numeric_gaps]
    if numeric_gaps:
        notes.append(
            "Attribute inference and linkability leave out the numeric column(s) "
            f"{numeric_gaps} (missing values have no distance)."
        )
    if len(columns) < 2:
        return None, "fewer than two usable columns (one is the secret, others are known)"
    reference = tables.get("reference")
    control = tables["non-members"][columns]
    if reference is not None:
        control = pd.concat([control, reference[columns]], ignore_index=True)
    pools = (members[columns], control)
    targets, control = (
        pool.sample(n=min(len(pool), MAX_DISCLOSURE_RECORDS), random_state=rng) for pool in pools
    )
    if len(targets) + len(control) < sum(len(pool) for pool in pools):
        notes.append(
            f"Attribute inference and linkability attack {len(targets)} members and "
            f"{len(control)} control records drawn at random (at most "
            f"{MAX_DISCLOSURE_RECORDS} each)."
        )
    try:
        table = disclosure_summary(
            targets,
            control,
            {key: frame[columns] for key, frame in synthetic.items()},
            confidence=confidence,
            random_state=rng,
        )
    except ValueError as exc:
        return None, str(exc)
    return table, None


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
    disclosure=True,
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
        Text columns with more categories, after merging the rare ones, are dropped as
        identifiers or free text (see ``_encode``).
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
    disclosure : bool, default=True
        Also measure what anonymeter reports beyond membership: the attribute-inference
        risk of every column and the linkability risk of each release
        (:func:`~sklearn_mace.disclosure.disclosure_summary`, on the raw values of the
        audited columns; numeric columns with missing values are left out of it), attacking
        at most ``MAX_DISCLOSURE_RECORDS`` (500) members and as many control records drawn
        at random. Its intervals are per row, not corrected across rows.
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
    # exact copies: raw rows compared on the columns the encoding keeps (not identifiers)
    kept = column_report.loc[column_report["features"] > 0, "column"].tolist()
    keys = row_keys(tables, kept)
    target_keys = np.r_[keys["members"], keys["non-members"][row_non]]
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
            target_keys=target_keys,
            synthetic_keys=keys[f"synthetic '{key}'"],
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
    notes.extend(_holdout_copy_notes(releases))
    disclosure_table, disclosure_error = None, None
    if disclosure:
        disclosure_table, disclosure_error = _disclosure(
            tables, synthetic, kept, confidence, _seed(rng), notes
        )
    n_rows = {name: len(frame) for name, frame in tables.items()}
    n_failed = sum(len(release.failures) for release in releases)
    if n_failed:
        notes.append(
            f"{n_failed} analysis run(s) failed and are missing from this report (listed under "
            "'Failed analyses' in report.html, status 'failed' in summary.csv): "
            + "; ".join(
                f"{analysis} on '{release.name}': {reason}"
                for release in releases
                for analysis, reason in release.failures
            )
        )
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
        disclosure=disclosure_table,
        disclosure_error=disclosure_error,
    )
