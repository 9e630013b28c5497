"""The synthetic-data audit: the engine configured for releases (which analyses, which inputs).

For every synthetic release the engine scores the *target* records — the members and the
hold-out non-members — with

* MACE on the nearest-synthetic distance ``Q(z) = min_j ‖z − g_j‖`` (MACE Eq. 2): its
  cross-fitted Bayes rule (a certified lower bound on the optimal advantage, the estimate
  ``U_N`` (Thm 6) beside it, each record's held-out risk, Def. 3) and the same held-out
  scores at their best-ε threshold;
* DOMIAS, the density-ratio attack ``log p_G − log p_R`` with cross-validated KDE bandwidths
  (DOMIAS Eq. 2); the MC baseline (Hilprecht et al.) and GAN-leaks CAL (Chen et al.),
  DOMIAS Table 1 — each a query of :mod:`sklearn_mace.queries` built on the release and the
  reference rows and fitted on the targets without their labels;
* the exact-copy test: "member" iff the record appears verbatim in the release, a rule fixed
  before seeing any data, so its claim needs no split (a release that publishes half of 1000
  members verbatim and no non-member certifies ε ≈ 4.4);
* three figure points: MACE's Bayes rule when only 10 %, 25 % or 50 % of the release is
  published (drawn against the release size, and certified like every other claim).

Every claim goes through the engine (``_engine.py``): one Bonferroni correction over the
release's nine certified numbers, failures isolated, seeds drawn up front.
"""

import warnings

import numpy as np
from sklearn.utils import check_random_state

from ....queries import (
    DOMIASQuery,
    GANLeaksQuery,
    MonteCarloQuery,
    NearestSyntheticDistance,
    ScaleMismatchWarning,
)
from ....utils._device import keep_on_device
from ..._analyses import fit_mace, mace_analyses, mace_fit_step, mace_scores, query_scores
from ..._engine import (
    BAYES_RULE,
    Analysis,
    AuditEngine,
    Scores,
    SharedStep,
    Subject,
    base_seed,
    check_device,
    check_on_error,
    keyed_seed,
)
from ..._io import AuditInputError
from ..._quality import in_sorted
from ..._results import AuditResult, failure_notes
from ..._verdict import check_claim_options, check_margin
from ._inputs import (
    EXACT_NAME,
    check_max_categories,
    copy_counts,
    holdout_copy_notes,
    prepare_release_inputs,
    run_disclosure,
)
from ._types import Release, ReleaseInputs, ReleaseOptions, ReleaseReportInputs, ReleaseShared

__all__ = ["ANALYSES", "ReleaseAudit", "audit_release"]

QUERY = "nearest-synthetic distance"
DISTANCE = "nearest-synthetic distances"
MACE_FIT = "MACE fit (nearest-synthetic distance)"
DISCLOSURE_NAME = "attribute inference and linkability"
SIZE_FRACTIONS = (0.1, 0.25, 0.5)  # figure points; the whole release is the Bayes-rule row
SUBSET_BLOCK_ROWS = 1 << 18  # rows of a figure point's subset searched at a time (copied)


def nearest_distance(targets, synthetic, device="auto"):
    """MACE Eq. 2: Euclidean distance from each target to its nearest synthetic row."""
    return NearestSyntheticDistance(synthetic, device=device).fit_transform(targets)[:, 0]


def _distances(engine, subject, seed):
    inputs = engine.inputs
    return nearest_distance(inputs.X_targets, subject.inputs.synthetic, inputs.device)


def _distance_query(subject):
    return subject.shared.distances


def _domias(engine, subject, seed):
    synthetic, reference = subject.inputs.synthetic, engine.inputs.X_reference
    device = engine.inputs.device
    return DOMIASQuery(synthetic, reference, bandwidth="cv", random_state=seed, device=device)


def _mc(engine, subject, seed):
    # the reference definition (DOMIAS §4, domias 0.0.5): radius² is the median over the
    # targets of the squared nearest-synthetic distance (tests/queries/test_baselines.py pins it)
    synthetic, device = subject.inputs.synthetic, engine.inputs.device
    return MonteCarloQuery(synthetic, weighting="count", radius="median", device=device)


