"""Loading a model to audit can neither run code nor void the audit (issue #22, items 1, 2, 6).

Hostile skops files are built with skops' own API and must be refused, for the model and the
shadow-model recipe alike, before anything in them runs (a marker file that their code would
write is never created). Legitimate classifiers of every common family still load. ONNX runs
write nothing outside the given folders (a fake HOME and XDG folders, compared before and
after). Regressors are refused in every format; labels match the model's classes by value.
"""

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import make_column_transformer
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    StackingClassifier,
)
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from sklearn_mace.report import AuditInputError
from sklearn_mace.report._io import AuditInputWarning
from sklearn_mace.report._kinds.model._inputs import (
    check_finite_features,
    label_key,
    match_labels,
    model_input_columns,
)
from sklearn_mace.report._kinds.model._io import load_estimator, load_model

sio = pytest.importorskip("skops.io")
skl2onnx = pytest.importorskip("skl2onnx")
pytest.importorskip("onnxruntime")
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


# ------------------------------------------------------------------ hostile skops files
class Planted(BaseEstimator):
    """A custom class: restoring its state writes the marker."""

    def __init__(self, marker=None):
        self.marker = marker

    def __setstate__(self, state):
        Path(state["marker"]).write_text("ran")
        self.__dict__.update(state)


def _code_chain(wine, text, run, **kw_args):
    """FunctionTransformers chaining NumPy functions into ``run(text, **kw_args)``: the
    records become an array of ``text``, its first cell is handed to ``run``."""
    _, X, y = wine
    return Pipeline(
        [
            (
                "fill",
                FunctionTransformer(np.full_like, kw_args={"fill_value": text, "dtype": "U200"}),
            ),
            ("first", FunctionTransformer(np.take, kw_args={"indices": 0})),
            ("run", FunctionTransformer(run, kw_args=kw_args)),
            ("clf", LogisticRegression(max_iter=2000).fit(X, y)),
        ]
    )


def _exec_chain(marker, wine):
    """Into NumPy's test helper ``runstring`` (``exec``): every type the file holds starts
    with ``numpy.`` or ``sklearn.``, which the old prefix rule let in."""
    from numpy.testing._private.utils import runstring

    return _code_chain(wine, f"open({str(marker)!r}, 'w').write('ran')", runstring, dict={})


def _hostile(kind, marker, wine):
    _, X, y = wine
    if kind == "exec chain":
        return _exec_chain(marker, wine), "numpy.testing._private.utils.runstring"
    if kind == "os.system":
        return _code_chain(wine, f"touch {marker}", os.system), "system"
    model = LogisticRegression(max_iter=2000).fit(X, y)
    model.planted_ = Planted(str(marker))
    return model, "Planted"


@pytest.mark.parametrize("kind", ["exec chain", "os.system", "custom class"])
def test_hostile_skops_files_are_refused_before_anything_runs(kind, wine, tmp_path):
    marker = tmp_path / "marker"
    model, refused = _hostile(kind, marker, wine)
    path = tmp_path / "hostile.skops"
    sio.dump(model, path)
    assert not marker.exists()
    for load in (load_model, load_estimator):  # the model, and the shadow recipe
        with pytest.raises(AuditInputError, match="Refusing to load the skops model") as info:
            load(path)
        assert refused in str(info.value)
        assert not marker.exists()


def test_the_exec_chain_really_runs_code_when_trusted_by_prefix(wine, tmp_path):
    """The file of the test above is hostile: trusted the old way (every type under
    ``numpy.``/``sklearn.``), scoring it writes the marker."""
    marker = tmp_path / "marker"
    path = tmp_path / "hostile.skops"
    sio.dump(_exec_chain(marker, wine), path)
    untrusted = sio.get_untrusted_types(file=path)
    assert all(name.startswith(("sklearn.", "numpy.", "scipy.")) for name in untrusted)
    loaded = sio.load(path, trusted=untrusted)
    with pytest.raises(Exception):  # noqa: B017  the chain's output is no table for the model
        loaded.predict_proba(wine[1])
    assert marker.read_text() == "ran"


