"""Queries against released torch models: discriminator(s) (MACE Eqs. 3, 5, 6) and GAN-leaks
generator reconstruction (§2.2.1)."""

import pickle
from unittest import mock

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.queries import (
    DiscriminatorQuery,
    GeneratorReconstructionQuery,
    MultiDiscriminatorQuery,
)
from tests._query_models import NaNGenerator, RowMean, query_expected_failed_checks, width_for


def _linear(n_in, n_out, seed):
    torch.manual_seed(seed)
    return torch.nn.Linear(n_in, n_out).double()


def _affine(module, X):
    """Ground truth of a linear module: X W^T + b in float64 NumPy."""
    W, b = module.weight.detach().numpy(), module.bias.detach().numpy()
    return X @ W.T + b


# ---------------------------------------------------------------- estimator checks


@parametrize_with_checks(
    [
        DiscriminatorQuery(RowMean()),
        DiscriminatorQuery(RowMean(), output="proba"),
        MultiDiscriminatorQuery([RowMean(1.0), RowMean(-1.0)], reduce=None),
        MultiDiscriminatorQuery([RowMean(1.0), RowMean(-1.0)], reduce="max"),
    ],
    expected_failed_checks=query_expected_failed_checks,
)
def test_discriminator_queries_pass_estimator_checks(estimator, check):
    check(estimator)


@parametrize_with_checks(
    [
        GeneratorReconstructionQuery(
            torch.nn.Linear(2, 3), 2, n_restarts=2, n_steps=3, random_state=0
        )
    ],
    expected_failed_checks=query_expected_failed_checks,
)
def test_generator_query_passes_estimator_checks(estimator, check):
    # The generator fixes the record width: build it with the width the check's data has.
    torch.manual_seed(0)
    check(estimator.set_params(generator=torch.nn.Linear(2, width_for(check))))


# ---------------------------------------------------------------- values against ground truth


def test_discriminator_query_is_the_module_output(rng):
    D = _linear(4, 1, seed=1)
    X = rng.normal(size=(37, 4))
    logits = DiscriminatorQuery(D, batch_size=8).fit_transform(X)
    assert logits.shape == (37, 1) and logits.dtype == np.float64
    np.testing.assert_allclose(logits, _affine(D, X), rtol=1e-12)
    proba = DiscriminatorQuery(D, output="proba").fit_transform(X)
    np.testing.assert_allclose(proba, 1 / (1 + np.exp(-_affine(D, X))), rtol=1e-12)


def test_discriminator_query_reshapes_records_for_convolutional_modules(rng):
    # float64 module: the query runs in the module's dtype, so the match is to rounding
    conv = torch.nn.Sequential(torch.nn.Conv2d(1, 1, kernel_size=8), torch.nn.Flatten()).double()
    X = rng.normal(size=(5, 64))
    Q = DiscriminatorQuery(conv, input_shape=(1, 8, 8)).fit_transform(X)
    weight = conv[0].weight.detach().numpy().reshape(64)
    np.testing.assert_allclose(Q[:, 0], X @ weight + conv[0].bias.item(), rtol=1e-12)


def test_multi_discriminator_vector_and_max_queries(rng):
    Ds = [_linear(3, 1, seed=s) for s in (1, 2, 3)]
    X = rng.normal(size=(20, 3))
    truth = np.hstack([_affine(D, X) for D in Ds])
    vector = MultiDiscriminatorQuery(Ds, reduce=None).fit_transform(X)  # Eq. 6
    np.testing.assert_allclose(vector, truth, rtol=1e-12)
    biggest = MultiDiscriminatorQuery(Ds, reduce="max", output="proba").fit_transform(X)  # Eq. 5
    np.testing.assert_allclose(biggest[:, 0], 1 / (1 + np.exp(-truth.max(axis=1))), rtol=1e-12)


