"""White-box gradient canaries for DP-SGD (issue #30 item 3) and the DP-SGD MLP (item 5).

Ground truth: full-batch DP-SGD releases ``g_t = Σ_i clip_C(∇ℓ_i) + N(0, σ²C²·I)`` at every
step; a Dirac canary's own direction holds nothing but its clipped gradient (``C·v/√(v²+1)``
while it stays clipped) and the noise, so its white-box score is ``N(0, 1)`` when left out
and ``N(√T/σ · v/√(v²+1), 1)`` when put in (Nasr et al. 2023; Steinke, Nasr & Jagielski
2023, §7). The one-run audit reading it must never contradict the accountant's (true)
claim beyond α and must contradict the noise bug's.
"""

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.algorithm import (
    AlgorithmAudit,
    DPSGDGradientScores,
    DPSGDLogisticRegression,
    DPSGDMLPClassifier,
    NoiseBugDPSGDLogisticRegression,
    make_dirac_canaries,
)
from sklearn_mace.utils._testing import expected_failed_checks
from tests._query_models import check_name, width_for

pytest.importorskip("opacus")

ALPHA = 0.05


def most_allowed(n_audits, alpha=ALPHA):
    """Contradictions of a true claim allowed: the binomial's 99.9 % quantile."""
    return int(stats.binom.isf(0.001, n_audits, alpha))


def population(n_canaries=1000):
    """Breast cancer (standardized, label last) with Dirac canaries: ``(population, canaries)``."""
    X, y = load_breast_cancer(return_X_y=True)
    return make_dirac_canaries(np.column_stack([StandardScaler().fit_transform(X), y]), n_canaries)


def model_of_width(width):
    """A recorded DP-SGD model whose records (features and label) are ``width`` wide."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, max(width - 1, 1)))
    model = DPSGDLogisticRegression(epochs=2, record_gradients=True, random_state=0)
    return model.fit(X, np.arange(20) % 2)


# ---------------------------------------------------------------- estimator checks


@parametrize_with_checks(
    [DPSGDGradientScores(model_of_width(3)), DPSGDMLPClassifier(random_state=0)],
    expected_failed_checks=expected_failed_checks,
)
def test_whitebox_estimators_pass_estimator_checks(estimator, check):
    if isinstance(estimator, DPSGDGradientScores):
        # the model fixes the record width: give it the width of the check's data
        width = 1 if check_name(check) == "check_fit2d_1feature" else width_for(check)
        estimator.set_params(model=model_of_width(width))
    with warnings.catch_warnings():
        # random check data put floats where the label goes: not the model's classes
        warnings.filterwarnings("ignore", ".*labels are not among", UserWarning)
        check(estimator)


# ---------------------------------------------------------------- the recorded gradients


def test_the_recorded_gradients_are_the_steps_taken():
    """Weights start at zero, so the trained weights are ``−rate · Σ_t g_t``; recording
    changes nothing in the training."""
    pop = population(10)[0]
    X, y = pop[:, :-1], pop[:, -1]
    plain = DPSGDLogisticRegression(random_state=2).fit(X, y)
    model = DPSGDLogisticRegression(record_gradients=True, random_state=2).fit(X, y)
    np.testing.assert_array_equal(model.coef_, plain.coef_)
    assert model.noisy_gradients_.shape == (model.epochs, 2, X.shape[1] + 1)
    assert not hasattr(plain, "noisy_gradients_")
    rows = -model.learning_rate * model.noisy_gradients_.sum(axis=0)
    np.testing.assert_allclose(rows[1, :-1] - rows[0, :-1], model.coef_[0], atol=1e-5)
    np.testing.assert_allclose(rows[1, -1] - rows[0, -1], model.intercept_[0], atol=1e-5)


def test_the_score_is_the_canarys_own_coordinate():
    """Binary, label 0: the score is ``Σ_t (g_t[1, j] − g_t[0, j]) / (√2·σ·C·√T)`` on the
    canary's column ``j`` (computed here from its definition)."""
    pop, canaries = population(20)
    data = np.vstack([pop, canaries[::2]])
    model = DPSGDLogisticRegression(record_gradients=True, random_state=0)
    model.fit(data[:, :-1], data[:, -1])
    scores = DPSGDGradientScores(model).fit_transform(canaries)[:, 0]
    g = model.noisy_gradients_
    j = 30 + np.arange(20)  # the canaries' own columns, after the 30 features
    expected = (g[:, 1, j] - g[:, 0, j]).sum(axis=0) / np.sqrt(2 * model.epochs)
    expected /= model.noise_multiplier_ * model.max_grad_norm
    np.testing.assert_allclose(scores, expected, rtol=1e-10)


