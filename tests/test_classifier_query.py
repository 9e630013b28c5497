"""ClassifierQuery against direct computation with the wrapped model (sklearn, torch, skorch)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.attacks import BTTAttack
from sklearn_mace.attacks._btta import QUERY_COLUMNS
from sklearn_mace.queries import ClassifierQuery


def _row_mean(X):
    return np.asarray(X, dtype=float).mean(axis=1, keepdims=True)


def _any_width_model():
    """A fitted classifier that accepts any number of input columns (for the check suite).

    The checks feed random floats of varying width; the row mean makes the model's input
    width-free. GaussianNB, not LogisticRegression: a deep copy of a fitted
    LogisticRegression changes its joblib hash (coef_ memory order), which
    check_estimators_overwrite_params would misread as a mutation.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 1))
    return make_pipeline(FunctionTransformer(_row_mean), GaussianNB()).fit(X, X[:, 0] > 0)


@parametrize_with_checks([ClassifierQuery(_any_width_model())])
def test_sklearn_compatible(estimator, check):
    # Random check data put floats where the true label goes: they are not the model's
    # classes, so a UserWarning says so; that is the documented behaviour.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


@pytest.fixture(scope="module")
def iris_model():
    X, y = load_iris(return_X_y=True)
    # a weak model so that some records are misclassified
    model = LogisticRegression(C=0.05, max_iter=1000).fit(X[:, :2], y)
    return model, X[:, :2], y


def test_sklearn_outputs_match_direct_computation(iris_model):
    model, X, y = iris_model
    outputs = ("correct", "true_label", "predicted_label", "true_label_confidence",
               "predicted_label_confidence", "loss", "proba")
    query = ClassifierQuery(model, outputs).fit(np.column_stack([X, y]))
    Q = query.transform(np.column_stack([X, y]))
    proba = model.predict_proba(X)
    rows = np.arange(y.size)
    np.testing.assert_array_equal(Q[:, 0], model.predict(X) == y)
    assert 0 < Q[:, 0].mean() < 1
    np.testing.assert_array_equal(Q[:, 1], y)
    np.testing.assert_array_equal(Q[:, 2], model.predict(X))
    np.testing.assert_allclose(Q[:, 3], proba[rows, y])
    np.testing.assert_allclose(Q[:, 4], proba.max(axis=1))
    # the per-record loss averages to scikit-learn's log_loss (outside reference)
    assert Q[:, 5].mean() == pytest.approx(log_loss(y, proba))
    np.testing.assert_allclose(Q[:, 6:], proba)
    assert list(query.get_feature_names_out()) == [
        *outputs[:-1], "proba_0", "proba_1", "proba_2"
    ]


def test_default_outputs_are_btta_layout(iris_model):
    model, X, y = iris_model
    query = ClassifierQuery(model).fit(np.column_stack([X, y]))
    assert list(query.get_feature_names_out()) == list(QUERY_COLUMNS)
    Q = query.transform(np.column_stack([X, y]))
    m = np.arange(y.size) % 2
    BTTAttack(partition=["predicted_label", "predicted_label_confidence"]).fit(Q, m)


def test_label_column_position_and_dataframe_name(iris_model):
    model, X, y = iris_model
    expected = ClassifierQuery(model).fit_transform(np.column_stack([X, y]))
    first = ClassifierQuery(model, label_column=0).fit_transform(np.column_stack([y, X]))
    np.testing.assert_allclose(first, expected)
    frame = pd.DataFrame({"a": X[:, 0], "species": y, "b": X[:, 1]})
    # a model fitted on the named columns gets them by name (no feature-name warning)
    frame_model = clone(model).fit(frame[["a", "b"]], y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = ClassifierQuery(frame_model, label_column="species").fit_transform(frame)
    np.testing.assert_allclose(named, expected)
    with pytest.raises(ValueError, match="DataFrame"):
        ClassifierQuery(model, label_column="species").fit(np.column_stack([X, y]))
    with pytest.raises(ValueError, match="out of range"):
        ClassifierQuery(model, label_column=5).fit(np.column_stack([X, y]))


def test_unknown_labels_warn_and_get_zero_confidence(iris_model):
    model, X, y = iris_model
    records = np.column_stack([X[:4], [0, 1, 7, 2.5]])
    with pytest.warns(UserWarning, match="2 of 4 true labels are not among"):
        Q = ClassifierQuery(model, ("correct", "true_label_confidence", "loss")).fit_transform(
            records
        )
    np.testing.assert_array_equal(Q[2:, :2], 0)
    assert np.isfinite(Q[:, 2]).all()


def test_clone_keeps_the_fitted_target(iris_model):
    model, X, y = iris_model
    query = ClassifierQuery(model, ("correct",))
    cloned = clone(query)
    assert cloned.model is model and cloned is not query
    cloned.fit_transform(np.column_stack([X, y]))


def test_bad_models_and_outputs(iris_model):
    model, X, y = iris_model
    records = np.column_stack([X, y])
    with pytest.raises(NotFittedError):
        ClassifierQuery(LogisticRegression()).fit(records)
    with pytest.raises(TypeError, match="model must be"):
        ClassifierQuery(object()).fit(records)
    with pytest.raises(ValueError, match="unknown"):
        ClassifierQuery(model, ("correct", "margin")).fit(records)
    with pytest.raises(ValueError, match="twice"):
        ClassifierQuery(model, ("loss", "loss")).fit(records)
    with pytest.raises(ValueError, match="torch module"):
        ClassifierQuery(model, ("activations",), layer="0").fit(records)
    with pytest.raises(ValueError, match="at least 2"):
        ClassifierQuery(model).fit(y[:, None])


def _torch_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)
    ).double()