def test_generator_reconstruction_equals_distance_to_the_generator_range(rng):
    # A linear generator's range is an affine plane: min_w ‖z − G(w)‖ is the least-squares
    # residual, known in closed form. Adam on this convex problem gets within 1e-3 of it
    # (200 steps from N(0, I) starts; the residuals themselves are of order 1).
    G = _linear(2, 5, seed=4)
    X = rng.normal(size=(30, 5))
    W, b = G.weight.detach().numpy(), G.bias.detach().numpy()
    coef, *_ = np.linalg.lstsq(W, (X - b).T, rcond=None)
    truth = np.linalg.norm(X - (W @ coef).T - b, axis=1)
    query = GeneratorReconstructionQuery(
        G, latent_dim=2, n_restarts=2, n_steps=200, learning_rate=0.1, batch_size=7, random_state=0
    )
    Q = query.fit_transform(X)
    assert Q.shape == (30, 1) and Q.dtype == np.float64
    np.testing.assert_allclose(Q[:, 0], truth, atol=1e-3)
    assert np.all(Q[:, 0] >= truth - 1e-9)  # never below the true minimum


def test_generator_query_is_reproducible_and_restarts_only_help(rng):
    torch.manual_seed(0)
    G = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 4))
    X = rng.normal(size=(10, 4))
    one = GeneratorReconstructionQuery(G, 2, n_restarts=1, n_steps=5, random_state=3)
    np.testing.assert_array_equal(one.fit_transform(X), clone(one).fit_transform(X))
    # With 0 steps the query is the best of the random starts: more starts, never worse
    # (the first start of 4 is the single start of 1: same seed, same stream).
    few = GeneratorReconstructionQuery(G, 2, n_restarts=1, n_steps=0, random_state=3)
    many = GeneratorReconstructionQuery(G, 2, n_restarts=4, n_steps=0, random_state=3)
    assert np.all(many.fit_transform(X) <= few.fit_transform(X) + 1e-7)


# ---------------------------------------------------------------- the module is left alone


@pytest.mark.parametrize(
    "make_query",
    [
        lambda m: DiscriminatorQuery(m),
        lambda m: GeneratorReconstructionQuery(m, latent_dim=3, n_steps=3, random_state=0),
    ],
)
def test_fit_and_transform_leave_module_untouched(make_query, rng):
    module = torch.nn.Sequential(
        torch.nn.Linear(3, 3), torch.nn.Dropout(0.5), torch.nn.Linear(3, 3)
    )
    module.train()
    before = {k: v.clone() for k, v in module.state_dict().items()}
    make_query(module).fit(rng.normal(size=(6, 3))).transform(rng.normal(size=(6, 3)))
    assert module.training and all(m.training for m in module.modules())
    for key, value in module.state_dict().items():
        assert torch.equal(value, before[key])
    assert all(p.grad is None for p in module.parameters())


def test_dropout_is_off_during_the_query(rng):
    module = torch.nn.Sequential(torch.nn.Dropout(0.9), torch.nn.Linear(4, 1))
    module.train()
    X = rng.normal(size=(50, 4))
    q = DiscriminatorQuery(module).fit(X)
    np.testing.assert_array_equal(q.transform(X), q.transform(X))


# ---------------------------------------------------------------- clone, pickle, skorch


@pytest.mark.parametrize(
    "query",
    [
        DiscriminatorQuery(RowMean(2.0, 1.0), output="proba"),
        MultiDiscriminatorQuery([RowMean(1.0), RowMean(-3.0)], reduce=None),
        GeneratorReconstructionQuery(torch.nn.Linear(2, 4), 2, n_steps=4, random_state=1),
    ],
)
def test_queries_clone_and_pickle(query, rng):
    X = rng.normal(size=(9, 4))
    Q = clone(query).fit_transform(X)
    restored = pickle.loads(pickle.dumps(query.fit(X)))
    np.testing.assert_array_equal(restored.transform(X), Q)  # same weights, same seed


