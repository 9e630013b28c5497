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
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.attacks import BTTAttack
from sklearn_mace.attacks._btta import QUERY_COLUMNS
from sklearn_mace.queries import ClassifierQuery
from sklearn_mace.utils._testing import RowMean


def _any_width_model():
    """A fitted classifier that accepts any number of input columns (for the check suite).

    The checks feed random floats of varying width; the row mean makes the model's input
    width-free. GaussianNB, not LogisticRegression: a deep copy of a fitted
    LogisticRegression changes its joblib hash (coef_ memory order), which
    check_estimators_overwrite_params would misread as a mutation.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 1))
    return make_pipeline(RowMean(), GaussianNB()).fit(X, X[:, 0] > 0)


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
    outputs = (
        "correct",
        "true_label",
        "predicted_label",
        "true_label_confidence",
        "predicted_label_confidence",
        "loss",
        "proba",
    )
    query = ClassifierQuery(model, outputs=outputs).fit(np.column_stack([X, y]))
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
    assert list(query.get_feature_names_out()) == [*outputs[:-1], "proba_0", "proba_1", "proba_2"]


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
        Q = ClassifierQuery(
            model, outputs=("correct", "true_label_confidence", "loss")
        ).fit_transform(records)
    np.testing.assert_array_equal(Q[2:, :2], 0)
    assert np.isfinite(Q[:, 2]).all()


def test_clone_keeps_the_fitted_target(iris_model):
    model, X, y = iris_model
    query = ClassifierQuery(model, outputs=("correct",))
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
        ClassifierQuery(model, outputs=("correct", "margin")).fit(records)
    with pytest.raises(ValueError, match="twice"):
        ClassifierQuery(model, outputs=("loss", "loss")).fit(records)
    with pytest.raises(ValueError, match="torch module"):
        ClassifierQuery(model, outputs=("activations",), layer="0").fit(records)
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
        net, outputs=("proba", "activations", "correct"), layer="1", batch_size=64, device="cpu"
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
        ClassifierQuery(net, outputs=("activations",), layer="nope").fit(np.column_stack([X, y]))
    with pytest.raises(ValueError, match="layer="):
        ClassifierQuery(net, outputs=("activations",)).fit(np.column_stack([X, y]))


def test_torch_single_logit_is_binary():
    net = torch.nn.Linear(2, 1).double()
    X = np.array([[0.0, 0.0], [1.0, -1.0], [3.0, 2.0]])
    query = ClassifierQuery(net, outputs=("proba",), device="cpu")
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
    query = ClassifierQuery(net, outputs=("proba", "predicted_label", "activations"), layer="1")
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
    Q = ClassifierQuery(net, outputs=("proba",), device="cpu").fit_transform(
        np.column_stack([X, y])
    )
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


@pytest.mark.parametrize(
    "value, torch_output, what",
    [
        (float("nan"), "logits", "logits"),
        (float("inf"), "logits", "logits"),
        (2.0, "proba", "probabilities"),
    ],
)
def test_non_finite_or_out_of_range_probabilities_are_errors(value, torch_output, what):
    # NaN logits, or "probabilities" above 1, used to flow silently into every output
    X, y = load_iris(return_X_y=True)
    query = ClassifierQuery(_Constant(value), outputs=("loss",), torch_output=torch_output)
    with pytest.raises(ValueError, match=f"{what} that are not finite numbers.*torch_output"):
        query.fit(np.column_stack([X, y]))


def test_device_auto_falls_back_to_cpu_in_place(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    net = _torch_net()
    X, y = load_iris(return_X_y=True)
    query = ClassifierQuery(net, outputs=("proba",)).fit(np.column_stack([X, y]))
    assert query.device_ == torch.device("cpu")
    assert query.module_ is net  # already there: used as is, not copied


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_uses_a_copy_and_matches_cpu():
    net = _torch_net()
    X, y = load_iris(return_X_y=True)
    records = np.column_stack([X, y])
    outputs = ("proba", "activations")
    on_gpu = ClassifierQuery(net, outputs=outputs, layer="1", device="cuda").fit(records)
    on_cpu = ClassifierQuery(net, outputs=outputs, layer="1", device="cpu").fit(records)
    assert next(net.parameters()).device.type == "cpu"  # the user's module is not moved
    np.testing.assert_allclose(on_gpu.transform(records), on_cpu.transform(records), rtol=1e-9)


# --------------------------------------------------------------------------- log space outputs
class _FixedLogits(torch.nn.Module):
    """Returns the given logits, one row per record (the record's first feature is its row)."""

    def __init__(self, logits):
        super().__init__()
        self.register_buffer("logits", torch.as_tensor(logits, dtype=torch.float64))

    def forward(self, x):
        return self.logits[x[:, 0].long()]


def _mp_reference(logits, labels):
    """(log-softmax, loss, true-label log-odds) in 400-digit arithmetic: the exact reference.

    400 digits: the smallest tail here is about exp(-600) ≈ 1e-260 beside terms of order 100.
    """
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 400
    log_proba, loss, log_odds = [], [], []
    for row, y in zip(logits, labels, strict=True):
        row = [mpmath.mpf(float(v)) for v in row]
        lse = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in row))
        lse_others = mpmath.log(mpmath.fsum(mpmath.exp(v) for j, v in enumerate(row) if j != y))
        log_proba.append([float(v - lse) for v in row])
        loss.append(float(lse - row[y]))
        log_odds.append(float(row[y] - lse_others))
    return np.array(log_proba), np.array(loss), np.array(log_odds)