def test_a_caching_recipe_is_refused(wine, tmp_path):
    _, X, y = wine
    recipe = make_pipeline(StandardScaler(), LogisticRegression(), memory=str(tmp_path / "c"))
    sio.dump(recipe, tmp_path / "recipe.skops")
    with pytest.raises(AuditInputError, match="memory=None"):
        load_estimator(tmp_path / "recipe.skops")


# ------------------------------------------------------------------ legitimate models load
def _legitimate(frame, X, y):
    table = frame.drop(columns="target").assign(
        kind=np.where(frame["alcohol"] > 13, "strong", "light")
    )
    categorical = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["kind"]), remainder=StandardScaler()
    )
    return [
        (make_pipeline(categorical, LogisticRegression(max_iter=2000)), table),
        (RandomForestClassifier(5, random_state=0), X),
        (KNeighborsClassifier(algorithm="ball_tree", metric="manhattan"), X),
        (make_pipeline(StandardScaler(), MLPClassifier((8,), solver="sgd", max_iter=5)), X),
        (HistGradientBoostingClassifier(max_iter=5, categorical_features=["kind"]), table),
        (CalibratedClassifierCV(LogisticRegression(max_iter=2000), method="isotonic", cv=2), X),
        (
            StackingClassifier(
                [("lr", LogisticRegression(max_iter=2000)), ("rf", RandomForestClassifier(3))],
                cv=2,
            ),
            X,
        ),
        (make_pipeline(FunctionTransformer(np.log1p), LogisticRegression(max_iter=2000)), X),
    ]


def test_common_classifiers_load_through_the_allow_list(wine, tmp_path):
    frame, X, y = wine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence of the tiny fits
        for i, (model, data) in enumerate(_legitimate(frame, X, y)):
            model.fit(data, y)
            path = tmp_path / f"model{i}.skops"
            sio.dump(model, path)
            loaded = load_estimator(path)
            np.testing.assert_allclose(loaded.predict_proba(data), model.predict_proba(data))


# ------------------------------------------------------------------ nothing written
CHILD = textwrap.dedent(
    """
    import sys
    import pandas as pd
    from sklearn_mace.report._kinds.model._io import load_model

    model = load_model(sys.argv[1])
    print(model.log_proba(pd.read_csv(sys.argv[2])).shape)
    """
)
# The control proves the harness sees a write in each redirected place. (onnxruntime itself
# writes telemetry under ~/.cache on some machines and not on others, CI's among the latter, so
# it cannot be the control.)
CONTROL = textwrap.dedent(
    """
    import os, pathlib, tempfile

    pathlib.Path.home().joinpath("home-probe").write_text("x")
    pathlib.Path(os.environ["XDG_CACHE_HOME"]).mkdir(parents=True, exist_ok=True)
    pathlib.Path(os.environ["XDG_CACHE_HOME"]).joinpath("cache-probe").write_text("x")
    with tempfile.NamedTemporaryFile(delete=False, prefix="tmp-probe") as handle:
        handle.write(b"x")
    """
)


def _tree(root):
    return {
        (str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*")
    }


def _run_isolated(root, code, *args):
    # a fresh user: no telemetry switch, no matplotlib folder of their own
    env = {
        k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "MPLCONFIGDIR")
    }
    env.update(
        HOME=str(root / "home"),
        XDG_CACHE_HOME=str(root / "xdg" / "cache"),
        XDG_CONFIG_HOME=str(root / "xdg" / "config"),
        XDG_DATA_HOME=str(root / "xdg" / "data"),
        XDG_STATE_HOME=str(root / "xdg" / "state"),
        TMPDIR=str(root / "tmp"),
        PYTHONPATH=str(ROOT),
    )
    for folder in ("home", "xdg", "tmp", "work"):
        (root / folder).mkdir(exist_ok=True)
    before = _tree(root)
    result = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        cwd=root / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return _tree(root) - before