@pytest.mark.parametrize("Recipe", [DPSGDLogisticRegression, NoiseBugDPSGDLogisticRegression])
@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_the_score_is_the_gaussian_mechanism(Recipe, epsilon):
    """One training with 2 000 canaries: the left-out canaries' scores are N(0, 1) (KS test
    at level 0.001), the put-in ones' mean is ``μ·v/√(v²+1)`` within 4 standard errors
    and their spread 1 (the canaries stay clipped: the statistic is exactly Gaussian)."""
    pop, canaries = population(2000)
    included = np.random.default_rng(1).random(len(canaries)) < 0.5
    data = np.vstack([pop, canaries[included]])
    model = Recipe(epsilon=epsilon, record_gradients=True, random_state=3)
    model.fit(data[:, :-1], data[:, -1])
    scores = DPSGDGradientScores(model).fit_transform(canaries)[:, 0]
    out, inside = scores[~included], scores[included]
    assert stats.kstest(out, "norm").pvalue > 1e-3
    shift = model.mu_ * 20 / np.sqrt(20**2 + 1)
    assert inside.mean() == pytest.approx(shift, abs=4 / np.sqrt(inside.size))
    assert stats.kstest(inside - shift, "norm").pvalue > 1e-3


def test_bad_input_names_the_parameter():
    pop, canaries = population(10)
    with pytest.raises(ValueError, match="model is None"):
        DPSGDGradientScores().fit(canaries)
    plain = DPSGDLogisticRegression(random_state=0).fit(pop[:, :-1], pop[:, -1])
    with pytest.raises(ValueError, match="record_gradients=True"):
        DPSGDGradientScores(plain).fit(canaries)
    model = DPSGDLogisticRegression(record_gradients=True, random_state=0)
    model.fit(pop[:, :-1], pop[:, -1])
    with pytest.raises(ValueError, match="label in the last column"):
        DPSGDGradientScores(model).fit(canaries[:, 1:])
    with pytest.warns(UserWarning, match="1 of 1 labels"):
        score = DPSGDGradientScores(model).fit_transform(np.c_[canaries[:1, :-1], [[7.0]]])
    assert score[0, 0] == 0.0


# ---------------------------------------------------------------- one-run audits


def white_box_audits(Recipe, seeds, epsilon=4.0, n_canaries=1000):
    """``(contradicted, over, epsilons)`` of white-box one-run audits: whether each
    contradicted the accountant's claim, whether its μ bound exceeded the true μ (``mu_``:
    a sound bound does so with probability at most α), and its certified ε (Steinke)."""
    pop, canaries = population(n_canaries)
    recipe = Recipe(epsilon=epsilon, record_gradients=True)
    claim = recipe.privacy_claim()
    truth = np.sqrt(recipe.epochs) / recipe._noise_multiplier()
    contradicted, over, epsilons = [], [], []
    for seed in seeds:
        audit = AlgorithmAudit(
            recipe,
            design="one_run",
            targets=canaries,
            train_size=len(pop),
            featurizer=DPSGDGradientScores(),
            claim=claim,
            random_state=seed,
        ).fit(pop)
        assert audit.certify_mask_.all() and audit.attacks_ == []  # no attack: all guessed on
        contradicted.append(bool(audit.contradicted_[0]))
        over.append(bool(audit.mu_lower_bounds_[0] > truth))
        epsilons.append(float(audit.epsilon_lower_bounds_[0]))
    return np.array(contradicted), np.array(over), np.array(epsilons)


def test_white_box_audit_is_sound_and_catches_the_noise_bug():
    """Reduced version (5 audits each at ε = 4, 1 000 canaries): the true claim contradicted,
    or the true μ exceeded, in at most ``most_allowed(5)`` audits, the certified ε never
    above the accountant's; the bug contradicted in at least 4 of 5 (slow suite: 40)."""
    contradicted, over, epsilons = white_box_audits(DPSGDLogisticRegression, range(5))
    assert contradicted.sum() <= most_allowed(5) and over.sum() <= most_allowed(5)
    assert np.all(epsilons <= 4.0)
    contradicted, over, _ = white_box_audits(NoiseBugDPSGDLogisticRegression, range(5))
    assert contradicted.sum() >= 4 and over.sum() <= most_allowed(5)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 4.0, 8.0])