def _gan_leaks_cal(engine, subject, seed):
    inputs = engine.inputs
    return GANLeaksQuery(subject.inputs.synthetic, inputs.X_reference, device=inputs.device)


def _exact_copy(engine, subject, seed):
    return Scores(score=np.asarray(subject.inputs.copied, dtype=float))


MACE_BAYES, MACE_BEST = mace_analyses(QUERY, MACE_FIT)
#: the release analyses, in report order (tests replace entries to plant failures)
ANALYSES = [
    MACE_BAYES,
    MACE_BEST,
    Analysis("DOMIAS (KDE, cross-validated bandwidth)", query_scores(_domias)),
    Analysis("MC (Hilprecht)", query_scores(_mc)),
    Analysis("GAN-leaks CAL", query_scores(_gan_leaks_cal)),
    Analysis(
        EXACT_NAME,
        _exact_copy,
        threshold=1.0,
        detail="member iff verbatim in the release: a rule fixed in advance, all targets",
    ),
]


def subset_distance(targets, synthetic, rows, device="auto", block=SUBSET_BLOCK_ROWS):
    """``nearest_distance(targets, synthetic[rows])`` without the copy of the subset: the
    nearest distance to each block of ``block`` rows, then the smallest (issue #28: the 50 %
    point copied 229 MiB of a 10-million-row, 6-column release).

    The same values bit for bit: each block's distance is the exact float64 distance to its
    nearest row (:func:`~sklearn_mace.utils.nearest_sq_distances`), and the smallest of
    the blocks' minima is the minimum over the subset. The scale check of the query's
    ``fit`` (:class:`~sklearn_mace.ScaleMismatchWarning`) looks at the first block, a
    random draw of the release as the whole subset is; the other blocks are not checked
    again."""
    distance = nearest_distance(targets, synthetic[rows[:block]], device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScaleMismatchWarning)
        for start in range(block, len(rows), block):
            part = nearest_distance(targets, synthetic[rows[start : start + block]], device)
            np.minimum(distance, part, out=distance)
    return distance


def size_point(fraction):
    """The figure point of MACE's Bayes rule when ``fraction`` of the release is published."""

    def compute(engine, subject, seed):
        synthetic = subject.inputs.synthetic
        n = max(int(round(fraction * len(synthetic))), 1)
        rng = check_random_state(seed)
        # a copy: choice's rows are a view of a permutation of the whole release
        rows = rng.choice(len(synthetic), n, replace=False).astype(
            np.int32 if len(synthetic) < 2**31 else int
        )
        device = engine.inputs.device
        distance = subset_distance(engine.inputs.X_targets, synthetic, rows, device)
        del rows
        t = engine.targets
        estimator = fit_mace(
            distance,
            t.membership,
            prior=t.prior,
            confidence=engine.confidence,
            random_state=rng,
            device=device,
        )
        scores = mace_scores(estimator, engine.delta)
        scores.estimates["synthetic_rows"] = n
        scores.detail = f"{n} of {len(synthetic)} synthetic rows, drawn at random"
        return scores

    return Analysis(
        f"MACE Bayes rule, {fraction:.0%} of the release",
        compute,
        threshold=BAYES_RULE,
        figure=True,
    )


class ReleaseAudit(AuditEngine):
    """The engine configured for synthetic releases (one subject per release)."""

    kind = "release"
    ranking = MACE_BAYES.name

    def shared_steps(self, subject):
        """The nearest-synthetic distances, then MACE fitted on them."""
        return [
            SharedStep(DISTANCE, _distances, key="distances"),
            mace_fit_step(MACE_FIT, _distance_query, (DISTANCE,)),
        ]

    def analyses(self, subject):
        """``ANALYSES``, then one figure point per ``SIZE_FRACTIONS``."""
        return [*ANALYSES, *(size_point(fraction) for fraction in SIZE_FRACTIONS)]

    def describe(self, subject, results):
        """Rows of the release and its copy counts (members and non-members apart)."""
        exact = {r.name: r for r in results}.get(EXACT_NAME)
        copied = None if exact is None or not exact.ok else exact.scores.score
        facts = {"synthetic_rows": len(subject.inputs.synthetic)}
        facts.update(copy_counts(self.targets.membership, copied, subject.shared.distances))
        return facts

    def record_columns(self, subject, results):
        """Each target's nearest-synthetic distance and whether it is verbatim in the release."""
        n = len(self.targets.membership)
        exact = {r.name: r for r in results}.get(EXACT_NAME)
        distance = subject.shared.distances
        return {
            "nearest_synthetic_distance": np.full(n, np.nan) if distance is None else distance,
            "verbatim_in_release": None if exact is None or not exact.ok else exact.flags(),
        }


