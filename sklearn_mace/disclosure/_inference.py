"""Attribute-inference risk: guessing a secret column from a release (anonymeter's inference)."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ..utils._sklearn_compat import Interval, _fit_context
from ._base import ReleaseMixin
from ._mixed import NUMERIC
from ._rates import RESULT_COLUMNS, risk_row

#: share of α on the failures' odds-ratio interval (see residual_risk): controls are often right
ODDS_SHARE = 0.7
_SORT_BLOCK = 1 << 20  # release values sorted at a time for the random guess's rate

__all__ = ["AttributeInferenceRisk"]


class AttributeInferenceRisk(ReleaseMixin):
    """Risk that a release lets an attacker infer a secret column of the records behind it.

    The attacker knows the ``known`` columns of a target record and guesses its ``secret``
    column as the secret of the nearest release record on the known columns (several
    neighbours: their most frequent value, or their median for a numeric secret), under a
    Gower-like mixed-type distance (numeric columns scaled by their release range,
    categorical columns 0/1 mismatch; see :mod:`sklearn_mace.disclosure._mixed`). This is
    anonymeter's ``InferenceEvaluator`` attack (Giomi et al. 2023).

    ``fit(release)`` learns the release; :meth:`predict` gives the attacker's guesses;
    :meth:`evaluate` runs the attack on ``targets`` (records the generator was trained on)
    and on ``control`` records (same population, not trained on) through the same release
    and reports, per secret column, the success rates with exact (Clopper–Pearson)
    intervals, the exact success rate of a random guess (the secret of a uniformly random
    release row) and anonymeter's risk ``(a − c) / (1 − c)`` with an exact interval: the
    rates' interval intersected with one through the failures' odds ratio (Fisher's
    conditional interval), narrower where the control is often right
    (:func:`~sklearn_mace.disclosure._rates.residual_risk`, ``odds_share=0.7``). A release
    that reveals nothing about its training records gives the targets and the control the
    same success rate, risk 0; a release that copies them gives risk 1.

    A guess of a categorical secret succeeds when it equals the true value (missing values
    form one category); a guess ``g`` of a numeric secret ``t`` succeeds when
    ``|g − t| ≤ tolerance · |t|`` (so a zero must be guessed exactly). anonymeter 1.1.0
    divides by the guess instead, ``(g − t)/g`` without an absolute value, which counts
    every negative guess as a success.

    A secret that the known columns determine (Adult's ``education-num`` given
    ``education``) is guessed for the control as well as for the targets: its risk is near
    0 with a wide interval, or NaN with a warning when every control guess is right.

    Parameters
    ----------
    secrets : str, int, list or None, default=None
        The secret column(s), by name for a DataFrame or by position; ``None``: every column
        in turn. A single name or position makes :meth:`predict` return one column.
    known : list of str or int, default=None
        The columns the attacker knows; default: all columns but the secret.
    n_neighbors : int, default=1
        Release rows consulted per guess.
    tolerance : float, default=0.05
        Relative tolerance of a numeric guess (0: exact).
    confidence : float, default=0.95
        Level of the rate intervals and of the risk interval.
    random_state : int, RandomState instance or None, default=None
        Order in which ties between equidistant release rows are broken.

    Attributes
    ----------
    secrets_ : list
        The secret columns (names, or positions for arrays).
    column_kinds_ : ndarray of str
        ``"numeric"`` or ``"categorical"`` per column (numeric dtypes but booleans are
        numeric; arrays are all numeric).
    n_release_ : int
        Rows of the release.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when the release is a DataFrame with string column names.

    See Also
    --------
    LinkabilityRisk : Linking two halves of a record through the release.
    disclosure_summary : Both risks for several releases, as one table.

    References
    ----------
    Giomi, Boenisch, Wehmeyer & Tasnádi, "A Unified Framework for Quantifying Privacy Risk in
    Synthetic Data", PoPETs 2023(2), arXiv:2211.10459 (inference risk); Gower (1971).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.disclosure import AttributeInferenceRisk
    >>> targets = pd.DataFrame({"age": [25.0, 40.0, 61.0, 33.0], "sick": ["y", "n", "y", "n"]})
    >>> control = pd.DataFrame({"age": [26.0, 39.0, 60.0, 34.0], "sick": ["n", "y", "n", "y"]})
    >>> risk = AttributeInferenceRisk(secrets="sick", random_state=0).fit(targets)  # a copy
    >>> risk.predict(control)
    array(['y', 'n', 'y', 'n'], dtype=object)
    >>> result = risk.evaluate(targets, control)
    >>> result.loc["sick", ["attack_rate", "control_rate", "risk"]].tolist()
    [1.0, 0.0, 1.0]
    """

    _parameter_constraints = {
        "secrets": [str, Integral, "array-like", None],
        "known": ["array-like", None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "tolerance": [Interval(Real, 0, None, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        secrets=None,
        known=None,
        n_neighbors=1,
        tolerance=0.05,
        confidence=0.95,
        random_state=None,
    ):
        self.secrets = secrets
        self.known = known
        self.n_neighbors = n_neighbors
        self.tolerance = tolerance
        self.confidence = confidence
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the release: the table the attacker searches.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_release, n_features)
            The released (synthetic) records. A DataFrame keeps mixed column types; an
            array is read as numeric.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator (``secrets_`` set).
        """
        self._fit_release(X)
        self._neighbor_cache = []
        n_features = self.n_features_in_
        all_columns = list(range(n_features))
        secret_pos = (
            all_columns if self.secrets is None else self._positions(self.secrets, "secrets")
        )
        known_pos = None if self.known is None else self._positions(self.known, "known")
        self._known_pos = []
        for s in secret_pos:
            if known_pos is not None and s in known_pos:
                raise ValueError(
                    f"known includes the secret column {self._names[s]!r}; the attacker "
                    "cannot know the column it guesses."
                )
            known_s = [j for j in all_columns if j != s] if known_pos is None else known_pos
            if not known_s:
                raise ValueError(
                    f"The attacker knows no column: the release has {n_features} feature(s) "
                    "and the secret leaves none; at least 2 features are needed."
                )
            self._known_pos.append(known_s)
        if self.n_neighbors > self.n_release_:
            raise ValueError(
                f"n_neighbors={self.n_neighbors} exceeds the number of release rows "
                f"(n_samples = {self.n_release_})."
            )
        self._secret_pos = secret_pos
        self.secrets_ = [self._names[s] for s in secret_pos]
        return self

    def _neighbors(self, encoded):
        """Nearest release rows on the known columns, one (n, n_neighbors) array per secret.

        The last two answers are kept: :meth:`evaluate` and :meth:`evaluate_pooled` attack
        the same targets and controls (``disclosure_summary`` calls both), and the search
        is a pass over the whole release per record."""
        cache = self._neighbor_cache
        for queries, found in cache:
            if len(queries) == len(encoded) and all(
                np.array_equal(a, b, equal_nan=True) for a, b in zip(queries, encoded, strict=True)
            ):
                return found
        table, k = self._table, self.n_neighbors
        if self.known is None:
            found = table.kneighbors_leave_one_out(encoded, self._secret_pos, k)
            found = [found[s] for s in self._secret_pos]
        else:
            shared = table.kneighbors(encoded, self._known_pos[0], k)  # the same known columns
            found = [shared] * len(self._secret_pos)
        cache[:] = [*cache[-1:], ([np.copy(c) for c in encoded], found)]  # a memo, in place
        return found

    def _guess(self, s, idx):
        """Guessed values of secret ``s`` from its neighbours ``idx``, and their codes or values."""
        if self.column_kinds_[s] == NUMERIC:
            guesses = np.median(self._raw(s, idx), axis=1)
            return guesses, guesses
        codes = self._table.columns[s][idx]
        votes = (codes[:, :, None] == codes[:, None, :]).sum(axis=2)
        rows = idx[np.arange(len(idx)), np.argmax(votes, axis=1)]  # ties: the nearest
        return self._raw(s, rows), self._table.columns[s][rows]

    def predict(self, X):
        """The attacker's guesses of the secret(s) of each record of ``X``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Records with the release's columns (the secret columns are not read).

        Returns
        -------
        guesses : ndarray of shape (n_samples,) or (n_samples, n_secrets)
            One column per secret; 1-D when ``secrets`` names a single column.
        """
        _, encoded = self._encoded(X)
        neighbors = self._neighbors(encoded)
        columns = [
            self._guess(s, idx)[0] for s, idx in zip(self._secret_pos, neighbors, strict=True)
        ]
        if isinstance(self.secrets, (str, Integral)):
            return columns[0]
        numeric = all(self.column_kinds_[s] == NUMERIC for s in self._secret_pos)
        return np.column_stack(columns) if numeric else np.column_stack(columns).astype(object)

    def _successes(self, frame, encoded, s, idx):
        _, compare = self._guess(s, idx)
        if self.column_kinds_[s] == NUMERIC:
            truth = self._table.numeric_values(frame, s)
            return np.abs(compare - truth) <= self.tolerance * np.abs(truth)
        return compare == encoded[s]

    def _baseline_rate(self, frame, encoded, s):
        """Exact expected success of guessing the secret of a uniformly random release row."""
        if self.column_kinds_[s] == NUMERIC:
            release = self._raw(s)
            truth = self._table.numeric_values(frame, s)
            slack = self.tolerance * np.abs(truth)
            hits = np.zeros(len(truth), dtype=np.intp)
            # the release values within each slack, counted on sorted blocks of the
            # column (issue #28: not a sorted copy of it, 76 MiB at 10 million rows)
            for start in range(0, len(release), _SORT_BLOCK):
                part = np.sort(release[start : start + _SORT_BLOCK])
                hits += np.searchsorted(part, truth + slack, side="right")
                hits -= np.searchsorted(part, truth - slack, side="left")
            return float(np.mean(hits) / len(release))
        counts = np.bincount(self._table.columns[s], minlength=len(self._table.categories[s]))
        codes = encoded[s]
        share = np.where(codes >= 0, counts[np.maximum(codes, 0)], 0) / self.n_release_
        return float(np.mean(share))

    def _all_successes(self, frame, encoded):
        """(n, n_secrets) bool: the attack's success on every secret of every record."""
        neighbors = self._neighbors(encoded)
        return np.column_stack(
            [
                self._successes(frame, encoded, s, neighbors[i])
                for i, s in enumerate(self._secret_pos)
            ]
        )

    def evaluate_pooled(self, targets, control):
        """The risk of guessing one secret per record, drawn at random among the secrets.

        Per-column risks are wide where the control guesses almost every value right (a
        column that is 0 for 95 % of records leaves ``1 − c`` near 0). Pooling the columns
        before the interval keeps it exact: every record, target or control, is attacked on
        one secret column drawn uniformly (``random_state``), so each record is one
        independent trial and the Clopper–Pearson intervals hold; the risk is that of an
        attacker who targets a random column, ``(ā − c̄)/(1 − c̄)``.

        Parameters
        ----------
        targets, control : DataFrame or array-like
            As in :meth:`evaluate`.

        Returns
        -------
        result : DataFrame with one row, index ``"pooled"``
            ``kind`` (``"pooled"``) and the columns of :meth:`evaluate`; ``baseline_rate``
            is the random guess averaged over the drawn columns.
        """
        target_frame, target_encoded = self._encoded(targets)
        control_frame, control_encoded = self._encoded(control)
        self._check_controls(target_encoded, control_encoded)
        rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31))
        picks = []
        for frame, encoded in ((target_frame, target_encoded), (control_frame, control_encoded)):
            success = self._all_successes(frame, encoded)
            column = rng.integers(success.shape[1], size=len(success))
            picks.append(success[np.arange(len(success)), column])
        baseline = np.mean(
            [self._baseline_rate(target_frame, target_encoded, s) for s in self._secret_pos]
        )
        row = risk_row(picks[0], picks[1], float(baseline), self.confidence, ODDS_SHARE)
        index = pd.Index(["pooled"], name="secret")
        return pd.DataFrame(
            [{"kind": "pooled", **row}], index=index, columns=["kind", *RESULT_COLUMNS]
        )

    def evaluate(self, targets, control):
        """Attack ``targets`` and ``control`` through the release; the risk per secret.

        Parameters
        ----------
        targets : DataFrame or array-like of shape (n_targets, n_features)
            Records the release was generated from (the generator's training records).
        control : DataFrame or array-like of shape (n_control, n_features)
            Records from the same population that the release cannot have seen (the
            non-members; never rows the release may have been built from, such as a
            reference sample). A :class:`~sklearn_mace.disclosure._controls.ControlCopyWarning`
            says when the release holds more of them verbatim than chance explains.

        Returns
        -------
        result : DataFrame, one row per secret column (index ``secret``)
            ``kind``; ``n_targets``, ``attack_rate`` and its Clopper–Pearson interval
            ``attack_low``/``attack_high``; the same for the control (``n_control``,
            ``control_rate``, ...); ``baseline_rate`` (random guess, on the targets);
            ``risk`` = (attack − control)/(1 − control) and its interval
            ``risk_low``/``risk_high``, all at level ``confidence``.
        """
        target_frame, target_encoded = self._encoded(targets)
        control_frame, control_encoded = self._encoded(control)
        self._check_controls(target_encoded, control_encoded)
        target_neighbors = self._neighbors(target_encoded)
        control_neighbors = self._neighbors(control_encoded)
        rows = []
        for i, s in enumerate(self._secret_pos):
            row = risk_row(
                self._successes(target_frame, target_encoded, s, target_neighbors[i]),
                self._successes(control_frame, control_encoded, s, control_neighbors[i]),
                self._baseline_rate(target_frame, target_encoded, s),
                self.confidence,
                ODDS_SHARE,
            )
            rows.append({"kind": self.column_kinds_[s], **row})
        index = pd.Index(self.secrets_, name="secret")
        return pd.DataFrame(rows, index=index, columns=["kind", *RESULT_COLUMNS])
