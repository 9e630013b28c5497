"""A planted-leak generator: synthetic data whose membership leak is known exactly.

The population ``p_R`` is a Gaussian mixture (its smallest component plays the
under-represented group of DOMIAS §5.3). The "generator" releases a mixture of fresh
population draws and noisy copies of its training members, so its density is known in
closed form:

    p_G(x) = (1 − λ) p_R(x) + λ · (1 / n_mem) Σ_i φ_σ(x − m_i),

and the Bayes-optimal DOMIAS score (Eq. 2, in log space) is ``log p_G(x) − log p_R(x)``.
Every attack can be compared with this oracle.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.utils import Bunch, check_random_state

from ..density._kde import gaussian_log_kernel_sum
from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["make_planted_leak"]


class _PlantedDensities:
    """The closed-form log densities of the population and of the leaky generator."""

    def __init__(self, means, weights, members, leak_fraction, noise):
        self.means, self.weights, self.members = means, weights, members
        self.leak_fraction, self.noise = leak_fraction, noise

    def log_population(self, X):
        """``log p_R(x)``: the Gaussian mixture with identity covariances."""
        X = np.asarray(X, dtype=float)
        d = X.shape[1]
        sq = ((X[:, None, :] - self.means[None, :, :]) ** 2).sum(axis=2)
        log_comp = np.log(self.weights) - 0.5 * sq - 0.5 * d * np.log(2 * np.pi)
        return logsumexp(log_comp, axis=1)

    def log_copies(self, X):
        """``log (1/n_mem) Σ_i φ_σ(x − m_i)``: the density of a noisy copy of a member."""
        X = np.asarray(X, dtype=float)
        n, d = self.members.shape
        s = self.noise
        kernel_sum = gaussian_log_kernel_sum(X / s, self.members / s, device="cpu")
        return kernel_sum - np.log(n) - d * np.log(s) - 0.5 * d * np.log(2 * np.pi)

    def log_generator(self, X):
        """``log p_G(x)`` of the leaky generator."""
        lam = self.leak_fraction
        log_pop = np.log1p(-lam) + self.log_population(X) if lam < 1 else -np.inf
        return np.logaddexp(log_pop, np.log(lam) + self.log_copies(X)) if lam > 0 else log_pop

    def log_ratio(self, X):
        """The oracle ``log p_G(x) − log p_R(x)`` (DOMIAS Eq. 2 with the true densities)."""
        return self.log_generator(X) - self.log_population(X)


@validate_params(
    {
        "n_members": [Interval(Integral, 1, None, closed="left")],
        "n_non_members": [Interval(Integral, 1, None, closed="left")],
        "n_synthetic": [Interval(Integral, 1, None, closed="left")],
        "n_reference": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "leak_fraction": [Interval(Real, 0, 1, closed="both")],
        "noise": [Interval(Real, 0, None, closed="neither")],
        "weights": ["array-like", None],
        "separation": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_planted_leak(
    n_members=500,
    n_non_members=500,
    n_synthetic=10_000,
    n_reference=10_000,
    n_features=8,
    *,
    leak_fraction=0.1,
    noise=0.5,
    weights=(0.6, 0.3, 0.1),
    separation=4.0,
    random_state=None,
):
    """Members, non-members, synthetic and reference data with a known membership oracle.

    The population ``p_R`` is a mixture of unit-covariance Gaussians with mixing
    ``weights`` whose means lie about ``separation`` apart. A fraction ``leak_fraction``
    of the synthetic rows are noisy copies ``m_i + noise · ε`` of uniformly chosen members,
    the rest are fresh population draws (the DOMIAS §2 setting with a generator that
    overfits locally). Reference rows and non-members are population draws too.

    Parameters
    ----------
    n_members, n_non_members, n_synthetic, n_reference : int
        Sizes of the member set ``D_mem``, the held-out non-members, ``D_syn`` and
        ``D_ref`` (DOMIAS App. A.3 defaults: 500 members, 10 000 synthetic and reference).
    n_features : int, default=8
        Number of features of every row.
    leak_fraction : float in [0, 1], default=0.1
        ``λ``: probability that a synthetic row is a noisy copy of a member.
    noise : float > 0, default=0.5
        ``σ``: standard deviation of the copy noise, per feature.
    weights : array-like of shape (n_components,), default=(0.6, 0.3, 0.1)
        Mixing weights of the population (normalised to sum to 1).
    separation : float >= 0, default=4.0
        Typical Euclidean distance between component means.
    random_state : int, RandomState instance or None, default=None
        Seed of every draw; pass an int for reproducible data.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``members``, ``non_members``, ``synthetic``, ``reference`` (2-D arrays);
        ``X_test`` (members stacked on non-members), ``membership`` (1 member / 0 not),
        ``groups`` (population component of each test row), ``oracle_score`` (the oracle
        on ``X_test``), ``synthetic_is_copy`` (which synthetic rows are noisy copies of
        members), and callables ``oracle`` (``log p_G − log p_R``),
        ``log_density_population`` and ``log_density_generator``.

    References
    ----------
    van Breugel et al., "Membership Inference Attacks against Synthetic Data through
    Overfitting Detection", AISTATS 2023, §2, Eq. 2.

    Examples
    --------
    >>> from sklearn_mace.datasets import make_planted_leak
    >>> data = make_planted_leak(n_synthetic=2000, n_reference=2000, random_state=0)
    >>> data.synthetic.shape, data.X_test.shape, data.oracle_score.shape
    ((2000, 8), (1000, 8), (1000,))
    """
    rng = check_random_state(random_state)
    weights = np.asarray(weights, dtype=float).ravel()
    if weights.size == 0 or np.any(weights <= 0) or not np.all(np.isfinite(weights)):
        raise ValueError(f"weights must be positive mixing weights; got {weights!r}.")
    weights = weights / weights.sum()
    d = n_features
    means = rng.normal(scale=separation / np.sqrt(2 * d), size=(len(weights), d))

    def population(n):
        comp = rng.choice(len(weights), size=n, p=weights)
        return means[comp] + rng.standard_normal((n, d)), comp

    members, member_groups = population(n_members)
    non_members, non_member_groups = population(n_non_members)
    reference, _ = population(n_reference)
    synthetic, _ = population(n_synthetic)
    is_copy = rng.random_sample(n_synthetic) < leak_fraction
    sources = members[rng.randint(n_members, size=int(is_copy.sum()))]
    synthetic[is_copy] = sources + noise * rng.standard_normal(sources.shape)

    densities = _PlantedDensities(means, weights, members, leak_fraction, noise)
    X_test = np.vstack([members, non_members])
    return Bunch(
        members=members,
        non_members=non_members,
        synthetic=synthetic,
        reference=reference,
        X_test=X_test,
        membership=np.r_[np.ones(n_members, dtype=int), np.zeros(n_non_members, dtype=int)],
        groups=np.r_[member_groups, non_member_groups],
        oracle_score=densities.log_ratio(X_test),
        oracle=densities.log_ratio,
        log_density_population=densities.log_population,
        log_density_generator=densities.log_generator,
        synthetic_is_copy=is_copy,
    )