def _run(prepared, synthetic, options, disclosure):
    """The engine on every release, then the notes and the disclosure analyses;
    ``(results, notes, tables, other failures, rows of each input table)``."""
    n_rows = {name: len(frame) for name, frame in prepared.tables.items()}
    # the raw releases nothing reads before the disclosure risks: all of them without
    # those, else the ones the CLI can read again from their files
    _let_go(prepared, synthetic, disclosure)
    base = options.random_state
    engine = ReleaseAudit(
        prepared.targets,
        confidence=options.confidence,
        delta=float(options.delta),
        random_state=base,
        n_jobs=options.n_jobs,
        on_error=options.on_error,
        inputs=ReleaseInputs(
            prepared.X_targets, prepared.X_reference, prepared.target_keys, options.device
        ),
    )
    # the encoded releases are handed to the subjects (taken out of ``prepared``) and let
    # go after the engine: the disclosure risks read the raw tables. Each release's keys
    # only say which targets it holds verbatim: looked up now, then let go (76 MiB at 10
    # million rows, through DOMIAS's peak otherwise)
    subjects = [
        Subject(key, Release(prepared.synthetic.pop(key), copied), ReleaseShared())
        for key, copied in [
            (key, in_sorted(prepared.target_keys, prepared.synthetic_keys.pop(key)))
            for key in list(prepared.synthetic)
        ]
    ]
    desc = "sklearn-mace audit"
    # a release's arrays go to a CUDA device once for all its passes (a no-op on the CPU)
    with keep_on_device(options.device):
        results = engine.run_with_progress(subjects, desc=desc, verbose=options.verbose)
    del subjects
    notes = prepared.notes + holdout_copy_notes(results)
    tables, other = {}, []
    if disclosure:
        seed = keyed_seed(engine.base_seed, "every release", DISCLOSURE_NAME)
        table, error = _disclosure(prepared, synthetic, options, seed, notes)
        if error is None:
            tables["disclosure"] = table
        else:
            other.append(("every release", DISCLOSURE_NAME, error))
    return results, notes, tables, other, n_rows


def _disclosure(prepared, synthetic, options, seed, notes):
    """:func:`run_disclosure` on the raw releases, those let go read again from their files
    first (:func:`_read_again`): ``(table, error)``. A file changed since the first read is
    an :class:`AuditInputError`, or (``on_error="report"``) the failure of the disclosure
    risks, the analyses' results kept: never figures for another table."""
    try:
        _read_again(prepared, synthetic)
    except AuditInputError as exc:
        if options.on_error == "raise":
            raise
        return None, str(exc)
    return run_disclosure(
        prepared.tables,
        synthetic,
        prepared.kept,
        confidence=options.confidence,
        seed=seed,
        notes=notes,
    )