def test_running_an_onnx_model_writes_nothing_outside_the_given_paths(wine, tmp_path):
    frame, X, y = wine
    model = LogisticRegression(max_iter=2000).fit(X, y)
    work = tmp_path / "work"
    work.mkdir()
    (work / "model.onnx").write_bytes(skl2onnx.to_onnx(model, X[:1]).SerializeToString())
    frame.drop(columns="target").to_csv(work / "records.csv", index=False)
    written = {name for name, _ in _run_isolated(tmp_path, CONTROL)}
    for probe in ("home/home-probe", "xdg/cache/cache-probe"):
        assert probe in written, written
    assert any(name.startswith("tmp/tmp-probe") for name in written), written
    for folder in ("home", "xdg", "tmp"):
        for path in sorted((tmp_path / folder).rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
    assert _run_isolated(tmp_path, CHILD, work / "model.onnx", work / "records.csv") == set()


# ------------------------------------------------------------------ regressors refused
def test_regressors_are_refused_in_every_format(wine, tmp_path):
    frame, X, y = wine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linear = LinearRegression().fit(X, y.astype(float))
        mlp = MLPRegressor(hidden_layer_sizes=(4,), max_iter=20, random_state=0).fit(
            X, y.astype(float)
        )
    sio.dump(linear, tmp_path / "linear.skops")
    joblib.dump(linear, tmp_path / "linear.joblib")
    for path, trust in ((tmp_path / "linear.skops", False), (tmp_path / "linear.joblib", True)):
        for load in (load_model, load_estimator):
            with pytest.raises(AuditInputError, match="LinearRegression, not a classifier"):
                load(path, trust_pickle=trust)
    for name, model, why in (
        ("linear.onnx", linear, "regressor operator"),
        ("mlp.onnx", mlp, "without a label output"),
    ):
        (tmp_path / name).write_bytes(skl2onnx.to_onnx(model, X[:1]).SerializeToString())
        with pytest.raises(AuditInputError, match=f"is a regressor.*{why}"):
            load_model(tmp_path / name)


# ------------------------------------------------------------------ outputs and inputs
def _onnx_identity(path, n_columns, output="probabilities"):
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], [output])],
        "identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, n_columns])],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, [None, n_columns])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return path


def test_float32_probabilities_are_clipped_before_losses(tmp_path):
    """A float32 export's 1.0000001 gave loss -1.2e-07 and confidence 1.0000001."""
    model = load_model(_onnx_identity(tmp_path / "p.onnx", 2))
    frame = pd.DataFrame({"a": [1.0000001, 0.25], "b": [-1e-7, 0.75]})
    logp = model.log_proba(frame)
    assert np.float32(1.0000001) > 1  # the overshoot is real in float32
    assert logp.max() == 0.0 and logp[0, 0] == 0.0
    np.testing.assert_allclose(np.exp(logp[1]), [0.25, 0.75], rtol=1e-6)
    assert (-logp >= 0).all()  # every loss is non-negative


def test_unnamed_onnx_inputs_meet_reordered_columns_with_a_warning(tmp_path):
    model = load_model(_onnx_identity(tmp_path / "p.onnx", 2))
    rng = np.random.default_rng(0)
    members = pd.DataFrame(rng.dirichlet([1, 1], 30), columns=["a", "b"])
    non_members = pd.DataFrame(rng.dirichlet([1, 1], 30), columns=["a", "b"])[["b", "a"]]
    tables = {"members": members, "non-members": non_members}
    with pytest.warns(AuditInputWarning, match=r"non-members table orders them \['b', 'a'\]"):
        assert model_input_columns(model, tables, ["a", "b"]) == ["a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", AuditInputWarning)  # same order everywhere: silent
        model_input_columns(model, {"members": members}, ["a", "b"])


def test_row_ids_are_left_out_of_an_unnamed_model_and_non_finite_values_refused(tmp_path):
    model = load_model(_onnx_identity(tmp_path / "p.onnx", 2))
    rng = np.random.default_rng(0)
    members = pd.DataFrame(rng.dirichlet([1, 1], 40), columns=["a", "b"])
    non_members = pd.DataFrame(rng.dirichlet([1, 1], 40), columns=["a", "b"])
    members.insert(0, "record_no", np.arange(40))
    non_members.insert(0, "record_no", np.arange(40, 80))
    tables = {"members": members, "non-members": non_members}
    with pytest.warns(AuditInputWarning, match=r"\['record_no'\] look like row ids"):
        assert model_input_columns(model, tables, ["record_no", "a", "b"]) == ["a", "b"]
    with pytest.raises(AuditInputError, match="takes 2 features but the tables give 3"):
        model_input_columns(model, tables, ["record_no", "a", "b"], id_columns=[])
    members.loc[3, "a"] = np.inf
    with pytest.raises(AuditInputError, match=r"'a' of the members table has 1 infinite"):
        model_input_columns(model, tables, ["a", "b"], id_columns=[])
    members.loc[3, "a"] = np.nan
    with pytest.raises(AuditInputError, match="1 missing value.*allow_missing=True"):
        check_finite_features(tables, ["a", "b"])
    check_finite_features(tables, ["a", "b"], allow_missing=True)


