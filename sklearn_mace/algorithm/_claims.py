"""A DP claim as a trade-off curve: pure, approximate, Gaussian, or an accountant's ε(δ).

A claim is tested as a whole curve (Dong, Roth & Su 2022, f-DP): every membership test of
the recipe must have ``FNR ≥ f(FPR)``. :class:`PrivacyClaim` gives the curve of each kind of
claim and converts an add/remove-one claim to substitute-one by group privacy (a
substitution is a removal then an addition).
"""

from dataclasses import dataclass
from numbers import Real

import numpy as np

from ..metrics._fdp import (
    approximate_tradeoff,
    epsilon_from_error_bounds,
    gaussian_epsilon,
    gaussian_tradeoff,
    mu_from_error_bounds,
)

__all__ = ["PrivacyClaim"]

RELATIONS = {"add_remove": "add/remove-one", "substitute": "substitute-one"}


def _check_number(value, name, low, high=np.inf, closed_high=False):
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise TypeError(f"{name} must be a real number; got {value!r}.")
    value = float(value)
    inside = low <= value and (value <= high if closed_high else value < high)
    if not np.isfinite(value) or not inside:
        bracket = "]" if closed_high else ")"
        raise ValueError(f"{name} must be in [{low:g}, {high:g}{bracket}; got {value!r}.")
    return value


def _check_relation(relation):
    if relation not in RELATIONS:
        raise ValueError(f"relation must be 'add_remove' or 'substitute'; got {relation!r}.")
    return relation