def test_torch_module_probabilities_and_activations():
    net = _torch_net()
    net.train()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    X, y = load_iris(return_X_y=True)
    query = ClassifierQuery(
        net, ("proba", "activations", "correct"), layer="1", batch_size=64, device="cpu"
    )
    Q = query.fit_transform(np.column_stack([X, y]))
    with torch.no_grad():
        hidden = torch.relu(net[0](torch.as_tensor(X)))
        logits = net[2](hidden)
    proba = torch.softmax(logits, dim=1).numpy()
    np.testing.assert_allclose(Q[:, :3], proba, rtol=1e-10)
    np.testing.assert_allclose(Q[:, 3:11], hidden.numpy(), rtol=1e-10)
    np.testing.assert_array_equal(Q[:, 11], proba.argmax(axis=1) == y)
    assert query.n_activations_ == 8
    assert net.training  # mode restored
    assert not net[1]._forward_hooks  # hook removed
    for key, value in net.state_dict().items():
        assert torch.equal(value, before[key])
    with pytest.raises(ValueError, match="not a sub-module"):
        ClassifierQuery(net, ("activations",), layer="nope").fit(np.column_stack([X, y]))
    with pytest.raises(ValueError, match="layer="):
        ClassifierQuery(net, ("activations",)).fit(np.column_stack([X, y]))


def test_torch_single_logit_is_binary():
    net = torch.nn.Linear(2, 1).double()
    X = np.array([[0.0, 0.0], [1.0, -1.0], [3.0, 2.0]])
    query = ClassifierQuery(net, ("proba",), device="cpu")
    Q = query.fit_transform(np.column_stack([X, [0, 1, 1]]))
    with torch.no_grad():
        positive = torch.sigmoid(net(torch.as_tensor(X))).numpy().ravel()
    np.testing.assert_allclose(Q, np.column_stack([1 - positive, positive]))


def test_skorch_net():
    skorch = pytest.importorskip("skorch")
    X, y = load_iris(return_X_y=True)
    X = X.astype(np.float32)
    torch.manual_seed(0)
    net = skorch.NeuralNetClassifier(
        torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3)),
        criterion=torch.nn.CrossEntropyLoss,
        max_epochs=3,
        lr=0.1,
        train_split=None,
        verbose=0,
    ).fit(X, y)
    query = ClassifierQuery(net, ("proba", "predicted_label", "activations"), layer="1")
    Q = query.fit_transform(np.column_stack([X, y]))
    np.testing.assert_allclose(Q[:, :3], net.predict_proba(X), rtol=1e-6)
    np.testing.assert_array_equal(Q[:, 3], net.predict(X))
    assert Q.shape == (150, 3 + 1 + 6)
    assert (Q[:, 4:] >= 0).all()  # ReLU activations


def test_uninitialized_skorch_net_is_rejected_naming_model():
    skorch = pytest.importorskip("skorch")
    net = skorch.NeuralNetClassifier(torch.nn.Linear(4, 3), criterion=torch.nn.CrossEntropyLoss)
    X, y = load_iris(return_X_y=True)
    with pytest.raises(TypeError, match="model is a skorch net that has not been initialized"):
        ClassifierQuery(net).fit(np.column_stack([X, y]))


def test_torch_module_runs_in_eval_mode_and_each_submodule_mode_is_restored():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Dropout(0.9)).double()
    net.train()
    net[0].eval()  # a mixed state: restored submodule by submodule, not from the parent's
    X, y = load_iris(return_X_y=True)
    Q = ClassifierQuery(net, ("proba",), device="cpu").fit_transform(np.column_stack([X, y]))
    with torch.no_grad():
        proba = torch.softmax(net[0](torch.as_tensor(X)), dim=1).numpy()
    np.testing.assert_allclose(Q, proba, rtol=1e-12)  # dropout was off
    assert net.training and not net[0].training and net[1].training


class _Constant(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x):
        return torch.full((len(x), 3), self.value, dtype=x.dtype)


@pytest.mark.parametrize("value, torch_output", [(float("nan"), "logits"), (2.0, "proba")])
def test_non_finite_or_out_of_range_probabilities_are_errors(value, torch_output):
    # NaN logits, or "probabilities" above 1, used to flow silently into every output
    X, y = load_iris(return_X_y=True)
    query = ClassifierQuery(_Constant(value), ("loss",), torch_output=torch_output)
    with pytest.raises(ValueError, match="not finite numbers in \\[0, 1\\].*torch_output"):
        query.fit(np.column_stack([X, y]))


def test_device_auto_falls_back_to_cpu_in_place(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    net = _torch_net()
    X, y = load_iris(return_X_y=True)
    query = ClassifierQuery(net, ("proba",)).fit(np.column_stack([X, y]))
    assert query.device_ == torch.device("cpu")
    assert query.module_ is net  # already there: used as is, not copied


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_uses_a_copy_and_matches_cpu():
    net = _torch_net()
    X, y = load_iris(return_X_y=True)
    records = np.column_stack([X, y])
    outputs = ("proba", "activations")
    on_gpu = ClassifierQuery(net, outputs, layer="1", device="cuda").fit(records)
    on_cpu = ClassifierQuery(net, outputs, layer="1", device="cpu").fit(records)
    assert next(net.parameters()).device.type == "cpu"  # the user's module is not moved
    np.testing.assert_allclose(on_gpu.transform(records), on_cpu.transform(records), rtol=1e-9)
