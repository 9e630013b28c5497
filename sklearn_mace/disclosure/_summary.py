"""One table of disclosure risks per release, for the audit report."""

import pandas as pd
from sklearn.utils import check_random_state

from ._inference import AttributeInferenceRisk
from ._linkability import LinkabilityRisk
from ._rates import RESULT_COLUMNS, family_confidence
from ._singling_out import singling_out_risk

__all__ = ["FAMILY_COLUMNS", "SUMMARY_COLUMNS", "disclosure_summary", "family_size"]

#: how each row's interval is corrected, and whether it is flagged (lower bound > 0)
FAMILY_COLUMNS = ["confidence", "family_size", "flagged"]
SUMMARY_COLUMNS = ["release", "analysis", "target", "kind", *RESULT_COLUMNS, *FAMILY_COLUMNS]


def family_size(n_secrets, *, n_linkability=1, singling_out=True):
    """Rows of one release in :func:`disclosure_summary`: the family its correction counts.

    One attribute-inference row per secret column and a pooled one (two secrets or more),
    ``n_linkability`` linkability rows, two singling-out rows (univariate, multivariate).
    """
    pooled = 1 if n_secrets > 1 else 0
    return n_secrets + pooled + n_linkability + (2 if singling_out else 0)


def _aligned(name, frame, columns):
    if not hasattr(frame, "columns"):
        raise TypeError(f"{name} must be a pandas DataFrame; got {type(frame).__name__}.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"The {name} table lacks the column(s) {missing}.")
    if len(frame) == 0:
        raise ValueError(f"The {name} table has no rows.")
    return frame[columns]


def disclosure_summary(
    members,
    non_members,
    synthetic,
    *,
    secrets=None,
    linkability_columns=None,
    n_neighbors=1,
    tolerance=0.05,
    singling_out=True,
    n_queries=500,
    confidence=0.95,
    corrected=True,
    random_state=None,
):
    """Attribute-inference, linkability and singling-out risks, for each release.

    The targets are the ``members`` (the generator's training records); the control records
    are the ``non_members``: population records the releases cannot have seen, as
    anonymeter's control set. Never pass rows a release may have been built from (a reference
    sample used as filler) as controls: the release would know them as well as the members,
    and the risk would read near 0 or negative for a release that discloses its members; a
    :class:`~sklearn_mace.disclosure.ControlCopyWarning` says when a release holds more
    controls verbatim than chance explains. See :class:`AttributeInferenceRisk`,
    :class:`LinkabilityRisk` and :class:`SinglingOutRisk`: the three criteria of
    anonymisation (Article 29 Working Party, Opinion 05/2014) as anonymeter measures them.
    The rows of one release are a family of ``K`` intervals (``family_size``: one per
    secret column, the pooled one, linkability, two for singling out), corrected as the
    audit report corrects a card's claims (Bonferroni): each at ``1 − (1 − confidence)/K``,
    so that all ``K`` hold together at ``confidence``; a row is ``flagged`` when its
    corrected lower bound is above 0. Every interval is exact
    (:func:`~sklearn_mace.disclosure._rates.residual_risk`).

    Parameters
    ----------
    members, non_members : DataFrame
        Records the releases were and were not generated from (the targets and the
        controls). Every table must hold the members' columns (extra columns are ignored).
    synthetic : DataFrame or dict of str -> DataFrame
        One release, or releases by name.
    secrets : list of str, default=None
        Secret columns of the attribute-inference attack; default: every column.
    linkability_columns : (list, list), default=None
        The two views of the linkability attack; default: the first half of the columns
        and the rest.
    n_neighbors : int, default=1
        Nearest release rows per record in both attacks: the neighbours whose secret is
        the guess (median or majority), and the rows of each view that must share one to
        link.
    tolerance : float, default=0.05
        Relative tolerance of numeric guesses.
    singling_out : bool, default=True
        Whether to add the univariate and multivariate singling-out rows
        (:func:`singling_out_risk`).
    n_queries : int, default=500
        The most singling-out predicates per mode.
    confidence : float, default=0.95
        Level at which the rows of a release hold together (``corrected=True``), or each
        row's level (``corrected=False``): of the Clopper–Pearson intervals on the attack and
        control rates and of the risk interval.
    corrected : bool, default=True
        Whether each row is at the corrected level ``1 − (1 − confidence)/K``.
    random_state : int, RandomState instance or None, default=None
        Tie-breaking order (one seed per release and analysis is drawn from it).

    Returns
    -------
    summary : DataFrame
        One row per release and analysis target: ``release``; ``analysis``
        (``"attribute inference"``; ``"attribute inference (pooled)"`` with two secrets or
        more, one random secret per record, see
        :meth:`AttributeInferenceRisk.evaluate_pooled`; ``"linkability"``; ``"singling
        out"``); ``target`` (the secret column, ``"<columns_a> | <columns_b>"``, or the
        singling-out mode); ``kind``
        (of the secret; ``"views"`` for linkability, ``"predicates"`` for singling out, whose
        ``n_targets`` and ``n_control`` count predicates, each tried on both sets); then
        ``n_targets``, ``attack_rate``, ``attack_low``, ``attack_high``,
        ``n_control``, ``control_rate``, ``control_low``, ``control_high``,
        ``baseline_rate``, ``risk``, ``risk_low``, ``risk_high``; ``confidence`` (the row's
        level), ``family_size`` (``K``, the rows of its release, fixed before the analyses
        run; 1 with ``corrected=False``) and ``flagged``
        (``risk_low > 0``: the release discloses more about its members than about the
        controls, with every row of the release holding together at ``confidence``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.disclosure import disclosure_summary
    >>> rng = np.random.default_rng(0)
    >>> def table(n):
    ...     return pd.DataFrame({"age": rng.uniform(18, 90, n), "job": rng.choice(["a", "b"], n),
    ...                          "income": rng.lognormal(10, 1, n), "sick": rng.random(n) < 0.1})
    >>> members, non_members = table(300), table(300)
    >>> summary = disclosure_summary(members, non_members, {"copy": members, "fresh": table(300)},
    ...                              random_state=0)
    >>> columns = ["release", "analysis", "target", "risk", "risk_low", "risk_high"]
    >>> print(summary[columns].round(2).to_string(index=False))
    release                     analysis                       target  risk  risk_low  risk_high
       copy          attribute inference                          age  1.00      0.97       1.00
       copy          attribute inference                          job  1.00      0.94       1.00
       copy          attribute inference                       income  1.00      0.97       1.00
       copy          attribute inference                         sick  1.00      0.88       1.00
       copy attribute inference (pooled) one random secret per record  1.00      0.95       1.00
       copy                  linkability      age, job | income, sick  1.00      0.98       1.00
       copy                 singling out                   univariate  1.00      0.99       1.00
       copy                 singling out                 multivariate  1.00      0.87       1.00
      fresh          attribute inference                          age  0.00     -0.09       0.11
      fresh          attribute inference                          job  0.04     -0.28       0.32
      fresh          attribute inference                       income -0.01     -0.08       0.07
      fresh          attribute inference                         sick  0.23     -0.35       0.60
      fresh attribute inference (pooled) one random secret per record -0.08     -0.35       0.15
      fresh                  linkability      age, job | income, sick  0.00     -0.03       0.03
      fresh                 singling out                   univariate  0.00     -0.02       0.02
      fresh                 singling out                 multivariate  0.02     -0.47       0.34
    >>> for name, rows in summary.groupby("release"):
    ...     print(name, rows.family_size.iloc[0], rows.confidence.iloc[0], rows.flagged.sum())
    copy 8 0.99375 8
    fresh 8 0.99375 0
    """
    if not hasattr(members, "columns"):
        raise TypeError(f"members must be a pandas DataFrame; got {type(members).__name__}.")
    columns = list(members.columns)
    members = _aligned("members", members, columns)
    control = _aligned("non_members", non_members, columns)
    releases = synthetic if isinstance(synthetic, dict) else {"synthetic": synthetic}
    if not releases:
        raise ValueError("synthetic holds no release.")
    views = (None, None) if linkability_columns is None else tuple(linkability_columns)
    if len(views) != 2:
        raise ValueError("linkability_columns must be two lists of columns (columns_a, columns_b).")
    rng = check_random_state(random_state)
    frames = []
    for name, release in releases.items():
        release = _aligned(f"synthetic {name!r}", release, columns)
        inference = AttributeInferenceRisk(
            secrets=secrets,
            n_neighbors=n_neighbors,
            tolerance=tolerance,
            confidence=confidence,
            random_state=rng.randint(2**31),
        ).fit(release)
        k = family_size(len(inference.secrets_), singling_out=singling_out) if corrected else 1
        level = family_confidence(confidence, k)
        inference.set_params(confidence=level)  # read by evaluate only
        attribute = inference.evaluate(members, control).reset_index(names="target")
        attribute.insert(0, "analysis", "attribute inference")
        if len(inference.secrets_) > 1:
            pooled = inference.evaluate_pooled(members, control).reset_index(names="target")
            pooled.insert(0, "analysis", "attribute inference (pooled)")
            pooled["target"] = "one random secret per record"
            attribute = pd.concat([attribute, pooled], ignore_index=True)
        del inference  # each attack holds its own encoding of the release: one at a time
        linking = LinkabilityRisk(
            columns_a=views[0],
            columns_b=views[1],
            n_neighbors=n_neighbors,
            confidence=level,
            random_state=rng.randint(2**31),
        ).fit(release)
        link = linking.evaluate(members, control)
        del linking
        link.insert(0, "target", link.pop("columns_a") + " | " + link.pop("columns_b"))
        link.insert(0, "analysis", "linkability")
        link.insert(2, "kind", "views")
        parts = [attribute, link.reset_index(drop=True)]
        if singling_out:
            single = singling_out_risk(
                members,
                control,
                release,
                n_queries=n_queries,
                confidence=level,
                random_state=rng.randint(2**31),
            ).reset_index(names="target")
            single.insert(0, "analysis", "singling out")
            single.insert(2, "kind", "predicates")
            parts.append(single)
        frame = pd.concat(parts, ignore_index=True)
        frame.insert(0, "release", name)
        frame["confidence"], frame["family_size"] = level, k
        frame["flagged"] = frame["risk_low"].to_numpy(dtype=float) > 0
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)[SUMMARY_COLUMNS]
