"""Generalized (Koyejo et al., 2014) membership metrics: MACE Eq. 8, Lemma 2 and Eq. 20."""

import numpy as np

from .._validation import check_prior, validate_membership

__all__ = ["GeneralizedMetric"]

_COEFFICIENTS = ("a0", "a11", "a10", "a01", "a00", "b0", "b11", "b10", "b01", "b00")


def _am_coefficients(prior):
    # AM = (TPR + TNR) / 2 = TP / (2p) + TN / (2(1 - p)): linear in TP and TN once the
    # class totals are replaced by the prior, so its coefficients depend on p.
    return {"a11": 1.0 / (2 * prior), "a00": 1.0 / (2 * (1 - prior)), "b0": 1.0}


def _wa_coefficients(w1, w2, w3, w4):
    return {"a11": w1, "a00": w2, "b11": w1, "b00": w2, "b10": w3, "b01": w4}


_PRESETS = {
    "accuracy": {"a11": 1, "a00": 1, "b11": 1, "b10": 1, "b01": 1, "b00": 1},
    "ppv": {"a11": 1, "b11": 1, "b10": 1},
    "tpr": {"a11": 1, "b11": 1, "b01": 1},
    "tnr": {"a00": 1, "b10": 1, "b00": 1},
    "f1": {"a11": 2, "b11": 2, "b10": 1, "b01": 1},
}
_ALIASES = {"precision": "ppv", "recall": "tpr", "specificity": "tnr"}
METRIC_NAMES = tuple(sorted({*_PRESETS, *_ALIASES, "am", "wa"}))