def test_skorch_net_and_its_module_are_accepted(rng):
    from skorch import NeuralNetBinaryClassifier

    X = rng.normal(size=(40, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.float32)
    net = NeuralNetBinaryClassifier(RowMean, max_epochs=2, train_split=None, verbose=0)
    net.fit(X, y)
    Q = DiscriminatorQuery(net, output="proba").fit_transform(X)
    np.testing.assert_allclose(Q, DiscriminatorQuery(net.module_, output="proba").fit_transform(X))
    np.testing.assert_allclose(Q[:, 0], net.predict_proba(X)[:, 1], rtol=1e-5)
    unfitted = NeuralNetBinaryClassifier(RowMean)
    with pytest.raises(TypeError, match="not been initialized"):
        DiscriminatorQuery(unfitted).fit(X)


# ---------------------------------------------------------------- devices


def test_auto_device_falls_back_to_cpu_without_cuda(rng):
    X = rng.normal(size=(5, 3))
    with mock.patch("torch.cuda.is_available", return_value=False):
        Q = DiscriminatorQuery(_linear(3, 1, 0), device="auto").fit_transform(X)
        with pytest.raises(ValueError, match="CUDA is not available"):
            DiscriminatorQuery(RowMean(), device="cuda").fit(X)
    assert Q.shape == (5, 1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_queries_run_on_cuda_and_match_cpu(rng):
    X = rng.normal(size=(64, 4))
    D = _linear(4, 1, 0)
    cpu = DiscriminatorQuery(D, device="cpu").fit_transform(X)
    np.testing.assert_allclose(
        DiscriminatorQuery(D, device="cuda").fit_transform(X), cpu, rtol=1e-10
    )
    assert next(D.parameters()).device.type == "cpu"  # the user's module was not moved
    G = _linear(2, 4, 1)
    g_cpu = GeneratorReconstructionQuery(G, 2, n_steps=20, random_state=0, device="cpu")
    g_gpu = clone(g_cpu).set_params(device="cuda")
    np.testing.assert_allclose(g_gpu.fit_transform(X), g_cpu.fit_transform(X), rtol=1e-6)


# ---------------------------------------------------------------- bad input


def test_module_input_shape_mismatch_is_a_clear_error(rng):
    with pytest.raises(ValueError, match="discriminator cannot be applied to records with 5"):
        DiscriminatorQuery(torch.nn.Linear(3, 1)).fit(rng.normal(size=(4, 5)))
    with pytest.raises(ValueError, match=r"input_shape=\(1, 8, 8\) holds 64 values"):
        DiscriminatorQuery(RowMean(), input_shape=(1, 8, 8)).fit(rng.normal(size=(4, 10)))
    with pytest.raises(ValueError, match="generator produces records with 3 values but X has 5"):
        GeneratorReconstructionQuery(torch.nn.Linear(2, 3), 2).fit(rng.normal(size=(4, 5)))
    with pytest.raises(ValueError, match="latent_dim=4"):
        GeneratorReconstructionQuery(torch.nn.Linear(2, 3), 4).fit(rng.normal(size=(4, 3)))
    with pytest.raises(ValueError, match="one score per record"):
        MultiDiscriminatorQuery([torch.nn.Linear(3, 2)]).fit(rng.normal(size=(4, 3)))


def test_non_module_and_nan_input_are_rejected(rng):
    with pytest.raises(TypeError, match="discriminator must be a torch.nn.Module"):
        DiscriminatorQuery("not a model").fit(rng.normal(size=(4, 3)))
    X = rng.normal(size=(4, 3))
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DiscriminatorQuery(RowMean()).fit(X)
    with pytest.raises(ValueError, match="at least one module"):
        MultiDiscriminatorQuery([]).fit(rng.normal(size=(4, 3)))


def test_non_finite_generator_and_discriminator_outputs_are_errors(rng):
    X = rng.normal(size=(4, 3))
    with pytest.raises(ValueError, match="generator returned non-finite values"):
        GeneratorReconstructionQuery(NaNGenerator(3), 2).fit(X)
    with pytest.raises(ValueError, match="non-finite"):
        DiscriminatorQuery(NaNGenerator(1)).fit(rng.normal(size=(4, 2)))


def test_progress_bar_follows_verbose(rng, capsys):
    X = rng.normal(size=(6, 4))
    query = GeneratorReconstructionQuery(torch.nn.Linear(2, 4), 2, n_steps=3, random_state=0)
    query.fit_transform(X)
    assert "GeneratorReconstructionQuery" not in capsys.readouterr().err
    query.set_params(verbose=1).fit_transform(X)
    assert "GeneratorReconstructionQuery" in capsys.readouterr().err
    DiscriminatorQuery(RowMean(), verbose=1).fit_transform(X)
    assert "DiscriminatorQuery" in capsys.readouterr().err