def _fixed_logit_records(logits, labels):
    return np.column_stack([np.arange(len(labels)), np.zeros(len(labels)), labels])


def test_loss_of_a_confident_member_is_exact_not_rounded():
    # p_y = 1 - 1e-12 and 1 - 1e-20: the softmax rounds the second to 1.0 (loss 0 before)
    tails = np.array([1e-12, 1e-20, 1e-300])
    logits = np.column_stack([np.zeros(3), np.log1p(-tails) - np.log(tails)])
    query = ClassifierQuery(
        _FixedLogits(logits),
        outputs=("loss", "true_label_log_odds", "true_label_confidence"),
        device="cpu",
    )
    Q = query.fit_transform(_fixed_logit_records(logits, np.ones(3)))
    assert query.log_proba_source_ == "logits"
    # loss = -log(1 - t) = t + t²/2 + …, i.e. t to 1e-12 relative precision
    np.testing.assert_allclose(Q[:, 0], tails, rtol=1e-9)
    # log-odds log((1-t)/t) is the logit itself
    np.testing.assert_allclose(Q[:, 1], logits[:, 1], rtol=1e-15)
    assert Q[1, 2] == 1.0  # the probability does round to 1: only the log space keeps it


@pytest.mark.parametrize("n_classes", [2, 3, 10])
def test_log_space_outputs_match_a_400_digit_reference(n_classes):
    rng = np.random.default_rng(n_classes)
    # spreads from 0.1 to 80 nats: moderate rows and rows whose softmax rounds to one-hot
    logits = rng.normal(size=(40, n_classes)) * np.geomspace(0.1, 80, 40)[:, None]
    labels = rng.integers(0, n_classes, size=40)
    outputs = ("log_proba", "loss", "true_label_log_odds", "proba_log_ratios", "logits")
    query = ClassifierQuery(_FixedLogits(logits), outputs=outputs, device="cpu")
    Q = query.fit_transform(_fixed_logit_records(logits, labels))
    log_proba, loss, log_odds = _mp_reference(logits, labels)
    k = n_classes
    # float64 log-space arithmetic: relative error a few ulps of the largest term involved
    np.testing.assert_allclose(Q[:, :k], log_proba, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(Q[:, k], loss, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(Q[:, k + 1], log_odds, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Q[:, k + 2 : 2 * k + 1], logits[:, :-1] - logits[:, -1:])
    np.testing.assert_array_equal(Q[:, 2 * k + 1 :], logits)


def test_proba_log_ratios_are_a_bijection_of_the_probability_vector(iris_model):
    model, X, y = iris_model
    records = np.column_stack([X, y])
    query = ClassifierQuery(model, outputs=("proba_log_ratios", "proba")).fit(records)
    Q = query.transform(records)
    ratios, proba = Q[:, :2], Q[:, 2:]
    # the inverse map: p = softmax([r, 0])
    back = np.exp(np.column_stack([ratios, np.zeros(len(ratios))]))
    np.testing.assert_allclose(back / back.sum(axis=1, keepdims=True), proba, rtol=1e-12)
    np.testing.assert_allclose(proba, model.predict_proba(X), rtol=1e-12)
    assert list(query.get_feature_names_out()) == [
        "log_ratio_0_vs_2",
        "log_ratio_1_vs_2",
        "proba_0",
        "proba_1",
        "proba_2",
    ]


@pytest.mark.parametrize("bandwidth", ["scott", "cv"])
def test_three_class_log_ratios_feed_the_advantage_estimator(bandwidth):
    # the probability vector's columns sum to 1: a KDE with Scott's rule on the raw scale
    # refuses its singular covariance, while the k - 1 log-ratios fit (same optimal
    # advantage: a bijection). The default (bandwidth="cv") drops the null direction itself.
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from sklearn_mace.estimation import KDEAdvantageEstimator

    X, y = load_wine(return_X_y=True)
    order = np.random.default_rng(0).permutation(y.size)
    members = order[:89]
    model = make_pipeline(StandardScaler(), LogisticRegression(C=100, max_iter=5000))
    model.fit(X[members], y[members])
    records = np.column_stack([X[order], y[order]])
    m = (np.arange(y.size) < 89).astype(int)
    Q = ClassifierQuery(model, outputs=("proba_log_ratios", "proba")).fit_transform(records)
    assert Q.shape == (y.size, 5) and np.isfinite(Q).all()
    params = {"bandwidth": bandwidth, "feature_map": None, "cv": 3, "random_state": 0}
    estimator = KDEAdvantageEstimator(**params).fit(Q[:, :2], m)
    assert 0 <= estimator.advantage_lower_bound_ <= estimator.advantage_estimate_ <= 1
    if bandwidth == "scott":
        with pytest.raises(ValueError, match="singular"):
            KDEAdvantageEstimator(**params).fit(Q[:, 2:], m)


def test_sklearn_logits_come_from_decision_function_and_keep_the_tail():
    rng = np.random.default_rng(0)
    # overlapping classes, plus far-out records that the model classifies with p ≈ 1 - 1e-20
    X = np.r_[rng.normal(-1, 1, size=(100, 1)), rng.normal(1, 1, size=(100, 1)), [[-30.0], [30.0]]]
    y = np.r_[np.zeros(100), np.ones(100), 0, 1]
    model = LogisticRegression(max_iter=1000).fit(X, y)
    records = np.column_stack([X, y])
    query = ClassifierQuery(model, outputs=("loss", "true_label_log_odds", "logits")).fit(records)
    Q = query.transform(records)
    z = model.decision_function(X)
    assert query.log_proba_source_ == "logits" and query.n_logits_ == 1
    assert list(query.get_feature_names_out()) == ["loss", "true_label_log_odds", "logit_1.0"]
    signed = np.where(y == 1, z, -z)  # the true class's log-odds
    np.testing.assert_allclose(Q[:, 0], np.logaddexp(0, -signed), rtol=1e-12)
    np.testing.assert_allclose(Q[:, 1], signed, rtol=1e-12)
    np.testing.assert_array_equal(Q[:, 2], z)
    proba = model.predict_proba(X)[np.arange(y.size), y.astype(int)]
    rounded = proba == 1.0
    assert rounded.any() and (Q[rounded, 0] > 0).all()  # -log(predict_proba) would say 0


@pytest.mark.parametrize("in_pipeline", [False, True])
def test_mlp_logits_are_its_output_layer(in_pipeline):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    mlp = MLPClassifier((7,), activation="tanh", max_iter=50, random_state=0)
    model = make_pipeline(StandardScaler(), mlp) if in_pipeline else mlp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    records = np.column_stack([X, y])
    query = ClassifierQuery(model, outputs=("logits", "log_proba", "proba")).fit(records)
    Q = query.transform(records)
    assert query.log_proba_source_ == "logits"
    inputs = model[:-1].transform(X) if in_pipeline else X
    hidden = np.tanh(inputs @ mlp.coefs_[0] + mlp.intercepts_[0])
    np.testing.assert_allclose(Q[:, :3], hidden @ mlp.coefs_[1] + mlp.intercepts_[1], rtol=1e-12)
    np.testing.assert_allclose(Q[:, 6:], model.predict_proba(X), rtol=1e-10)
    np.testing.assert_allclose(Q[:, 3:6], np.log(model.predict_proba(X)), rtol=1e-10)


def test_models_without_logits_use_their_log_proba_and_refuse_logits():
    from sklearn.linear_model import SGDClassifier
    from sklearn.neighbors import KNeighborsClassifier

    X, y = load_iris(return_X_y=True)
    records = np.column_stack([X, y])
    # one-vs-rest probabilities are not the softmax of decision_function
    ovr = SGDClassifier(loss="log_loss", random_state=0).fit(X, y)
    knn = KNeighborsClassifier(n_neighbors=1).fit(X[::2], y[::2])
    for model, source in ((ovr, "log_proba"), (knn, "proba")):
        query = ClassifierQuery(model, outputs=("log_proba", "loss")).fit(records)
        assert query.log_proba_source_ == source
        with pytest.raises(ValueError, match="'log_proba', or 'proba_log_ratios'"):
            ClassifierQuery(model, outputs=("logits",)).fit(records)
    floor = np.log(np.finfo(float).tiny)
    Q = ClassifierQuery(ovr, outputs=("log_proba",)).fit_transform(records)
    np.testing.assert_array_equal(Q, np.maximum(ovr.predict_log_proba(X), floor))
    # 1-NN probabilities are 0 or 1: a probability of exactly 0 is floored at log(tiny)
    Q = ClassifierQuery(knn, outputs=("loss", "true_label_log_odds")).fit_transform(records)
    wrong = knn.predict(X) != y
    assert wrong.any()
    np.testing.assert_allclose(Q[wrong, 0], -floor)
    np.testing.assert_allclose(Q[wrong, 1], floor)
    np.testing.assert_allclose(Q[~wrong, 0], 0.0)


def test_naive_bayes_logits_are_its_joint_log_likelihoods():
    X, y = load_iris(return_X_y=True)
    nb = GaussianNB().fit(X, y)
    query = ClassifierQuery(nb, outputs=("logits", "loss")).fit(np.column_stack([X, y]))
    assert query.log_proba_source_ == "logits"
    Q = query.transform(np.column_stack([X, y]))
    joint = nb.predict_joint_log_proba(X)
    np.testing.assert_array_equal(Q[:, :3], joint)
    _, loss, _ = _mp_reference(joint, y)
    np.testing.assert_allclose(Q[:, 3], loss, rtol=1e-12, atol=1e-300)
    # predict_proba rounds these to 1 (and predict_log_proba to 0); the loss keeps them
    rounded = nb.predict_proba(X)[np.arange(y.size), y] == 1.0
    assert rounded.sum() > 10 and (Q[rounded, 3] > 0).all()


def test_torch_probability_module_has_no_logits():
    X, y = load_iris(return_X_y=True)
    net = torch.nn.Sequential(_torch_net(), torch.nn.Softmax(dim=1))
    records = np.column_stack([X, y])
    query = ClassifierQuery(net, outputs=("log_proba",), torch_output="proba", device="cpu").fit(
        records
    )
    assert query.log_proba_source_ == "proba" and query.n_logits_ == 0
    with torch.no_grad():
        expected = torch.log_softmax(net[0](torch.as_tensor(X)), dim=1).numpy()
    np.testing.assert_allclose(query.transform(records), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="outputs='logits' needs"):
        ClassifierQuery(net, outputs=("logits",), torch_output="proba", device="cpu").fit(records)


def test_skorch_logits_are_its_forward_output():
    skorch = pytest.importorskip("skorch")
    X, y = load_iris(return_X_y=True)
    X = X.astype(np.float32)
    net = skorch.NeuralNetClassifier(
        torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3)),
        criterion=torch.nn.CrossEntropyLoss,
        max_epochs=2,
        lr=0.1,
        train_split=None,
        verbose=0,
    ).fit(X, y)
    query = ClassifierQuery(net, outputs=("logits", "loss"))
    Q = query.fit_transform(np.column_stack([X, y]))
    assert query.log_proba_source_ == "logits"
    logits = net.forward(X, training=False)
    np.testing.assert_array_equal(Q[:, :3], logits.numpy())
    expected = torch.nn.functional.cross_entropy(
        logits.double(), torch.as_tensor(y), reduction="none"
    )
    np.testing.assert_allclose(Q[:, 3], expected.numpy(), rtol=1e-12)