@dataclass(frozen=True)
class PrivacyClaim:
    """A differential-privacy claim as a trade-off curve ``f`` (f-DP, Dong, Roth & Su 2022).

    Build one with :meth:`pure`, :meth:`approximate`, :meth:`gaussian` or
    :meth:`from_epsilons`. The claim says that every test of "the output came from ``D``"
    against "from ``D′``", for neighbours ``D, D′`` under ``relation``, has false-negative rate
    at least ``f(false-positive rate)``:

    * (ε, δ)-DP: ``f(α) = max(0, 1 − δ − e^ε·α, e^−ε·(1 − δ − α))`` (piecewise linear; pure
      DP is δ = 0);
    * μ-GDP: ``f(α) = Φ(Φ⁻¹(1 − α) − μ)``;
    * an accountant's curve ``ε(δ)`` (pairs ``(ε_i, δ_i)``, each of which the mechanism
      satisfies): the pointwise maximum of the pairs' curves.

    A claim stated for add/remove-one neighbours, audited on substitute-one neighbours, is
    converted by group privacy (a substitution is a removal and an addition): (ε, δ) becomes
    (2ε, (1 + e^ε)·δ), μ-GDP becomes 2μ-GDP (Dong et al. Thm 2.14), an ε(δ) curve pair by
    pair. A substitute-one claim says nothing about add/remove-one neighbours (datasets of
    different sizes) and cannot be audited there.

    Read more in the :ref:`User Guide <dp_claims>`.

    Attributes
    ----------
    kind : {"pure", "approximate", "gaussian", "curve"}
        What the claim is.
    epsilons, deltas : tuple of float
        The (ε, δ) pairs (one for pure and approximate claims; empty for Gaussian ones).
    mu : float or None
        μ of a Gaussian claim.
    relation : {"add_remove", "substitute"}
        Neighbour relation the numbers refer to.
    stated : PrivacyClaim or None
        The claim as stated, when this one was converted from it by group privacy.

    See Also
    --------
    AlgorithmAudit : tests a claim's whole curve on shadow runs.

    References
    ----------
    J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 84(1), 2022, Prop. 2.5,
    Def. 2.7, Thm 2.14, Cor. 2.13. P. Kairouz, S. Oh, P. Viswanath. The Composition Theorem
    for Differential Privacy. ICML 2015, Thm 2.1. C. Dwork, A. Roth. The Algorithmic
    Foundations of Differential Privacy, 2014, Thm 2.2 (group privacy).

    Examples
    --------
    >>> from sklearn_mace.algorithm import PrivacyClaim
    >>> claim = PrivacyClaim.gaussian(0.5)
    >>> round(float(claim.tradeoff(0.05)), 3)
    0.874
    >>> print(claim.under("substitute"))
    0.5-GDP (add/remove-one), audited on substitute-one neighbours as 1-GDP by group privacy
    >>> round(PrivacyClaim.approximate(1.0, 1e-5).epsilon_at(1e-5), 3)
    1.0
    """

    kind: str
    epsilons: tuple = ()
    deltas: tuple = ()
    mu: float | None = None
    relation: str = "add_remove"
    stated: "PrivacyClaim | None" = None

    # ------------------------------------------------------------------ constructors

    @classmethod
    def pure(cls, epsilon, *, relation="add_remove"):
        """Pure ε-DP.

        Parameters
        ----------
        epsilon : float >= 0
            The claimed ε.
        relation : {"add_remove", "substitute"}, default="add_remove"
            Neighbour relation of the claim.

        Returns
        -------
        claim : PrivacyClaim
            The claim.
        """
        epsilon = _check_number(epsilon, "epsilon", 0.0)
        return cls("pure", (epsilon,), (0.0,), relation=_check_relation(relation))

    @classmethod
    def approximate(cls, epsilon, delta, *, relation="add_remove"):
        """(ε, δ)-DP.

        Parameters
        ----------
        epsilon : float >= 0
            The claimed ε.
        delta : float in [0, 1)
            The claimed δ.
        relation : {"add_remove", "substitute"}, default="add_remove"
            Neighbour relation of the claim.

        Returns
        -------
        claim : PrivacyClaim
            The claim.
        """
        epsilon = _check_number(epsilon, "epsilon", 0.0)
        delta = _check_number(delta, "delta", 0.0, 1.0)
        kind = "pure" if delta == 0.0 else "approximate"
        return cls(kind, (epsilon,), (delta,), relation=_check_relation(relation))

    @classmethod
    def gaussian(cls, mu, *, relation="add_remove"):
        """Gaussian DP with parameter μ (the Gaussian mechanism with sensitivity/σ = μ).

        Parameters
        ----------
        mu : float >= 0
            The claimed μ.
        relation : {"add_remove", "substitute"}, default="add_remove"
            Neighbour relation of the claim.

        Returns
        -------
        claim : PrivacyClaim
            The claim.
        """
        mu = _check_number(mu, "mu", 0.0)
        return cls("gaussian", mu=mu, relation=_check_relation(relation))

    @classmethod
    def from_epsilons(cls, epsilons, deltas, *, relation="add_remove"):
        """An accountant's curve: the mechanism is (ε_i, δ_i)-DP for every listed pair.

        Parameters
        ----------
        epsilons : array-like of float >= 0
            ε at each δ (e.g. opacus' accountant ``get_epsilon(delta)`` at several δ).
        deltas : array-like of float in [0, 1)
            The δ of each ε, the same length.
        relation : {"add_remove", "substitute"}, default="add_remove"
            Neighbour relation of the claim.

        Returns
        -------
        claim : PrivacyClaim
            The claim.
        """
        epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))
        deltas = np.atleast_1d(np.asarray(deltas, dtype=float))
        if epsilons.ndim != 1 or epsilons.shape != deltas.shape or epsilons.size == 0:
            raise ValueError(
                f"epsilons and deltas must be 1-D of the same, non-zero length; got shapes "
                f"{epsilons.shape} and {deltas.shape}."
            )
        for e in epsilons:
            _check_number(e, "epsilons", 0.0)
        for d in deltas:
            _check_number(d, "deltas", 0.0, 1.0)
        return cls(
            "curve",
            tuple(map(float, epsilons)),
            tuple(map(float, deltas)),
            relation=_check_relation(relation),
        )

    # ------------------------------------------------------------------ the curve

    def tradeoff(self, alpha):
        """The claimed least false-negative rate ``f(α)`` at false-positive rate ``α``.

        Parameters
        ----------
        alpha : float or array-like in [0, 1]
            False-positive rates.

        Returns
        -------
        f : ndarray
            ``f(alpha)``, the same shape.
        """
        alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
        if self.kind == "gaussian":
            return gaussian_tradeoff(alpha, self.mu)
        curves = [
            approximate_tradeoff(alpha, e, d)
            for e, d in zip(self.epsilons, self.deltas, strict=True)
        ]
        return np.max(curves, axis=0)

    def margin(self, fpr, fnr):
        """How far ``(fpr, fnr)`` lies below the curve (> 0 exactly when it does).

        In the claim's own units: for a Gaussian claim ``μ(point) − μ`` (the largest μ whose
        curve the point lies below, :func:`mu_from_error_bounds`), otherwise
        ``max_i ε(point; δ_i) − ε_i`` (the largest ε at δ_i whose curve it lies below). The
        curves are symmetric, so a point below the curve in either orientation counts
        (``fnr < f(fpr)`` or ``fpr < f(fnr)``).

        Parameters
        ----------
        fpr, fnr : float or array-like
            Error rates of a test (e.g. certified upper bounds).

        Returns
        -------
        margin : ndarray
            Positive where the point lies below the curve.
        """
        if self.kind == "gaussian":
            return mu_from_error_bounds(fpr, fnr) - self.mu
        gaps = [
            epsilon_from_error_bounds(fpr, fnr, d) - e
            for e, d in zip(self.epsilons, self.deltas, strict=True)
        ]
        return np.max(gaps, axis=0)

    def contradicted_by(self, fpr_upper, fnr_upper):
        """Whether certified upper bounds on a test's error rates contradict the claim.

        The one definition of "contradicted" (the audit's ``contradicted_``, the report's
        cards, its ``summary.csv``): the point ``(fpr_upper, fnr_upper)`` lies below the
        claimed trade-off curve, :meth:`margin` ``> 0``. For a pure or (ε, δ) claim this is
        the certified ε at δ exceeding the claimed ε; a Gaussian claim has no single ε (its
        ε at δ = 0 is infinite), so the curve decides. NaN bounds (no test) contradict
        nothing.

        Parameters
        ----------
        fpr_upper, fnr_upper : float or array-like
            Certified upper bounds on the false-positive and false-negative rates.

        Returns
        -------
        contradicted : ndarray of bool
            The same shape as the bounds.

        Examples
        --------
        >>> from sklearn_mace.algorithm import PrivacyClaim
        >>> claim = PrivacyClaim.pure(1.0)
        >>> claim.contradicted_by([0.05, 0.3], [0.5, 0.3]).tolist()  # ε ≥ 2.3, ε ≥ 0.85
        [True, False]
        """
        with np.errstate(invalid="ignore"):
            return np.asarray(self.margin(fpr_upper, fnr_upper) > 0)

    def epsilon_at(self, delta):
        """The smallest ε the claim states at ``delta`` (inf where it states none).

        Parameters
        ----------
        delta : float in [0, 1)
            The δ.

        Returns
        -------
        epsilon : float
            The claimed ε at that δ.
        """
        delta = _check_number(delta, "delta", 0.0, 1.0)
        if self.kind == "gaussian":
            return gaussian_epsilon(self.mu, delta)
        stated = [e for e, d in zip(self.epsilons, self.deltas, strict=True) if d <= delta]
        return float(min(stated)) if stated else float("inf")

    @property
    def delta(self):
        """The δ at which ε is reported against this claim: the smallest stated δ (0 for
        a Gaussian claim)."""
        return 0.0 if self.kind == "gaussian" else float(min(self.deltas))

    def under(self, relation):
        """The claim on ``relation``'s neighbours: itself, or converted by group privacy.

        Parameters
        ----------
        relation : {"add_remove", "substitute"}
            The audited relation.

        Returns
        -------
        claim : PrivacyClaim
            With ``stated`` set to this claim when converted.
        """
        relation = _check_relation(relation)
        if relation == self.relation:
            return self
        if self.relation == "substitute":
            raise ValueError(
                "a claim stated for substitute-one neighbours says nothing about add/remove-one "
                "neighbours (datasets of different sizes); audit it with relation='substitute'."
            )
        if self.kind == "gaussian":
            return PrivacyClaim("gaussian", mu=2.0 * self.mu, relation=relation, stated=self)
        epsilons = tuple(2.0 * e for e in self.epsilons)
        deltas = tuple(
            min((1.0 + np.exp(e)) * d, 1.0) for e, d in zip(self.epsilons, self.deltas, strict=True)
        )
        return PrivacyClaim(self.kind, epsilons, deltas, relation=relation, stated=self)

    # ------------------------------------------------------------------ words

    def _numbers(self):
        if self.kind == "gaussian":
            return f"{self.mu:.4g}-GDP"
        if self.kind == "pure":
            return f"ε = {self.epsilons[0]:.4g}"
        if self.kind == "approximate":
            return f"(ε = {self.epsilons[0]:.4g}, δ = {self.deltas[0]:.3g})"
        pairs = ", ".join(
            f"({e:.4g}, {d:.3g})" for e, d in zip(self.epsilons, self.deltas, strict=True)
        )
        return f"(ε, δ) curve {pairs}"

    def describe(self):
        """The claim in words, saying how it was converted when it was.

        Returns
        -------
        text : str
            E.g. "ε = 1 (add/remove-one)".
        """
        if self.stated is None:
            return f"{self._numbers()} ({RELATIONS[self.relation]})"
        return (
            f"{self.stated.describe()}, audited on {RELATIONS[self.relation]} neighbours as "
            f"{self._numbers()} by group privacy"
        )

    def __str__(self):
        return self.describe()
