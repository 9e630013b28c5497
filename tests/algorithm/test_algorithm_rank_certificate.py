"""``AlgorithmAudit(certificate="rank_test")`` (issue #30): the threshold's point at α/2 and the
two-tail rank test at α/2, the larger ε; the rank test itself is tested against ground truth
in ``tests/metrics/test_rank_test.py``."""

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_mace.algorithm import (
    AlgorithmAudit,
    DPHistogramSynthesizer,
    WrongNoiseHistogramSynthesizer,
)
from sklearn_mace.metrics._fdp import epsilon_from_error_bounds


def _audit(recipe, certificate, seed=0, n_runs=200, **kwargs):
    population = np.random.default_rng(0).integers(0, 3, size=(600, 2))
    return AlgorithmAudit(
        recipe,
        targets=[[1, 1]],
        n_runs=n_runs,
        train_size=100,
        datasets="fixed",
        certificate=certificate,
        attack_fraction=0.2,
        random_state=seed,
        **kwargs,
    ).fit(population)


def test_rank_certificate_reports_the_larger_bound_jointly():
    recipe = WrongNoiseHistogramSynthesizer(epsilon=1.0, categories=3)  # truly 2-DP
    audit = _audit(recipe, "rank_test", claimed_epsilon=1.0)
    point = audit.audits_[0]
    own = float(epsilon_from_error_bounds(point.fpr_upper, point.fnr_upper, 0.0))
    rank = audit.rank_epsilon_lower_bounds_[0]
    assert audit.epsilon_lower_bounds_[0] == pytest.approx(max(own, rank))
    assert point.epsilon_lower_bound == audit.epsilon_lower_bounds_[0]
    assert point.confidence == pytest.approx(0.95)  # α/2 + α/2, not each on its own
    assert 0 < audit.epsilon_lower_bounds_[0] <= 2.0
    assert audit.contradicted_[0] == (audit.epsilon_lower_bounds_[0] > 1.0)
    k_high, k_low = audit.rank_pairs_[0]
    assert k_high is not None or k_low is not None
    summary = audit.summary()
    assert summary["epsilon_lower_bound"].iloc[0] == audit.epsilon_lower_bounds_[0]


def test_threshold_certificate_is_unchanged_by_the_option():
    recipe = WrongNoiseHistogramSynthesizer(epsilon=1.0, categories=3)
    default = _audit(recipe, "threshold", claimed_epsilon=1.0)
    assert default.rank_epsilon_lower_bounds_ is None and default.rank_pairs_ is None
    # the same attack split and attack: the rank option adds a test, it changes no seed
    ranked = _audit(recipe, "rank_test", claimed_epsilon=1.0)
    np.testing.assert_array_equal(default.run_scores_, ranked.run_scores_)
    np.testing.assert_array_equal(default.certify_mask_, ranked.certify_mask_)


def test_certificate_errors_name_the_parameter():
    with pytest.raises(ValueError, match="'certificate' parameter"):
        _audit(DPHistogramSynthesizer(epsilon=1.0, categories=3), "pooled")


@pytest.mark.slow
def test_rank_certificate_is_sound_end_to_end():
    """The 1-DP histogram, 20 audits of 200 runs per side: above 1 in at most the binomial's
    99.9 % quantile at α (every audit is a different seed: runs, split, simulations)."""
    recipe = DPHistogramSynthesizer(epsilon=1.0, categories=3)
    bounds = [_audit(recipe, "rank_test", seed=s).epsilon_lower_bounds_[0] for s in range(20)]
    assert np.sum(np.array(bounds) > 1.0) <= binom.isf(0.001, 20, 0.05)


def test_one_run_design_refuses_the_rank_certificate():
    # the one-run design certifies from its guesses: an ignored option would mislead
    population = np.random.default_rng(0).integers(0, 3, size=(600, 2))
    audit = AlgorithmAudit(
        DPHistogramSynthesizer(epsilon=1.0, categories=3),
        design="one_run",
        n_canaries=100,
        certificate="rank_test",
    )
    with pytest.raises(ValueError, match="certificate='rank_test' applies to the multi-run"):
        audit.fit(population)