class GeneralizedMetric:
    """A generalized metric: a ratio of linear functions of the confusion matrix.

    MACE Eq. 8 (after Koyejo et al., 2014)::

        ℓ = (a0 + a11·TP + a10·FP + a01·FN + a00·TN) / (b0 + b11·TP + b10·FP + b01·FN + b00·TN)

    with TP, FP, FN, TN the joint probabilities ``P(A = 1, m = 1)`` etc. Accuracy, PPV,
    TPR, TNR, F1, weighted accuracy and the balanced AM measure are all instances; build
    them with :meth:`from_name`.

    Parameters
    ----------
    a0, a11, a10, a01, a00 : float, default=0
        Numerator coefficients.
    b0, b11, b10, b01, b00 : float, default=0
        Denominator coefficients.

    See Also
    --------
    sklearn_mace.metrics.membership_advantage : the accuracy-based advantage (MACE Def. 1).

    References
    ----------
    MACE (TMLR 2023), Eq. 8, Lemma 2, Eq. 20; Koyejo et al., "Consistent binary
    classification with generalized performance metrics", NeurIPS 2014.

    Examples
    --------
    >>> from sklearn_mace.metrics import GeneralizedMetric
    >>> GeneralizedMetric.from_name("accuracy").optimal_threshold()
    0.5
    >>> GeneralizedMetric.from_name("am").optimal_threshold(prior=0.1)
    0.1
    >>> GeneralizedMetric.from_name("ppv").optimal_threshold() is None
    True
    """

    def __init__(
        self,
        *,
        a0=0.0,
        a11=0.0,
        a10=0.0,
        a01=0.0,
        a00=0.0,
        b0=0.0,
        b11=0.0,
        b10=0.0,
        b01=0.0,
        b00=0.0,
    ):
        given = (a0, a11, a10, a01, a00, b0, b11, b10, b01, b00)
        values = dict(zip(_COEFFICIENTS, given, strict=True))
        for key, value in values.items():
            if not np.isfinite(value):
                raise ValueError(f"Coefficient {key} must be finite; got {value!r}.")
        self._fixed = {k: float(v) for k, v in values.items()}
        self._builder = None
        self.name = None

    @classmethod
    def from_name(cls, name, *, weights=(1.0, 1.0, 1.0, 1.0)):
        """A named preset.

        Parameters
        ----------
        name : {"accuracy", "ppv", "precision", "tpr", "recall", "tnr", "specificity", \
"am", "wa", "f1"}
            ``"am"`` is the balanced measure ``(TPR + TNR) / 2`` (Menon et al., 2013), whose
            coefficients depend on the prior given to the methods; ``"wa"`` is the weighted
            accuracy ``(w1·TP + w2·TN) / (w1·TP + w2·TN + w3·FP + w4·FN)`` (MACE App. B).
        weights : tuple of 4 floats, default=(1, 1, 1, 1)
            ``(w1, w2, w3, w4)`` for ``"wa"``; ignored otherwise.

        Returns
        -------
        metric : GeneralizedMetric
            The preset, with ``name`` set to its canonical name.
        """
        if not isinstance(name, str) or name.lower() not in METRIC_NAMES:
            raise ValueError(f"metric must be one of {METRIC_NAMES}; got {name!r}.")
        key = _ALIASES.get(name.lower(), name.lower())
        if key == "am":
            metric = cls()
            metric._builder = _am_coefficients
        elif key == "wa":
            if len(weights) != 4 or not all(np.isfinite(w) and w >= 0 for w in weights):
                raise ValueError(f"weights must be 4 finite non-negative floats; got {weights!r}.")
            metric = cls(**_wa_coefficients(*map(float, weights)))
        else:
            metric = cls(**_PRESETS[key])
        metric.name = key
        return metric

    @property
    def depends_on_prior(self):
        """Whether the coefficients are a function of the membership prior (``"am"``)."""
        return self._builder is not None

    def coefficients(self, prior=None):
        """The ten coefficients as a dict, at ``prior`` for prior-dependent metrics.

        Parameters
        ----------
        prior : float in (0, 1), default=None
            P(member); required by prior-dependent metrics (``"am"``), ignored by the others.

        Returns
        -------
        coefficients : dict of str to float
            ``a0, a11, a10, a01, a00, b0, b11, b10, b01, b00`` of MACE Eq. 8.
        """
        if self._builder is None:
            return dict(self._fixed)
        if prior is None:
            raise ValueError(f"The {self.name!r} metric depends on the prior; pass prior=.")
        return {**dict.fromkeys(_COEFFICIENTS, 0.0), **self._builder(check_prior(prior))}

    def optimal_threshold(self, prior=None):
        """Lemma 2: the threshold ``t_ℓ`` of the Bayes-optimal rule ``η(x) > t_ℓ``, or ``None``.

        The closed form ``t_ℓ = (a00 − a10) / (a11 − a10 − a01 + a00)`` exists when
        ``b11 = b01`` and ``b10 = b00`` (the denominator is then fixed by the prior); for
        other metrics (PPV, F1) ``t_ℓ`` must be searched (MACE Alg. 3) and this returns None.
        Accuracy gives 1/2, AM gives ``prior``, TPR gives 0.

        Parameters
        ----------
        prior : float in (0, 1), default=None
            P(member); required by prior-dependent metrics (``"am"``), ignored by the others.

        Returns
        -------
        threshold : float or None
            ``t_ℓ``, or ``None`` when Lemma 2 has no closed form for this metric.
        """
        c = self.coefficients(prior)
        denominator = c["a11"] - c["a10"] - c["a01"] + c["a00"]
        if c["b11"] != c["b01"] or c["b10"] != c["b00"] or denominator == 0:
            return None
        return (c["a00"] - c["a10"]) / denominator

    def score(self, y_true, y_pred, *, sample_weight=None, prior=None):
        """Eq. 8 on the empirical confusion matrix (fractions of the sample).

        ``prior`` is only used by prior-dependent metrics; it defaults to the fraction of
        members in ``y_true``.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Membership labels (1 or True member, 0, -1 or False non-member).
        y_pred : array-like of shape (n_samples,)
            Predicted membership, same conventions.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights; the confusion-matrix fractions are weighted by them.
        prior : float in (0, 1), default=None
            P(member) for prior-dependent metrics; ``None`` uses the member fraction.

        Returns
        -------
        value : float
            The metric ``ℓ`` on the sample.

        Examples
        --------
        >>> from sklearn_mace.metrics import GeneralizedMetric
        >>> GeneralizedMetric.from_name("accuracy").score([1, 1, 0, 0], [1, 0, 0, 0])
        0.75
        """
        m, a, w = self._labels(y_true, y_pred, sample_weight)
        tp = np.sum(w * (a == 1) * (m == 1))
        fp = np.sum(w * (a == 1) * (m == 0))
        fn = np.sum(w * (a == 0) * (m == 1))
        tn = np.sum(w * (a == 0) * (m == 0))
        if self.depends_on_prior and prior is None:
            prior = tp + fn
        c = self.coefficients(prior)
        num = c["a0"] + c["a11"] * tp + c["a10"] * fp + c["a01"] * fn + c["a00"] * tn
        den = c["b0"] + c["b11"] * tp + c["b10"] * fp + c["b01"] * fn + c["b00"] * tn
        return self._ratio(num, den)

    def empirical_measure(self, y_true, y_pred, prior):
        """MACE Eq. 20: the metric from ``TP_n`` and ``γ_n`` with the class totals set by ``prior``.

        ``TP_n`` is the fraction of records that are members predicted as members and
        ``γ_n`` the fraction predicted as members; FN and TN are then ``p − TP`` and
        ``1 − p − γ + TP``, which is what makes the estimate consistent under Experiment 2
        sampling at prior ``p``.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Membership labels (1 or True member, 0, -1 or False non-member).
        y_pred : array-like of shape (n_samples,)
            Predicted membership, same conventions.
        prior : float in (0, 1)
            P(member) ``p`` of the experiment the sample was drawn from.

        Returns
        -------
        value : float
            The Eq. 20 estimate of the metric.

        Examples
        --------
        On a balanced sample at ``prior=0.5`` accuracy is the plain accuracy:

        >>> from sklearn_mace.metrics import GeneralizedMetric
        >>> acc = GeneralizedMetric.from_name("accuracy")
        >>> acc.empirical_measure([1, 1, 0, 0], [1, 0, 0, 0], prior=0.5)
        0.75
        """
        p = check_prior(prior)
        m, a, w = self._labels(y_true, y_pred, None)
        tp, gamma = np.mean((a == 1) & (m == 1)), np.mean(a == 1)
        c = self.coefficients(p)
        e0 = c["a01"] * p + c["a00"] * (1 - p) + c["a0"]
        e1 = c["a11"] - c["a10"] - c["a01"] + c["a00"]
        e2 = c["a10"] - c["a00"]
        h0 = c["b01"] * p + c["b00"] * (1 - p) + c["b0"]
        h1 = c["b11"] - c["b10"] - c["b01"] + c["b00"]
        h2 = c["b10"] - c["b00"]
        return self._ratio(e0 + e1 * tp + e2 * gamma, h0 + h1 * tp + h2 * gamma)

    def prior_weighted_measure(self, y_true, y_pred, prior, *, sample_weight=None):
        """Eq. 20 at ``prior`` from any sample: members weighted ``p/π``, others ``(1−p)/(1−π)``.

        ``π`` is the (weighted) member fraction of ``y_true``. Under Experiment 2
        (``π = p``) the weights are 1 and this is exactly :meth:`empirical_measure`; when
        the sample's mix differs from the prior (a balanced validation fold scored at
        ``p = 0.01``), the reweighting makes ``TP_n`` estimate ``p·TPR`` and ``γ_n`` estimate
        ``p·TPR + (1 − p)·FPR``, as Eq. 20 assumes. A sample of one class falls back to
        :meth:`empirical_measure`. This is ``GeneralizedMetricAttack.metric_value_`` and the
        ``"generalized_*"`` scorers.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n_samples,)
            Membership labels and predictions (1 member, 0 or -1 non-member, or booleans).
        prior : float in (0, 1)
            ``p``.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, multiplied by the prior weights.

        Returns
        -------
        value : float
            The Eq. 20 estimate of the metric at ``prior``.

        Examples
        --------
        >>> from sklearn_mace.metrics import GeneralizedMetric
        >>> tpr = GeneralizedMetric.from_name("tpr")
        >>> tpr.prior_weighted_measure([1, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0], prior=0.1)
        0.5
        """
        p = check_prior(prior)
        m, a, w = self._labels(y_true, y_pred, sample_weight)
        fraction = float(np.sum(w * m))
        if fraction in (0.0, 1.0):
            if sample_weight is None:
                return self.empirical_measure(m, a, p)
            raise ValueError(
                "prior_weighted_measure with sample_weight needs both members and non-members "
                "(with positive weight) in y_true."
            )
        weights = w * np.where(m == 1, p / fraction, (1 - p) / (1 - fraction))
        return self.score(m, a, sample_weight=weights, prior=p)

    def _ratio(self, num, den):
        if den == 0:
            raise ValueError(
                f"The {self.name or 'generalized'} metric is undefined here: its denominator "
                "is 0 (e.g. PPV when nothing is predicted a member)."
            )
        return float(num / den)

    @staticmethod
    def _labels(y_true, y_pred, sample_weight):
        m = validate_membership(y_true, input_name="y_true", require_both_classes=False)
        a = validate_membership(y_pred, input_name="y_pred", require_both_classes=False)
        if m.shape != a.shape:
            raise ValueError(f"y_true and y_pred differ in length: {m.size} != {a.size}.")
        w = np.ones(m.size) if sample_weight is None else np.asarray(sample_weight, float)
        return m, a, w / w.sum()

    def __repr__(self):
        if self.name is not None and self.name != "wa":
            return f"GeneralizedMetric.from_name({self.name!r})"
        args = ", ".join(f"{k}={v:g}" for k, v in self._fixed.items() if v)
        return f"GeneralizedMetric({args})"
