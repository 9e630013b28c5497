"""MACE Experiment 2 (membership_experiment) and the imbalanced-learn PriorSampler."""

import numpy as np
import pandas as pd
import pytest
from imblearn.pipeline import Pipeline
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace import PriorSampler, membership_experiment


@pytest.mark.parametrize("prior, n_samples", [(0.5, 100), (0.1, 500), (0.25, 40), (0.9, 50)])
def test_experiment_draws_exact_proportions_without_replacement(prior, n_samples):
    members = np.arange(1000, dtype=float).reshape(-1, 1)  # distinct ids: 0..999
    non_members = -np.arange(1, 1001, dtype=float).reshape(-1, 1)  # -1..-1000
    X, m = membership_experiment(
        members, non_members, n_samples=n_samples, prior=prior, random_state=0
    )
    assert X.shape == (n_samples, 1)
    assert m.sum() == round(n_samples * prior)
    assert np.all((X[:, 0] >= 0) == (m == 1))  # labels travel with their rows
    assert len(np.unique(X)) == n_samples  # no row drawn twice


def test_experiment_defaults_to_the_largest_feasible_sample():
    X, m = membership_experiment(np.ones((50, 2)), np.zeros((500, 2)), prior=0.1, random_state=0)
    assert len(m) == 500 and m.sum() == 50
    X, m = membership_experiment(np.ones((50, 2)), np.zeros((30, 2)), prior=0.5, random_state=0)
    assert len(m) == 60 and m.sum() == 30


def test_experiment_is_reproducible_shuffled_and_keeps_dataframes():
    members = pd.DataFrame({"a": np.arange(20.0), "b": 1.0})
    non_members = pd.DataFrame({"a": -np.arange(1.0, 21.0), "b": 0.0})
    X1, m1 = membership_experiment(members, non_members, n_samples=20, random_state=3)
    X2, m2 = membership_experiment(members, non_members, n_samples=20, random_state=3)
    assert isinstance(X1, pd.DataFrame) and list(X1.columns) == ["a", "b"]
    pd.testing.assert_frame_equal(X1, X2)
    np.testing.assert_array_equal(m1, m2)
    assert not np.all(m1[:10] == 1)  # shuffled, not members-first
    np.testing.assert_array_equal(X1["b"].to_numpy(), m1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 200, "prior": 0.5}, "members has 50 rows"),
        ({"n_samples": 200, "prior": 0.1}, "non_members has 100 rows"),
        ({"n_samples": 2, "prior": 0.1}, "leaves 0 members"),
        ({"prior": 1.0}, "prior"),
        ({"prior": 0.0}, "prior"),
    ],
)
def test_experiment_errors_name_the_problem(kwargs, match):
    with pytest.raises(ValueError, match=match):
        membership_experiment(np.ones((50, 1)), np.zeros((100, 1)), **kwargs)


@pytest.mark.parametrize("prior", [0.1, 0.2, 0.5, 0.8])
def test_prior_sampler_hits_the_target_prior(rng, prior):
    X = rng.normal(size=(300, 3))
    m = np.r_[np.ones(100), -np.ones(200)]  # the papers' −1 convention
    Xr, mr = PriorSampler(prior=prior, random_state=0).fit_resample(X, m)
    n1 = int((mr == 1).sum())
    assert n1 / len(mr) == pytest.approx(prior, abs=1 / len(mr))
    # Every resampled row is an original row with its original label.
    rows = {tuple(row): label for row, label in zip(X, m, strict=True)}
    assert all(rows[tuple(row)] == label for row, label in zip(Xr, mr, strict=True))
    assert len({tuple(row) for row in Xr}) == len(Xr)


def test_prior_sampler_in_an_imblearn_pipeline_only_touches_fit(rng):
    X = rng.normal(size=(400, 2))
    m = (rng.random(400) < 0.5).astype(int)
    pipe = Pipeline(
        [("prior", PriorSampler(prior=0.1, random_state=0)), ("clf", LogisticRegression())]
    )
    pipe.fit(X, m)
    assert pipe.predict(X).shape == (400,)  # prediction sees every row, unresampled
    assert pipe.named_steps["prior"].sample_indices_.size < 400


def test_prior_sampler_errors():
    with pytest.raises(ValueError, match="n_samples=1000"):
        PriorSampler(n_samples=1000).fit_resample(
            np.zeros((20, 1)), np.r_[np.ones(10), np.zeros(10)]
        )
    with pytest.raises(ValueError, match="Only binary classification"):
        PriorSampler().fit_resample(np.zeros((30, 1)), np.repeat([0, 1, 2], 10))


# imbalanced-learn's own sampler checks feed 3-class targets to every sampler; a membership
# sampler rejects them by design, so scikit-learn's generic checks are the ones that apply.
@parametrize_with_checks([PriorSampler(random_state=0)])
def test_prior_sampler_passes_estimator_checks(estimator, check):
    check(estimator)
