"""Pooled normal scores: each query feature mapped by its empirical rank to N(0, 1) quantiles.

The optimal advantage does not change under a bijection of the query, but a KDE on a skewed
or heavy-tailed query does (``KDEAdvantageEstimator``, ``feature_map="normal_scores"``). This
is scikit-learn's ``QuantileTransformer(output_distribution="normal", n_quantiles=n,
subsample=None)`` with every row as a quantile — the same map on untied rows, the extremes
at ``±Φ⁻¹(1 − 10⁻⁷)`` — written as one sort per feature: the transformer's percentile
bookkeeping cost 4 ms at 2 000 rows and 55 ms at 10 000, more than MACE's whole 1-D
``U_N``. One difference: every tie gets its mid-rank, the tied minimum and maximum too
(``QuantileTransformer`` sends all rows at the minimum to −5.2, which on a query that is
95 % zeros put 95 % of the rows 5 standard scores from the rest).
"""

import numpy as np
from scipy.special import ndtri
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = ["NormalScores"]

# As QuantileTransformer: quantiles are kept 1e-7 away from 0 and 1 (±5.2 standard scores).
BOUNDS = 1e-7


class NormalScores(TransformerMixin, BaseEstimator):
    """Map each feature by its pooled empirical CDF (mid-rank for ties) to normal scores.

    A new value is placed by linear interpolation between the fitted values, averaging the
    interpolation from below and from above so that a tied value gets its mid-rank, as
    ``QuantileTransformer`` does; values outside the fitted range go to the extremes.

    Attributes
    ----------
    sorted_ : ndarray of shape (n_samples, n_features)
        The fitted values, sorted per feature.
    """

    def fit(self, X, y=None):
        self.sorted_ = np.sort(np.asarray(X, dtype=float), axis=0)
        return self

    def fit_transform(self, X, y=None):
        """Fit, and map the fitted rows by their mid-ranks (one sort per feature)."""
        X = np.asarray(X, dtype=float)
        n = len(X)
        self.sorted_ = np.empty_like(X)
        quantiles = np.full_like(X, 0.5)
        for j in range(X.shape[1]):
            order = np.argsort(X[:, j], kind="stable")
            values = self.sorted_[:, j] = X[order, j]
            new = np.r_[True, values[1:] != values[:-1]]
            starts = np.flatnonzero(new)
            ends = np.r_[starts[1:], n] - 1
            if n > 1:
                quantiles[order, j] = ((starts + ends) / (2.0 * (n - 1)))[np.cumsum(new) - 1]
        return ndtri(np.clip(quantiles, BOUNDS, 1.0 - BOUNDS))

    def transform(self, X):
        check_is_fitted(self)
        X = np.asarray(X, dtype=float)
        n = len(self.sorted_)
        ranks = np.linspace(0.0, 1.0, n) if n > 1 else np.full(1, 0.5)
        out = np.empty_like(X)
        for j in range(X.shape[1]):
            ref = self.sorted_[:, j]
            below = np.interp(X[:, j], ref, ranks)
            above = -np.interp(-X[:, j], -ref[::-1], -ranks[::-1])
            out[:, j] = 0.5 * (below + above)
        return ndtri(np.clip(out, BOUNDS, 1.0 - BOUNDS))
