"""MACE Experiment 2: draw a labelled membership sample at a chosen prior.

:func:`membership_experiment` builds ``(X, m)`` from separate member and non-member pools;
:class:`PriorSampler` does the same to already-labelled query features inside an
``imblearn.pipeline.Pipeline``.
"""

from numbers import Integral, Real

import numpy as np
from imblearn.base import BaseSampler
from sklearn.utils import check_random_state

from ._validation import check_prior, validate_membership
from .utils._sklearn_compat import Interval, _num_samples, validate_params

__all__ = ["PriorSampler", "membership_experiment"]


def _sample_sizes(n_members, n_non_members, n_samples, prior):
    """``(N1, N2) = (round(N·p), N − N1)``; the largest feasible N when ``n_samples`` is None."""
    if n_samples is None:
        # Largest N with N·p <= n_members and N·(1−p) <= n_non_members.
        n_samples = int(np.floor(min(n_members / prior, n_non_members / (1 - prior)) + 1e-9))
    n1 = int(round(n_samples * prior))
    n2 = n_samples - n1
    if n1 < 1 or n2 < 1:
        raise ValueError(
            f"n_samples={n_samples} at prior={prior} leaves {n1} members and {n2} "
            "non-members; both must be at least 1."
        )
    if n1 > n_members:
        raise ValueError(
            f"members has {n_members} rows but n_samples={n_samples} at prior={prior} needs "
            f"{n1}; sampling is without replacement, so lower n_samples or the prior."
        )
    if n2 > n_non_members:
        raise ValueError(
            f"non_members has {n_non_members} rows but n_samples={n_samples} at "
            f"prior={prior} needs {n2}; lower n_samples or raise the prior."
        )
    return n1, n2


def _take(data, index):
    return data.iloc[index] if hasattr(data, "iloc") else np.asarray(data)[index]


def _stack(a, b):
    if hasattr(a, "iloc"):
        import pandas as pd

        return pd.concat([a, b], ignore_index=True)
    return np.concatenate([np.asarray(a), np.asarray(b)])


@validate_params(
    {
        "members": ["array-like"],
        "non_members": ["array-like"],
        "n_samples": [Interval(Integral, 2, None, closed="left"), None],
        "prior": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def membership_experiment(members, non_members, *, n_samples=None, prior=0.5, random_state=None):
    """Draw ``N·p`` members and ``N·(1−p)`` non-members uniformly without replacement.

    MACE Experiment 2. The result is shuffled so that it can go straight into
    cross-validation; ``m`` is 1 for members and 0 for non-members.

    Parameters
    ----------
    members : array-like or DataFrame of shape (n_members, ...)
        Records (or their query features) from the training set S.
    non_members : array-like or DataFrame of shape (n_non_members, ...)
        Records from the population outside S.
    n_samples : int >= 2, default=None
        N. None takes the largest N that both pools allow at ``prior``.
    prior : float in (0, 1), default=0.5
        p, the fraction of members.
    random_state : int, RandomState instance or None, default=None
        Seed for the draw and the shuffle.

    Returns
    -------
    X : ndarray or DataFrame of shape (N, ...)
        The drawn records, of the type of ``members``.
    m : ndarray of shape (N,)
        Membership labels.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace import membership_experiment
    >>> X, m = membership_experiment(np.ones((50, 2)), np.zeros((500, 2)), prior=0.1,
    ...                              random_state=0)
    >>> X.shape, int(m.sum())
    ((500, 2), 50)
    """
    rng = check_random_state(random_state)
    n_members, n_non_members = _num_samples(members), _num_samples(non_members)
    n1, n2 = _sample_sizes(n_members, n_non_members, n_samples, prior)
    X = _stack(
        _take(members, rng.choice(n_members, n1, replace=False)),
        _take(non_members, rng.choice(n_non_members, n2, replace=False)),
    )
    m = np.r_[np.ones(n1, dtype=int), np.zeros(n2, dtype=int)]
    order = rng.permutation(n1 + n2)
    return _take(X, order).reset_index(drop=True) if hasattr(X, "iloc") else X[order], m[order]


class PriorSampler(BaseSampler):
    """Resample labelled query features to a target membership prior (MACE Experiment 2).

    An imbalanced-learn sampler: inside ``imblearn.pipeline.Pipeline`` it reshapes only the
    training folds, so an attacker is fitted at the prior of interest while it is scored on
    untouched data. Rows are drawn uniformly without replacement.

    Parameters
    ----------
    prior : float in (0, 1), default=0.5
        Fraction of members after resampling.
    n_samples : int >= 2, default=None
        Size of the resampled set; None takes the largest the data allow.
    random_state : int, RandomState instance or None, default=None
        Seed for the draw.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace import PriorSampler
    >>> X, m = np.arange(20.).reshape(-1, 1), np.r_[np.ones(10), np.zeros(10)]
    >>> Xr, mr = PriorSampler(prior=0.2, random_state=0).fit_resample(X, m)
    >>> len(mr), int(mr.sum())
    (12, 2)
    """

    _sampling_type = "bypass"
    _parameter_constraints = {
        "prior": [Interval(Real, 0, 1, closed="neither")],
        "n_samples": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(self, *, prior=0.5, n_samples=None, random_state=None):
        super().__init__(sampling_strategy="auto")
        self.prior = prior
        self.n_samples = n_samples
        self.random_state = random_state

    def _fit_resample(self, X, y):
        rng = check_random_state(self.random_state)
        m = validate_membership(y)
        members, non_members = np.flatnonzero(m == 1), np.flatnonzero(m == 0)
        n1, n2 = _sample_sizes(
            members.size, non_members.size, self.n_samples, check_prior(self.prior)
        )
        index = np.sort(np.r_[rng.choice(members, n1, False), rng.choice(non_members, n2, False)])
        self.sample_indices_ = index
        return _take(X, index), _take(y, index)
