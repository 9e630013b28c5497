"""The residual risk's interval (disclosure/_rates.py): exact coverage, computed exactly.

Coverage is not simulated here but summed: for known success rates ``a`` (targets) and ``c``
(controls) and sizes ``n_a``, ``n_c``, every outcome ``(k_a, k_c)`` of the two binomials with
probability above 1e-10 is enumerated, and the probability of the outcomes whose interval
misses the true risk ``(a − c)/(1 − c)`` is added up (the neglected outcomes count as
misses). The interval must cover with probability at least its level, at every (a, c) —
both the rates' interval alone (linkability, singling out) and its intersection with the
failures' odds-ratio interval (attribute inference, ``odds_share=0.7``).
"""

import warnings

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_mace.disclosure._rates import family_confidence, residual_risk


def exact_coverage(n_a, n_c, a, c, confidence, odds_share):
    """Probability that the interval covers the true risk, summed over the outcomes."""
    truth = (a - c) / (1 - c)
    p_a = binom.pmf(np.arange(n_a + 1), n_a, a)
    p_c = binom.pmf(np.arange(n_c + 1), n_c, c)
    covered = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # every control right: risk NaN
        for k_a in np.flatnonzero(p_a > 1e-10):
            for k_c in np.flatnonzero(p_c > 1e-10):
                _, low, high = residual_risk(int(k_a), n_a, int(k_c), n_c, confidence, odds_share)
                if low - 1e-12 <= truth <= high + 1e-12:
                    covered += p_a[k_a] * p_c[k_c]
    return covered


# (a, c): no risk at the middle, at a control nearly always right, a large risk with a rare
# control success, and a risk with a frequent one
CASES = [(0.5, 0.5), (0.97, 0.9), (0.6, 0.1), (0.95, 0.7)]


@pytest.mark.parametrize("odds_share", [0.0, 0.7])
@pytest.mark.parametrize(("a", "c"), CASES)
def test_interval_covers_exactly_small_samples(a, c, odds_share):
    confidence = 0.8  # a low level: misses are frequent enough for an anti-conservative
    coverage = exact_coverage(12, 15, a, c, confidence, odds_share)  # interval to show
    assert coverage >= confidence, coverage


@pytest.mark.slow
@pytest.mark.parametrize("odds_share", [0.7])  # 0: the rates' interval, as before issue #29
@pytest.mark.parametrize(("n_a", "n_c"), [(40, 40), (30, 60)])
@pytest.mark.parametrize(
    ("a", "c"), [*CASES, (0.2, 0.2), (0.99, 0.95), (0.02, 0.01), (0.5, 0.3), (0.9, 0.9)]
)
def test_interval_covers_exactly(n_a, n_c, a, c, odds_share):
    for confidence in (0.8, 0.95):
        coverage = exact_coverage(n_a, n_c, a, c, confidence, odds_share)
        assert coverage >= confidence, (confidence, coverage)


@pytest.mark.parametrize(
    ("k_a", "k_c", "at_most"),
    # 1000 targets and controls, the corrected level of 20 rows (0.9975): the odds-ratio
    # interval's share narrows the risk's interval where the control is often right
    [(960, 900, 0.75), (990, 985, 0.6), (950, 930, 0.75), (550, 500, 0.8)],
)
def test_odds_ratio_share_narrows_frequent_controls(k_a, k_c, at_most):
    level = family_confidence(0.95, 20)
    _, low, high = residual_risk(k_a, 1000, k_c, 1000, level, odds_share=0.7)
    _, rates_low, rates_high = residual_risk(k_a, 1000, k_c, 1000, level)
    assert high - low <= at_most * (rates_high - rates_low)


def test_family_confidence_is_the_cards_bonferroni():
    assert family_confidence(0.95, 20) == pytest.approx(0.9975)
    assert family_confidence(0.9, 1) == pytest.approx(0.9)
    assert family_confidence(0.9, 0) == pytest.approx(0.9)  # an empty family: no correction