def test_white_box_audit_is_sound_at_scale(epsilon):
    """40 audits of the correct trainer per ε (1 000 canaries): the accountant's claim
    contradicted in at most 5 %, the true μ exceeded in at most ``most_allowed(40)``, and no
    certified ε above the accountant's (the claim is true: a bound above it is a failure)."""
    contradicted, over, epsilons = white_box_audits(
        DPSGDLogisticRegression, range(200, 240), epsilon
    )
    assert contradicted.sum() <= 0.05 * 40 and over.sum() <= most_allowed(40)
    assert np.all(epsilons <= epsilon)


@pytest.mark.slow
def test_white_box_audit_catches_the_noise_bug_at_scale():
    """40 audits of the bug at ε = 4 (1 000 canaries): contradicted in at least 90 %."""
    contradicted, over, _ = white_box_audits(NoiseBugDPSGDLogisticRegression, range(200, 240))
    assert contradicted.sum() >= 0.9 * 40 and over.sum() <= most_allowed(40)


@pytest.mark.slow
def test_white_box_audit_catches_the_noise_bug_at_epsilon_8():
    """At ε = 8 one run needs more canaries: perfect guesses on 1 000 certify at most
    μ ≈ 1.44 < the claim's 1.66, so no one-run audit of 1 000 canaries can contradict it.
    With 10 000, 10 audits (about 40 s each): at least 9 contradicted."""
    contradicted, over, _ = white_box_audits(
        NoiseBugDPSGDLogisticRegression, range(200, 210), 8.0, n_canaries=10_000
    )
    assert contradicted.sum() >= 9 and over.sum() <= most_allowed(10)


# ---------------------------------------------------------------- the MLP recipe


def test_the_mlp_has_the_linear_recipes_claim_and_learns():
    pop = population(10)[0]
    X, y = pop[:, :-1], pop[:, -1]
    mlp = DPSGDMLPClassifier(epsilon=4.0, random_state=0)
    same_steps = DPSGDLogisticRegression(epsilon=4.0, epochs=mlp.epochs)
    assert mlp.privacy_claim() == same_steps.privacy_claim()
    mlp.fit(X, y)
    assert mlp.epsilon_ == pytest.approx(4.0, abs=0.05)
    assert mlp.mu_ == pytest.approx(np.sqrt(mlp.epochs) / mlp.noise_multiplier_)
    assert [w.shape for w in mlp.coefs_] == [(X.shape[1], 16), (16, 2)]
    assert mlp.score(X, y) > 0.9  # breast cancer: a useful model all the same
    again = DPSGDMLPClassifier(epsilon=4.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.coefs_[0], mlp.coefs_[0])


@pytest.mark.slow
def test_the_mlp_audited_in_one_run_keeps_its_claim():
    """Black-box one-run audits of the MLP (1 000 Dirac canaries, 10 audits, about 25 s
    each): the true claim contradicted, or the true μ exceeded, in at most
    ``most_allowed(10)`` (the default suite runs one through the command line)."""
    pop, canaries = population(1000)
    recipe = DPSGDMLPClassifier(epsilon=4.0)
    claim = recipe.privacy_claim()
    results = [
        AlgorithmAudit(
            recipe,
            design="one_run",
            targets=canaries,
            train_size=len(pop),
            claim=claim,
            random_state=seed,
        ).fit(pop)
        for seed in range(10)
    ]
    truth = np.sqrt(recipe.epochs) / recipe._noise_multiplier()
    assert sum(bool(a.contradicted_[0]) for a in results) <= most_allowed(10)
    assert sum(a.mu_lower_bounds_[0] > truth for a in results) <= most_allowed(10)


def test_white_box_scores_certify_nothing_on_null_data():
    """Truth zero: the canaries' scores come from a training that held none of them, and
    the in/out labels are fair coins drawn afterwards (100 draws). A valid bound certifies
    ε > 0 (or μ > 0) in at most α of them: at most ``most_allowed(100)`` = 12."""
    from sklearn_mace.algorithm._one_run import guess_table

    pop, canaries = population(1000)
    model = DPSGDLogisticRegression(epsilon=8.0, record_gradients=True, random_state=0)
    model.fit(pop[:, :-1], pop[:, -1])
    scores = DPSGDGradientScores(model).fit_transform(canaries)[:, 0]
    assert stats.kstest(scores, "norm").pvalue > 1e-3  # pure noise: N(0, 1)
    rng = np.random.default_rng(0)
    certified = 0
    for seed in range(100):
        table = guess_table(
            scores, rng.random(scores.size) < 0.5, claim=None, delta=1e-5, alpha=ALPHA, seed=seed
        )
        certified += bool(table["steinke_epsilon"].max() > 0 or table["fdp_mu"].max() > 0)
    assert certified <= most_allowed(100)
