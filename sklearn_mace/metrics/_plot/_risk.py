"""Individual privacy risks with their confidence intervals, most exposed records first."""

import numpy as np

from ._base import _as_1d, _check_interval, _get_ax

__all__ = ["IndividualRiskDisplay"]


class IndividualRiskDisplay:
    """Individual privacy risk of each record with its interval, ranked, top records labelled.

    The individual privacy risk of record ``z`` is ``|f_p(z)|`` (MACE Def. 3, Thm 1.1), with
    the confidence interval of MACE Thm 2.2 (histogram) or Thm 3.2 (KDE). Records are drawn
    in decreasing order of risk; the ``top_k`` most exposed are circled and named, and when
    ``groups`` is given each group gets its own colour (e.g. members / non-members, or
    subgroups as in DOMIAS §5.3). A group's colour depends only on its place in
    ``group_order`` (default: the groups sorted), never on which group happens to be the most
    exposed, so figures of several releases colour each group alike. Build it with
    :meth:`from_estimator` or :meth:`from_predictions`.

    Parameters
    ----------
    risk : ndarray of shape (n_records,)
        Individual privacy risk ``|f_p(z)|`` of each record, in [0, 1].
    lower, upper : ndarray of shape (n_records,), default=None
        Confidence bounds of each risk.
    groups : array-like of shape (n_records,), default=None
        A group label per record.
    record_ids : array-like of shape (n_records,), default=None
        Names of the records for the labels; default: their positions.
    name : str, default=None
        Name of the estimator or query, for the title.
    group_order : array-like, default=None
        Every group that may appear, in legend and colour order: the ``i``-th has matplotlib's
        colour ``"C{i}"`` whether or not it has records here (pass all the classes when
        ``groups`` is a subset); default: the distinct ``groups``, sorted.

    Attributes
    ----------
    order_ : ndarray of int
        Record positions from most to least exposed.
    top_text_ : matplotlib Text or None
        The box naming the ``top_k`` most exposed records.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_mace.metrics import IndividualRiskDisplay
    >>> disp = IndividualRiskDisplay.from_predictions([0.1, 0.9, 0.4], top_k=1)
    >>> disp.order_.tolist()
    [1, 2, 0]
    """

    def __init__(
        self,
        *,
        risk,
        lower=None,
        upper=None,
        groups=None,
        record_ids=None,
        name=None,
        group_order=None,
    ):
        self.risk = risk
        self.lower = lower
        self.upper = upper
        self.groups = groups
        self.record_ids = record_ids
        self.name = name
        self.group_order = group_order

    def plot(self, ax=None, *, top_k=10, max_records=None, **kwargs):
        """Draw the ranked risks.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        top_k : int, default=10
            Number of most exposed records to circle and name.
        max_records : int, default=None
            Draw only the this many most exposed records (all when None).
        **kwargs : dict
            Passed to ``ax.scatter``; ``label`` names the dots when there are no groups
            (default ``"record"``: say what a dot is, e.g. "member called a member").

        Returns
        -------
        display : IndividualRiskDisplay
            ``self``, with ``order_``, ``top_text_``, ``ax_`` and ``figure_`` set.
        """
        ax, fig = _get_ax(ax)
        risk = _as_1d("risk", self.risk)
        n = risk.shape[0]
        lower = None if self.lower is None else _as_1d("lower", self.lower, n)
        upper = None if self.upper is None else _as_1d("upper", self.upper, n)
        ids = np.arange(n) if self.record_ids is None else np.asarray(self.record_ids)
        self.order_ = np.argsort(-risk, kind="stable")
        shown = self.order_ if max_records is None else self.order_[:max_records]
        rank = np.arange(1, shown.size + 1)
        if lower is not None and upper is not None:
            ax.errorbar(
                rank,
                risk[shown],
                yerr=[risk[shown] - lower[shown], upper[shown] - risk[shown]],
                fmt="none",
                ecolor="0.65",
                elinewidth=1,
                zorder=1,
                label="confidence interval",
            )
        label = kwargs.pop("label", "record")
        if self.groups is None:
            ax.scatter(rank, risk[shown], s=12, zorder=2, label=label, **kwargs)
        else:
            groups = np.asarray(self.groups)[shown]
            order = self._group_order()
            for group in order:
                sel = groups == group
                if not sel.any():
                    continue
                # the colour follows the group's place in the order, not the ranking
                colour = (
                    {} if "color" in kwargs or "c" in kwargs else {"color": _colour(order, group)}
                )
                ax.scatter(
                    rank[sel],
                    risk[shown][sel],
                    s=12,
                    zorder=2,
                    label=str(group),
                    **colour,
                    **kwargs,
                )
        k = min(top_k, shown.size)
        self.top_text_ = None
        if k:
            ax.scatter(
                rank[:k],
                risk[shown[:k]],
                s=60,
                facecolors="none",
                edgecolors="red",
                linewidths=1.5,
                zorder=3,
                label=f"top {k}",
            )
            # one box listing them: labels next to records of equal risk would overlap
            self.top_text_ = ax.text(
                0.02,
                0.02,
                f"top {k}: " + ", ".join(str(ids[i]) for i in shown[:k]),
                transform=ax.transAxes,
                fontsize="x-small",
                color="red",
                wrap=True,
                bbox={"facecolor": "white", "edgecolor": "red", "alpha": 0.8},
            )
        ax.set_xlabel("Records ranked by individual privacy risk")
        ax.set_ylabel("Individual privacy risk |f_p|")
        ax.set_ylim(-0.02, 1.02)
        if self.name:
            ax.set_title(self.name)
        ax.legend(loc="upper right", fontsize="small")
        self.ax_, self.figure_ = ax, fig
        return self

    def _group_order(self):
        """The groups in colour order: ``group_order`` (checked to hold every group), else the
        distinct groups sorted."""
        present = list(dict.fromkeys(np.asarray(self.groups).tolist()))
        if self.group_order is None:
            return sorted(present, key=lambda g: (str(type(g)), g))
        order = list(dict.fromkeys(np.asarray(self.group_order).tolist()))
        missing = [g for g in present if g not in order]
        if missing:
            raise ValueError(f"group_order lacks the groups {missing}; it must list every group.")
        return order

    @classmethod
    def from_predictions(
        cls,
        risk,
        *,
        lower=None,
        upper=None,
        groups=None,
        record_ids=None,
        name=None,
        group_order=None,
        ax=None,
        plot=True,
        **kwargs,
    ):
        """Build (and draw) the display from risks and, optionally, their bounds.

        Parameters
        ----------
        risk : array-like of shape (n_records,)
            Individual privacy risks, in [0, 1].
        lower, upper : array-like of shape (n_records,), default=None
            Confidence bounds of each risk; no error bars when None.
        groups : array-like of shape (n_records,), default=None
            A group label per record; each group gets its own colour.
        record_ids : array-like of shape (n_records,), default=None
            Names of the records for the labels; default: their positions.
        name : str, default=None
            Name of the estimator or query, for the title.
        group_order : array-like, default=None
            Every group, in legend and colour order (the ``i``-th is ``"C{i}"``); default:
            the distinct ``groups`` sorted.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw now; with False only the display object is built.
        **kwargs : dict
            Passed to :meth:`plot` (e.g. ``top_k``).

        Returns
        -------
        display : IndividualRiskDisplay
            The display, drawn when ``plot=True``.
        """
        risk = _as_1d("risk", risk)
        if np.any((risk < 0) | (risk > 1)):  # |f_p| (MACE Def. 3); the axis is drawn on [0, 1]
            raise ValueError(
                f"risk must be in [0, 1]; got values in [{risk.min():g}, {risk.max():g}]."
            )
        n = risk.shape[0]
        lower, upper = _check_interval(risk, lower, upper)
        for label, values in (("groups", groups), ("record_ids", record_ids)):
            if values is not None and len(values) != n:
                raise ValueError(f"{label} has {len(values)} entries; expected {n}.")
        display = cls(
            risk=risk,
            lower=lower,
            upper=upper,
            groups=groups,
            record_ids=record_ids,
            name=name,
            group_order=group_order,
        )
        if groups is not None:
            display._group_order()  # every group is in group_order
        return display.plot(ax=ax, **kwargs) if plot else display

    @classmethod
    def from_estimator(
        cls, estimator, X, *, groups=None, record_ids=None, name=None, ax=None, plot=True, **kwargs
    ):
        """Build (and draw) the display from a fitted estimator with ``individual_risk``.

        Calls ``estimator.individual_risk(X, return_interval=True)``, which returns
        ``(risk, lower, upper)`` (e.g. :class:`~sklearn_mace.BayesOptimalMIA`).

        Parameters
        ----------
        estimator : estimator
            A fitted estimator with ``individual_risk(X, return_interval=True)``.
        X : array-like of shape (n_records, n_features)
            Query features of the records.
        groups : array-like of shape (n_records,), default=None
            A group label per record; each group gets its own colour.
        record_ids : array-like of shape (n_records,), default=None
            Names of the records for the labels; default: their positions.
        name : str, default=None
            Title name; default: the estimator's class name.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        plot : bool, default=True
            Draw now; with False only the display object is built.
        **kwargs : dict
            Passed to :meth:`plot` (e.g. ``top_k``).

        Returns
        -------
        display : IndividualRiskDisplay
            The display, drawn when ``plot=True``.
        """
        if not hasattr(estimator, "individual_risk"):
            raise TypeError(
                f"{type(estimator).__name__} has no individual_risk method; pass an estimator "
                "such as BayesOptimalMIA."
            )
        risk, lower, upper = estimator.individual_risk(X, return_interval=True)
        name = type(estimator).__name__ if name is None else name
        return cls.from_predictions(
            risk,
            lower=lower,
            upper=upper,
            groups=groups,
            record_ids=record_ids,
            name=name,
            ax=ax,
            plot=plot,
            **kwargs,
        )


def _colour(order, group):
    """matplotlib's ``"C{i}"`` for the ``i``-th group of ``order``."""
    return f"C{order.index(group) % 10}"
