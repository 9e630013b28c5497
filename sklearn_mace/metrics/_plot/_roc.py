"""ROC curve of a membership attack on a log-scale FPR axis."""

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

from ..._validation import encode_membership
from ...utils._sklearn_compat import _get_response_values_binary
from .._membership import _check_scores, tpr_at_fpr
from .._orientation import membership_scores
from .._scorers import _finite_ranks
from ._base import _get_ax

__all__ = ["MembershipRocDisplay"]

_CHANCE = "random guess"


class MembershipRocDisplay:
    """ROC curve of a membership-inference attack, FPR on a log scale, low-FPR point marked.

    Membership attacks matter when they identify *some* members with confidence, so the
    curve is drawn on a logarithmic false-positive-rate axis (Carlini et al., 2022) and the
    operating point at ``target_fpr`` (TPR at, e.g., 1 % FPR; see
    :func:`~sklearn_mace.metrics.tpr_at_fpr`) is marked. Build it with
    :meth:`from_estimator` or :meth:`from_predictions`; ``__init__`` only stores data.

    Parameters
    ----------
    fpr, tpr : ndarray
        The ROC curve, as returned by :func:`sklearn.metrics.roc_curve`.
    roc_auc : float, default=None
        Area under the curve, shown in the legend.
    target_fpr : float, default=0.01
        False-positive rate of the marked operating point.
    tpr_at_target : float, default=None
        TPR at ``target_fpr``; the point is marked only when given.
    name : str, default=None
        Name of the attack, for the legend.

    Attributes
    ----------
    line_ : matplotlib Line2D
    point_ : matplotlib Line2D or None
        The marked low-FPR operating point.
    chance_ : matplotlib Line2D or None
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    sklearn.metrics.RocCurveDisplay : the same on linear axes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_mace.metrics import MembershipRocDisplay
    >>> disp = MembershipRocDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> disp.tpr_at_target
    0.5
    """

    def __init__(self, *, fpr, tpr, roc_auc=None, target_fpr=0.01, tpr_at_target=None, name=None):
        self.fpr = fpr
        self.tpr = tpr
        self.roc_auc = roc_auc
        self.target_fpr = target_fpr
        self.tpr_at_target = tpr_at_target
        self.name = name

    def plot(self, ax=None, *, name=None, min_fpr=None, show_chance=True, **kwargs):
        """Draw the curve.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None. Several attacks can share one axes.
        name : str, default=None
            Overrides the stored name in the legend.
        min_fpr : float, default=None
            Left end of the log axis. Default: half the smallest non-zero FPR (FPR = 0 has no
            place on a log axis, so those points are drawn at ``min_fpr``).
        show_chance : bool, default=True
            Draw the random-guess line TPR = FPR.
        **kwargs : dict
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        display : MembershipRocDisplay
            ``self``, with ``line_``, ``point_``, ``chance_``, ``ax_`` and ``figure_`` set.
        """
        ax, fig = _get_ax(ax)
        fpr, tpr = np.asarray(self.fpr, dtype=float), np.asarray(self.tpr, dtype=float)
        if min_fpr is None:
            positive = fpr[fpr > 0]
            min_fpr = 0.5 * positive.min() if positive.size else 1e-3
            min_fpr = min(min_fpr, 0.5 * self.target_fpr) if self.target_fpr > 0 else min_fpr
        name = self.name if name is None else name
        details = []
        if self.roc_auc is not None:
            details.append(f"AUC = {self.roc_auc:.3f}")
        if self.tpr_at_target is not None:
            details.append(f"TPR at {self.target_fpr:.3g} FPR = {self.tpr_at_target:.3f}")
        label = name or "attack"
        if details:
            label = f"{label} ({', '.join(details)})"
        (self.line_,) = ax.plot(
            np.maximum(fpr, min_fpr), tpr, label=label, drawstyle="steps-post", **kwargs
        )
        self.point_ = None
        if self.tpr_at_target is not None and self.target_fpr > 0:
            (self.point_,) = ax.plot(
                [self.target_fpr],
                [self.tpr_at_target],
                marker="o",
                linestyle="none",
                color=self.line_.get_color(),
                markeredgecolor="black",
                zorder=3,
                label="_operating point",
            )
            ax.axvline(self.target_fpr, color="grey", linestyle=":", linewidth=1)
        self.chance_ = None
        chance_drawn = any(line.get_label() == _CHANCE for line in ax.get_lines())
        if show_chance and not chance_drawn:
            grid = np.logspace(np.log10(min_fpr), 0, 100)
            (self.chance_,) = ax.plot(
                grid, grid, color="black", linestyle="--", linewidth=1, label=_CHANCE
            )
        ax.set_xscale("log")
        left = min(np.min(line.get_xdata()) for line in ax.get_lines())
        ax.set_xlim(left, 1.0)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("False-positive rate (non-members flagged), log scale")
        ax.set_ylabel("True-positive rate (members found)")
        ax.legend(loc="lower right", fontsize="x-small")
        self.ax_, self.figure_ = ax, fig
        return self

    @classmethod
    def from_predictions(
        cls, y_true, y_score, *, target_fpr=0.01, name=None, ax=None, plot=True, **kwargs
    ):
        """Build (and draw) the display from membership labels and attack scores.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Membership labels: 1 member, 0 or -1 non-member, or booleans.
        y_score : array-like of shape (n_samples,)
            Attack scores, larger = more likely a member.
        target_fpr : float in [0, 1], default=0.01
            FPR of the marked operating point.
        name : str, default=None
            Name of the attack, for the legend.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw immediately (False only computes, e.g. without matplotlib).
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : MembershipRocDisplay
            The display, drawn when ``plot=True``.
        """
        m, score = _check_scores(y_true, y_score)
        if m.min() == m.max():
            raise ValueError("y_true contains only one class; a ROC curve needs both.")
        fpr, tpr, _ = roc_curve(m, score, drop_intermediate=False)
        display = cls(
            fpr=fpr,
            tpr=tpr,
            roc_auc=float(roc_auc_score(m, score)),
            target_fpr=target_fpr,
            tpr_at_target=tpr_at_fpr(m, score, fpr=target_fpr),
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
        response_method="auto",
        target_fpr=0.01,
        name=None,
        ax=None,
        plot=True,
        **kwargs,
    ):
        """Build (and draw) the display from a fitted attacker and query features.

        Parameters
        ----------
        estimator : fitted attacker, binary classifier, or query
            Its ``decision_function`` / ``predict_proba`` score the member, its
            ``classes_[1]`` (the attacker contract). A fitted query (a transformer such as
            ``NearestSyntheticDistance``) scores by its column turned the way it declares
            (:func:`~sklearn_mace.metrics.membership_scores`: a distance is negated).
        X : array-like of shape (n_samples, n_features)
            Query features (records, for a query).
        y : array-like of shape (n_samples,)
            Membership labels in the estimator's coding (``classes_[1]`` is the member; for
            a query, 1 / 0 or -1 / booleans).
        response_method : {"auto", "predict_proba", "decision_function"}, default="auto"
            ``"auto"`` prefers ``decision_function``: attackers' log odds keep their order in
            the far tail, where ``predict_proba`` rounds to exactly 1 (log odds above ~37) and
            the resulting ties move the TPR at low FPR.
        target_fpr : float in [0, 1], default=0.01
            FPR of the marked operating point.
        name : str, default=None
            Legend name; default: the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw immediately (False only computes, e.g. without matplotlib).
        **kwargs : dict
            Passed to :meth:`plot`.

        Returns
        -------
        display : MembershipRocDisplay
            The display, drawn when ``plot=True``.
        """
        name = type(estimator).__name__ if name is None else name
        if not hasattr(estimator, "classes_") and hasattr(estimator, "transform"):
            # a query: its column, turned the way it declares (a distance is negated)
            score = membership_scores(estimator, X)
            return cls.from_predictions(
                y, score, target_fpr=target_fpr, name=name, ax=ax, plot=plot, **kwargs
            )
        if response_method == "auto":
            response_method = ["decision_function", "predict_proba"]
        classes = np.asarray(estimator.classes_)
        m = encode_membership(y, classes)
        score, _ = _get_response_values_binary(estimator, X, response_method, pos_label=classes[1])
        return cls.from_predictions(
            m, _finite_ranks(score), target_fpr=target_fpr, name=name, ax=ax, plot=plot, **kwargs
        )