def audit_release(
    members,
    non_members,
    synthetic,
    reference=None,
    *,
    columns=None,
    prior=None,
    confidence=0.95,
    delta=0.0,
    claimed_epsilon=1.0,
    bounded_margin=0.1,
    max_categories=20,
    group_by=None,
    random_state=0,
    n_jobs=None,
    disclosure=True,
    id_columns="auto",
    allow_unparsed=(),
    drop_overlapping_records=False,
    max_columns=5000,
    verbose=True,
    on_error="raise",
    device="auto",
):
    """Audit one or more synthetic releases for membership leakage.

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
        ``1 − α``: every certified number printed for a release — each analysis's ε and
        advantage lower bounds, the headline, the figure points — holds together with this
        probability; each of the ``K`` claims is computed at ``1 − α/K`` (Bonferroni).
    delta : float in [0, 1), default=0.0
        The δ of (ε, δ)-DP at which the ε lower bounds are stated.
    claimed_epsilon : float >= 0, default=1.0
        The ε of a DP claim to test: a certified ε above it turns a release's card red, and
        the figures draw its bound. Member-vs-fresh-record audits refute *substitute-one*
        DP; for an add/remove-one claim ε (what DP synthesizers state), pass ``2·ε``.
    bounded_margin : float in (0, 1), default=0.1
        A release's card is green ("leakage bounded") only when every analysis's certified
        upper bound on the advantage of any threshold on its scores is at most
        ``|2p − 1| + bounded_margin`` (``docs/design.md``, "One card, one set of claim
        rules"); otherwise it is red (leakage certified) or inconclusive.
    max_categories : int >= 1, default=20
        Text columns with more categories, after merging the rare ones, are dropped as
        identifiers or free text (see :func:`encode_tables`).
    group_by : str, default=None
        A column of the members and non-members whose values group the records in the risk
        figure and in records.csv (subgroups, DOMIAS §5.3); it may or may not be audited.
    random_state : int, default=0
        The base of every seed (reference split, folds, cross-fitting, operating-point
        splits): the same inputs give the same report.
    n_jobs : int, default=None
        Releases audited in parallel (joblib; ``joblib.parallel_config`` picks the backend).
        Seeds are drawn up front, so the report does not depend on it.
    disclosure : bool, default=True
        Also measure the attribute-inference risk of every column and the linkability risk
        of each release (:func:`~sklearn_mace.disclosure.disclosure_summary`; estimates with
        exact intervals corrected over a release's rows, not certified claims), on at most
        500 members and 500 controls (non-members: records no release can have seen).
    id_columns : "auto" or list of str, default="auto"
        Columns left out as row ids: ``"auto"`` those that look like one, each named in an
        :class:`~sklearn_mace.report.AuditInputWarning`; a list exactly those (``[]``: none).
        See :func:`encode_tables`.
    allow_unparsed : list of str, default=()
        Columns that hold numbers in the real tables but may hold other text in a release
        for more than 1 % of its values (then counted as missing, with a note). Without it
        such a release is an input error naming the column, the share and examples (a
        release that writes ``"14.25 cm"`` must not pass as one without information).
    drop_overlapping_records : bool, default=False
        Leave the records found among both the members and the non-members out of both
        tables (with an :class:`~sklearn_mace.report.AuditInputWarning`); by default they
        are an input error naming the rows. A record labelled both ways hides leakage.
    max_columns : int, default=5000
        Refuse tables with more audited columns (see :func:`encode_tables`).
    verbose : bool, default=True
        Show a progress bar on stderr.
    on_error : {"raise", "report"}, default="raise"
        A failing analysis (or shared step) raises its exception (``"raise"``, as
        scikit-learn's ``GridSearchCV(error_score="raise")``), or becomes a failure with its
        reason in a partial report while the others go on (``"report"``, what
        ``sklearn-mace audit`` does: exit code 3).
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Where the kernel passes run: the nearest-synthetic distances, MACE's estimator,
        DOMIAS's densities, the MC and GAN-leaks CAL distances (``"auto"``: CUDA when
        available, else the CPU; ``docs/design.md``, "Devices and threads"). A CUDA device
        the machine lacks is an input error before any work. The disclosure analyses run on
        the CPU.

    Returns
    -------
    result : AuditResult
        One :class:`SubjectResult` per release; :func:`write_report` writes the report.

    Examples
    --------
    A release that copies its training rows is caught (red, and its verbatim members named);
    30 members cannot bound a fresh draw's leakage (inconclusive, not green):

    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.report import audit_release
    >>> rng = np.random.default_rng(0)
    >>> def table(n):
    ...     return pd.DataFrame({"age": rng.integers(20, 70, n).astype(float),
    ...                          "income": rng.normal(50, 10, n).round(1)})
    >>> members, non_members = table(30), table(30)
    >>> result = audit_release(members, non_members, {"copy": members, "fresh": table(30)},
    ...                disclosure=False, verbose=False)
    >>> [(r.name, result.verdict(r)) for r in result.subjects]
    [('copy', 'leak'), ('fresh', 'inconclusive')]
    >>> result.headline(result.subjects[0])
    'leakage certified above ε = 1 — disclosure: 30 members appear verbatim'
    """
    check_claim_options(
        confidence=confidence, prior=prior, delta=delta, claimed_epsilon=claimed_epsilon
    )
    check_max_categories(max_categories)
    check_on_error(on_error)
    claimed = (float(claimed_epsilon), check_margin(bounded_margin))
    synthetic = _as_releases(synthetic)
    base = base_seed(random_state)
    options = ReleaseOptions(
        columns=columns,
        prior=prior,
        max_categories=max_categories,
        group_by=group_by,
        confidence=confidence,
        delta=delta,
        random_state=base,
        n_jobs=n_jobs,
        id_columns=id_columns,
        allow_unparsed=allow_unparsed,
        drop_overlapping_records=drop_overlapping_records,
        max_columns=max_columns,
        verbose=verbose,
        on_error=on_error,
        device=check_device(device),
    )
    prepared = prepare_release_inputs(
        members,
        non_members,
        synthetic,
        reference,
        options=options,
        seed=keyed_seed(base, "inputs", "reference split"),
    )
    return _result(prepared, *_run(prepared, synthetic, options, disclosure), options, claimed)


