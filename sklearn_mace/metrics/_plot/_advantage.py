"""Membership advantage with its interval across a parameter, against the ε-DP bound."""

import numpy as np
from sklearn.base import clone

from .._dp import advantage_bound
from ._base import _check_interval, _get_ax

__all__ = ["AdvantageDisplay"]

#: what ``from_estimator`` draws: the fitted attribute and its words in the legend
_QUANTITIES = {
    "estimate": ("advantage_estimate_", "estimate"),
    "certified": ("advantage_lower_bound_", "certified lower bound"),
}


class AdvantageDisplay:
    """Advantage (with its interval) across a parameter, with the ε-DP bound as a line.

    Shows how the measured membership advantage moves with a parameter — the KDE bandwidth,
    the number of released synthetic rows, training epochs — next to the largest advantage
    an ε-DP mechanism allows, ``advantage_bound(ε, prior)`` (the hypothesis-testing bound; at
    prior ½ MACE Thm 1.4's ``tanh(ε/2)``). A measured lower
    interval end above that line refutes the ε-DP claim. Build it with :meth:`from_estimator`
    (refits an advantage estimator per parameter value) or :meth:`from_predictions`.

    Parameters
    ----------
    param_values : ndarray of shape (n_values,)
        The parameter values, one per point of the curve.
    advantage : ndarray of shape (n_values,)
        Membership advantage measured at each parameter value.
    lower, upper : ndarray of shape (n_values,), default=None
        Confidence interval of each advantage (e.g. MACE's McDiarmid interval).
    param_name : str, default="parameter"
        Axis label.
    epsilon : float, default=None
        Draw the bound of this ε; no line when None.
    prior : float in (0, 1), default=0.5
        Membership prior for the DP bound and the trivial advantage ``|2p − 1|``.
    name : str, default=None
        Legend label of the curve: say which advantage it is — an estimate (MACE's ``U_N``,
        with its interval) or a certified lower bound; :meth:`from_estimator` says it for
        you. Default ``"advantage"``.

    Attributes
    ----------
    line_ : matplotlib Line2D
    bound_line_ : matplotlib Line2D or None
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_mace.metrics import AdvantageDisplay
    >>> disp = AdvantageDisplay.from_predictions([100, 1000], [0.05, 0.2], epsilon=1.0)
    >>> round(disp.bound_, 4)
    0.4621
    """

    def __init__(
        self,
        *,
        param_values,
        advantage,
        lower=None,
        upper=None,
        param_name="parameter",
        epsilon=None,
        prior=0.5,
        name=None,
    ):
        self.param_values = param_values
        self.advantage = advantage
        self.lower = lower
        self.upper = upper
        self.param_name = param_name
        self.epsilon = epsilon
        self.prior = prior
        self.name = name

    @property
    def bound_(self):
        """The ε-DP advantage bound for ``epsilon`` at ``prior`` (None without ε)."""
        return None if self.epsilon is None else advantage_bound(self.epsilon, self.prior)

    def plot(self, ax=None, *, name=None, log_x=False, show_baseline=True, **kwargs):
        """Draw the curve, its interval band and the DP bound.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        name : str, default=None
            Overrides the stored legend label.
        log_x : bool, default=False
            Logarithmic parameter axis (bandwidths, sizes).
        show_baseline : bool, default=True
            Draw the trivial advantage ``|2p − 1|`` when the prior is not 0.5.
        **kwargs : dict
            Passed to ``ax.plot``.

        Returns
        -------
        display : AdvantageDisplay
            ``self``, with ``line_``, ``bound_line_``, ``ax_`` and ``figure_`` set.
        """
        ax, fig = _get_ax(ax)
        x = np.asarray(self.param_values, dtype=float)
        adv = np.asarray(self.advantage, dtype=float)
        order = np.argsort(x)
        label = self.name if name is None else name
        (self.line_,) = ax.plot(
            x[order], adv[order], marker="o", label=label or "advantage", **kwargs
        )
        if self.lower is not None and self.upper is not None:
            lo = np.asarray(self.lower, dtype=float)[order]
            hi = np.asarray(self.upper, dtype=float)[order]
            ax.fill_between(
                x[order],
                lo,
                hi,
                alpha=0.2,
                color=self.line_.get_color(),
                label=f"{label or 'advantage'}: interval",
            )
        self.bound_line_ = None
        if self.epsilon is not None:
            self.bound_line_ = ax.axhline(
                self.bound_,
                color="crimson",
                linestyle="--",
                linewidth=1.2,
                label=f"ε = {self.epsilon:g} DP bound ({self.bound_:.3f})",
            )
        if show_baseline and self.prior != 0.5:
            trivial = abs(2 * self.prior - 1)
            ax.axhline(
                trivial,
                color="grey",
                linestyle=":",
                linewidth=1,
                label=f"trivial |2p − 1| = {trivial:.3f}",
            )
        if log_x:
            ax.set_xscale("log")
        ax.set_xlabel(self.param_name)
        ax.set_ylabel("Membership advantage")
        ax.legend(loc="best", fontsize="small")
        self.ax_, self.figure_ = ax, fig
        return self

    @classmethod
    def from_predictions(
        cls,
        param_values,
        advantage,
        *,
        lower=None,
        upper=None,
        param_name="parameter",
        epsilon=None,
        prior=0.5,
        name=None,
        ax=None,
        plot=True,
        **kwargs,
    ):
        """Build (and draw) the display from advantages measured at each parameter value.

        Parameters
        ----------
        param_values : array-like of shape (n_values,)
            The parameter values, one per point of the curve.
        advantage : array-like of shape (n_values,), values in [-1, 1]
            Membership advantage measured at each parameter value.
        lower, upper : array-like of shape (n_values,), default=None
            Confidence interval of each advantage; no band when None.
        param_name : str, default="parameter"
            Axis label.
        epsilon : float, default=None
            Draw the ε-DP advantage bound of this ε; no line when None.
        prior : float in (0, 1), default=0.5
            Membership prior for the DP bound and the trivial advantage ``|2p − 1|``.
        name : str, default=None
            Legend label of the curve.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw now; with False only the display object is built.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : AdvantageDisplay
            The display, drawn when ``plot=True``.
        """
        x = np.asarray(param_values, dtype=float).ravel()
        adv = np.asarray(advantage, dtype=float).ravel()
        if x.shape != adv.shape or x.size == 0:
            raise ValueError(
                f"param_values and advantage need the same non-zero length; got {x.size} "
                f"and {adv.size}."
            )
        if not (np.isfinite(x).all() and np.isfinite(adv).all()) or np.any(np.abs(adv) > 1):
            raise ValueError("advantage must be finite and in [-1, 1]; param_values finite.")
        lower, upper = _check_interval(adv, lower, upper)
        # validates epsilon and prior (the trivial |2p − 1| line needs a valid prior too)
        advantage_bound(0.0 if epsilon is None else epsilon, prior)
        display = cls(
            param_values=x,
            advantage=adv,
            lower=lower,
            upper=upper,
            param_name=param_name,
            epsilon=epsilon,
            prior=prior,
            name=name,
        )
        return display.plot(ax=ax, **kwargs) if plot else display

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        param_name,
        param_range,
        quantity="estimate",
        epsilon=None,
        prior=None,
        name=None,
        ax=None,
        plot=True,
        **kwargs,
    ):
        """Refit an advantage estimator at each parameter value and draw the result.

        For every value ``v`` of ``param_range``, a clone of ``estimator`` with
        ``param_name=v`` is fitted on ``(X, y)``; with ``quantity="estimate"`` its
        ``advantage_estimate_`` (MACE's ``U_N`` or ``W_N`` for
        :class:`~sklearn_mace.KDEAdvantageEstimator`) and, when present,
        ``advantage_estimate_interval_`` are read; with ``quantity="certified"`` its
        ``advantage_lower_bound_``, a one-sided bound drawn without a band. The legend names
        the quantity and the attribute. The estimator passed in is never modified.

        Parameters
        ----------
        estimator : estimator
            An unfitted estimator that has ``advantage_estimate_`` (and optionally
            ``advantage_estimate_interval_``) after ``fit``.
        X : array-like of shape (n_samples, n_features)
            Query features.
        y : array-like of shape (n_samples,)
            Membership labels.
        param_name : str
            A parameter of ``estimator``.
        param_range : array-like of numbers
            The values of ``param_name`` to fit at.
        quantity : {"estimate", "certified"}, default="estimate"
            Draw the estimate (``advantage_estimate_`` with its interval) or the certified
            lower bound (``advantage_lower_bound_``).
        epsilon : float, default=None
            Draw the ε-DP advantage bound of this ε; no line when None.
        prior : float, default=None
            Prior of the DP bound; default: the fitted ``prior_`` of the estimator, else 0.5.
        name : str, default=None
            The curve's name in the legend, followed by the quantity drawn (``"…: estimate
            (advantage_estimate_)"``); default: the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw now; with False only the display object is built.
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : AdvantageDisplay
            The display, drawn when ``plot=True``.
        """
        if quantity not in _QUANTITIES:
            raise ValueError(f"quantity must be one of {sorted(_QUANTITIES)}; got {quantity!r}.")
        attribute, words = _QUANTITIES[quantity]
        if param_name not in estimator.get_params():
            raise ValueError(
                f"param_name={param_name!r} is not a parameter of {type(estimator).__name__}."
            )
        advantage, lower, upper = [], [], []
        fitted = None
        for value in param_range:
            fitted = clone(estimator).set_params(**{param_name: value}).fit(X, y)
            if not hasattr(fitted, attribute):
                raise AttributeError(
                    f"{type(estimator).__name__} has no {attribute} after fit; "
                    f"quantity={quantity!r} needs it."
                )
            advantage.append(getattr(fitted, attribute))
            lo, hi = np.nan, np.nan  # a certified lower bound is one-sided: no band
            if quantity == "estimate":
                lo, hi = getattr(fitted, "advantage_estimate_interval_", (lo, hi))
            lower.append(lo)
            upper.append(hi)
        if fitted is None:
            raise ValueError("param_range is empty.")
        has_interval = not np.isnan(lower).any()
        if prior is None:
            prior = getattr(fitted, "prior_", 0.5)
        name = type(estimator).__name__ if name is None else name
        name = f"{name}: {words} ({attribute})"
        return cls.from_predictions(
            param_range,
            advantage,
            lower=lower if has_interval else None,
            upper=upper if has_interval else None,
            param_name=param_name,
            epsilon=epsilon,
            prior=prior,
            name=name,
            ax=ax,
            plot=plot,
            **kwargs,
        )