def test_a_skorch_pickle_gets_its_inputs_in_float32(tmp_path):
    torch = pytest.importorskip("torch")
    skorch = pytest.importorskip("skorch")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    net = skorch.NeuralNetClassifier(
        torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Softmax(dim=-1)),
        max_epochs=2,
        train_split=None,
        verbose=0,
    ).fit(X, y)
    joblib.dump(net, tmp_path / "net.pkl")
    model = load_model(tmp_path / "net.pkl", trust_pickle=True)
    frame = pd.DataFrame(X.astype(np.float64), columns=list("abc"))  # float64, as read
    np.testing.assert_allclose(np.exp(model.log_proba(frame)), net.predict_proba(X), rtol=1e-6)


# ------------------------------------------------------------------ labels by value
def test_labels_match_classes_by_value():
    assert match_labels([1.0, 0.0, "1", " 2 ", np.int64(2)], [0, 1, 2]).index.tolist() == [
        1,
        0,
        1,
        2,
        2,
    ]
    assert match_labels([0, 1, "true", "False", 1.0], [False, True]).index.tolist() == [
        0,
        1,
        1,
        0,
        1,
    ]
    assert match_labels([True, False], [0, 1]).index.tolist() == [1, 0]
    assert match_labels(["cat ", "dog"], ["cat", "dog"]).index.tolist() == [0, 1]
    assert label_key("Cat") != label_key("cat")  # text keeps its case


@pytest.mark.parametrize(
    "labels, fragments",
    [
        ([0, 1, 7, 7, 9], ["'target'", "7 (2 rows)", "9 (1 row)"]),
        ([0, 1, np.nan, 1, None], ["'target'", "2 missing labels"]),
        (["a", "b", "a", 1, 1], ["a (2 rows)", "b (1 row)"]),
    ],
)
def test_unmatched_labels_are_an_input_error_naming_values_and_rows(labels, fragments):
    with pytest.raises(AuditInputError) as info:
        match_labels(labels, [0, 1], column="target")
    for fragment in fragments:
        assert fragment in str(info.value)


def test_unmatched_labels_can_be_dropped_with_a_warning():
    with pytest.warns(AuditInputWarning, match="2 of 5 records dropped"):
        match = match_labels([0, 1, 7, np.nan, 1], [0, 1], drop_unmatched=True)
    assert match.keep.tolist() == [True, True, False, False, True]
    assert "7 (1 row)" in match.note
    with pytest.raises(AuditInputError, match="no record would be left"):
        match_labels([5, 6], [0, 1], drop_unmatched=True)
    with pytest.raises(AuditInputError, match="cannot be told apart"):
        match_labels([1], [1, "1"])


def test_float_labels_give_the_memorizing_model_its_accuracy(wine, tmp_path):
    """Labels written as floats (1.0) against an ONNX model with integer classes and no
    ZipMap: matched by value the forest is right on its training rows, never at 0 %."""
    frame, X, y = wine
    forest = RandomForestClassifier(30, random_state=0).fit(X[:100], y[:100])
    options = {"zipmap": False}
    onnx = skl2onnx.to_onnx(forest, X[:1], options=options)
    (tmp_path / "forest.onnx").write_bytes(onnx.SerializeToString())
    model = load_model(tmp_path / "forest.onnx")
    labels = y[:100].astype(float)  # 0.0, 1.0, 2.0 as a CSV may hold them
    logp = model.log_proba(frame.drop(columns="target")[:100])
    classes = model.resolve_classes(logp.shape[1], labels)
    model.check_label_output(logp)  # the label output 1 is the class 1.0: they agree
    index = match_labels(labels, classes, column="target").index
    accuracy = np.mean(np.argmax(logp, axis=1) == index)
    assert accuracy == 1.0  # fully grown trees on their own training rows
    as_text = match_labels(labels.astype(int).astype(str), classes).index
    np.testing.assert_array_equal(as_text, index)