class HandedOver(dict):
    """Releases (``{name: table}``) read for one audit alone, as the CLI reads them: the
    audit drops them from the dict once nothing reads the raw tables before the disclosure
    risks (before the analyses), so that they are freed (issue #28: 458 MiB for a
    10-million-row, 6-column release). Without the disclosure risks every release goes;
    with them, those with a :class:`~._inputs.ReleaseFile` in ``sources`` (name -> the
    file to read it again from, or None), read again after the analyses. A plain dict is
    never changed."""

    def __init__(self, *args, sources=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.sources = dict(sources or {})


def _let_go(prepared, synthetic, disclosure):
    """Drop the audit's own references to the raw releases (``prepared.tables``) that
    nothing reads before the disclosure risks, and the caller's when it handed them over
    (:class:`HandedOver`): every release without the disclosure risks; with them, those
    the caller can read again (``HandedOver.sources``: their fingerprint taken first, and
    None left in their place, which keeps the releases' order)."""
    handed = isinstance(synthetic, HandedOver)
    sources = synthetic.sources if handed else {}
    for name in [n for n in synthetic if not disclosure or sources.get(n) is not None]:
        prepared.tables.pop(f"synthetic '{name}'", None)
        if disclosure:
            sources[name].remember(synthetic[name])
            synthetic[name] = None
        elif handed:
            del synthetic[name]


def _read_again(prepared, synthetic):
    """Put back the releases :func:`_let_go` dropped with the disclosure risks, read again
    from their files (:meth:`~._inputs.ReleaseFile.read`)."""
    for name in [n for n, frame in synthetic.items() if frame is None]:
        synthetic[name] = synthetic.sources[name].read()
        prepared.tables[f"synthetic '{name}'"] = synthetic[name]


def _as_releases(synthetic):
    """``{name: table}``: a single table is called "synthetic"; no table is an error."""
    if not isinstance(synthetic, dict):
        synthetic = {"synthetic": synthetic}
    if not synthetic:
        raise AuditInputError("At least one synthetic table is needed.")
    return synthetic


def _result(prepared, results, notes, tables, other, n_rows, options, claimed):
    return AuditResult(
        kind="release",
        subjects=results,
        targets=prepared.targets,
        confidence=options.confidence,
        delta=float(options.delta),
        claimed_epsilon=claimed[0],
        bounded_margin=claimed[1],
        n_rows=n_rows,
        inputs=ReleaseReportInputs(
            feature_names=prepared.feature_names,
            column_report=prepared.column_report,
            unparsed_columns=prepared.unparsed,
        ),
        notes=notes + failure_notes(results, other),
        other_failures=other,
        tables=tables,
    )
