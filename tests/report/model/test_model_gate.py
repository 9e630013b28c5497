"""The model-output gate of issue #25 (item 3): which output holds the probabilities, which
classes its columns are, a model that does not predict the labels, and skops zip bombs.

The cases are those of the issue, built here: an ONNX forest whose probability output is named
``output`` beside a 64-wide float ``embedding``; an ONNX model with labels 1..10 on tables
lacking label 10; a model fitted on other label codes; and a skops archive declaring far more
than its size (a deflated array of zeros, a member whose header lies about its size).
"""

import os
import struct
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, audit_model
from sklearn_mace.report._io import AuditInputWarning
from sklearn_mace.report._kinds.model._inputs import prepare_model_records
from sklearn_mace.report._kinds.model._io import load_model
from sklearn_mace.report._kinds.model._queries import check_train_accuracy, majority_rate
from sklearn_mace.report._kinds.model._skops_policy import SKOPS_RATIO_FLOOR, check_skops_archive

sio = pytest.importorskip("skops.io")
skl2onnx = pytest.importorskip("skl2onnx")
pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
N_MEMBERS = 90


# ------------------------------------------------------------------ ONNX builders
def _with_embedding(model, n_features, n_classes, proba="probabilities", rename="output"):
    """The skl2onnx graph with its probability output renamed (through an Identity; kept as
    it is when ``rename`` is None) and a second float output, a 64-wide linear embedding of
    the inputs, after it."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    W = np.random.default_rng(0).standard_normal((n_features, 64)).astype(np.float32)
    graph.initializer.append(numpy_helper.from_array(W, "W_embedding"))
    graph.node.append(helper.make_node("MatMul", [graph.input[0].name, "W_embedding"], ["emb"]))
    if rename is not None:
        graph.node.append(helper.make_node("Identity", [proba], [rename]))
        kept = [o for o in graph.output if o.name != proba]
        del graph.output[:]
        graph.output.extend(kept)
        renamed = helper.make_tensor_value_info(rename, TensorProto.FLOAT, [None, n_classes])
        graph.output.append(renamed)
    graph.output.append(helper.make_tensor_value_info("emb", TensorProto.FLOAT, [None, 64]))
    return model


@pytest.fixture(scope="module")
def two_outputs(wine, tmp_path_factory):
    """The issue's model: an overfit forest whose probability output is named ``output``,
    followed by a 64-wide float embedding (``emb``). A third of the labels are redrawn at
    random, so that the fully grown forest memorises its members' labels (and leaks)."""
    frame, X, y = wine
    rng = np.random.default_rng(0)
    y = np.where(rng.random(len(y)) < 1 / 3, rng.integers(0, 3, len(y)), y)
    frame = frame.assign(target=y)
    folder = tmp_path_factory.mktemp("gate")
    forest = RandomForestClassifier(30, random_state=0).fit(X[:N_MEMBERS], y[:N_MEMBERS])
    exported = skl2onnx.to_onnx(forest, X[:1], options={"zipmap": False})
    path = folder / "two.onnx"
    path.write_bytes(_with_embedding(exported, X.shape[1], 3).SerializeToString())
    return path, forest, frame


def _logits_onnx(path, n_features, n_classes):
    """A torch-style export: raw logits, no class labels anywhere in the graph."""
    from onnx import TensorProto, helper, numpy_helper

    W = np.random.default_rng(1).standard_normal((n_features, n_classes)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["logits"])],
        "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, n_features])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [None, n_classes])],
        [numpy_helper.from_array(W, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return path


# ------------------------------------------------------------------ 1. which output
def test_two_float_outputs_and_none_named_are_refused_listing_them(two_outputs):
    path, _, _ = two_outputs
    with pytest.raises(AuditInputError) as info:
        load_model(path)
    message = str(info.value)
    assert "none of them is identifiable as the class probabilities" in message
    assert "'output' (tensor(float), shape [None, 3])" in message
    assert "'emb' (tensor(float), shape [None, 64])" in message
    assert "probability_output='NAME'" in message and "--probability-output" not in message
    with pytest.raises(AuditInputError, match="no float or ZipMap output named 'label'"):
        load_model(path, probability_output="label")


def test_the_named_probability_output_gives_the_forest_and_its_classes(two_outputs):
    """Picked by name, the output is the forest's probabilities, and its classes come from
    the classifier node the Identity reads (classlabels_int64s), not from the labels."""
    path, forest, frame = two_outputs
    model = load_model(path, probability_output="output")
    np.testing.assert_array_equal(model.classes_, forest.classes_)
    assert model.classes_source == "the class labels of the ONNX graph"
    X = frame.drop(columns="target")[:20]
    expected = forest.predict_proba(X.to_numpy(dtype=np.float32))
    np.testing.assert_allclose(np.exp(model.log_proba(X)), expected, atol=1e-5)
    # the embedding, picked by mistake: 64 columns the labels cannot name -> refused
    wrong = load_model(path, probability_output="emb")
    with pytest.raises(
        AuditInputError, match=r"gives 64 class scores.*classes=\['A', 'B', \.\.\.\]"
    ):
        wrong.resolve_classes(64, frame["target"].to_numpy())


def test_a_probability_output_named_as_such_is_chosen_beside_an_embedding(wine, tmp_path):
    frame, X, y = wine
    forest = RandomForestClassifier(5, random_state=0).fit(X, y)
    exported = skl2onnx.to_onnx(forest, X[:1], options={"zipmap": False})
    named = _with_embedding(exported, X.shape[1], 3, rename="output_probability")
    (tmp_path / "named.onnx").write_bytes(named.SerializeToString())
    assert load_model(tmp_path / "named.onnx")._proba_output == "output_probability"
    # unnamed, but the probability output of the classifier operator itself
    direct = skl2onnx.to_onnx(forest, X[:1], options={"zipmap": False})
    direct.graph.node[-1].output[1] = "scores"
    direct.graph.output[1].name = "scores"
    direct = _with_embedding(direct, X.shape[1], 3, rename=None)
    (tmp_path / "direct.onnx").write_bytes(direct.SerializeToString())
    assert [o.name for o in direct.graph.output] == ["label", "scores", "emb"]
    assert load_model(tmp_path / "direct.onnx")._proba_output == "scores"
    # the ZipMap (skl2onnx's default) is the probabilities whatever else is there
    zipmapped = _with_embedding(skl2onnx.to_onnx(forest, X[:1]), X.shape[1], 3)
    (tmp_path / "zip.onnx").write_bytes(zipmapped.SerializeToString())
    assert load_model(tmp_path / "zip.onnx")._proba_output == "output_probability"


def test_the_cli_exits_2_listing_the_outputs_and_audits_the_named_one(two_outputs, tmp_path):
    path, forest, frame = two_outputs
    frame[:N_MEMBERS].to_csv(tmp_path / "members.csv", index=False)
    frame[N_MEMBERS:].to_csv(tmp_path / "non.csv", index=False)
    argv = ["audit-model", "--model", str(path), "--members", str(tmp_path / "members.csv")]
    argv += ["--non-members", str(tmp_path / "non.csv"), "--label", "target", "--quiet"]
    with pytest.raises(SystemExit) as info:
        main([*argv, "--out", str(tmp_path / "a")])
    assert info.value.code == 2 and not (tmp_path / "a").exists()
    code = main([*argv, "--out", str(tmp_path / "b"), "--probability-output", "output"])
    assert code == 0
    summary = pd.read_csv(tmp_path / "b" / "summary.csv")
    # the forest memorised its members' labels: its probabilities certify a leak (the
    # embedding taken in their place gave train accuracy 0.07 and a green card)
    assert (summary["train_accuracy"] == 1.0).all() and (summary["test_accuracy"] < 0.8).all()
    assert summary["epsilon_lower_bound"].max() > 0.0, summary
    # where the classes came from is said, in summary.csv and on the card
    assert (summary["classes_from"] == "the class labels of the ONNX graph").all()
    page = (tmp_path / "b" / "report.html").read_text(encoding="utf-8")
    assert "classes from the class labels of the ONNX graph" in page


# ------------------------------------------------------------------ 2. classes from the model
@pytest.fixture(scope="module")
def digits_one_to_ten():
    from sklearn.datasets import load_digits

    frame = load_digits(as_frame=True).frame.sample(frac=1.0, random_state=0)
    frame["target"] += 1  # labels 1..10
    frame = frame.reset_index(drop=True)
    X = frame.drop(columns="target").to_numpy(dtype=np.float32)
    return frame, X


def test_onnx_labels_one_to_ten_keep_their_classes_on_tables_lacking_ten(
    digits_one_to_ten, tmp_path
):
    """Before: classes silently 0..9, train accuracy 0.000, and the audit went on."""
    frame, X = digits_one_to_ten
    forest = RandomForestClassifier(20, random_state=0).fit(X[:600], frame["target"][:600])
    exported = skl2onnx.to_onnx(forest, X[:1], options={"zipmap": False})
    (tmp_path / "digits.onnx").write_bytes(exported.SerializeToString())
    model = load_model(tmp_path / "digits.onnx")
    np.testing.assert_array_equal(model.classes_, np.arange(1, 11))
    tables = {
        "members": frame[:600][frame["target"][:600] != 10],
        "non-members": frame[600:900][frame["target"][600:900] != 10],
    }
    features = [c for c in frame.columns if c != "target"]
    kept, columns, _ = prepare_model_records({"m": model}, tables, features, "target")
    members = kept["members"]
    predicted = model.classes_[np.argmax(model.log_proba(members[columns["m"]]), axis=1)]
    assert np.mean(predicted == members["target"].to_numpy()) == 1.0  # its own training rows


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_unnamed_classes_are_never_assumed_zero_to_k(digits_one_to_ten, tmp_path):
    """A logits graph names no classes: with 9 labels on the tables and 10 columns it is
    refused (naming classes=), where 0..9 used to be assumed; classes= states them."""
    frame, X = digits_one_to_ten
    path = _logits_onnx(tmp_path / "net.onnx", X.shape[1], 10)
    lacking = frame[frame["target"] != 10]["target"].to_numpy()
    with pytest.raises(AuditInputError, match=r"never assumed to be 0 \.\. 9.*classes=\["):
        load_model(path).resolve_classes(10, lacking)
    stated = load_model(path, classes=range(1, 11))
    np.testing.assert_array_equal(stated.resolve_classes(10, lacking), np.arange(1, 11))
    # as many labels as columns: the sorted labels, with a warning saying so
    with pytest.warns(AuditInputWarning, match="does not name its classes"):
        taken = load_model(path).resolve_classes(10, frame["target"].to_numpy())
    np.testing.assert_array_equal(taken, np.arange(1, 11))
    # classes= that contradict the graph's own labels are refused
    exported = skl2onnx.to_onnx(
        LogisticRegression(max_iter=50).fit(X[:200], frame["target"][:200] % 2 + 3),
        X[:1],
        options={"zipmap": False},
    )
    (tmp_path / "lr.onnx").write_bytes(exported.SerializeToString())
    with pytest.raises(AuditInputError, match="disagrees with the classes"):
        load_model(tmp_path / "lr.onnx", classes=[0, 1])
    np.testing.assert_array_equal(load_model(tmp_path / "lr.onnx").classes_, [3, 4])


# ------------------------------------------------------------------ 3. the accuracy gate
def test_majority_rate_and_the_gate_boundary():
    assert majority_rate([2, 2, 2.0, "1"]) == 0.75
    with pytest.raises(AuditInputError, match="does not predict these labels"):
        check_train_accuracy("m", np.array([1, 1, 1, 0.0]), [2, 2, 2, 1])  # 0.75 = majority
    assert check_train_accuracy("m", np.ones(4), [2, 2, 2, 1]) is None
    with pytest.warns(AuditInputWarning, match="audited anyway"):
        assert "force_low_accuracy" in check_train_accuracy(
            "m", np.zeros(4), [2, 2, 2, 1], force=True
        )


@pytest.mark.parametrize("case", ["shifted labels", "majority class only"])
def test_a_model_that_does_not_predict_the_labels_stops_the_audit(wine, case):
    frame, X, y = wine
    members, non_members = frame[:N_MEMBERS], frame[N_MEMBERS:]
    features = members.drop(columns="target")
    if case == "shifted labels":  # label coding of the tables differs from the model's
        model = RandomForestClassifier(10, random_state=0).fit(features, (y[:N_MEMBERS] + 1) % 3)
    else:
        model = DummyClassifier(strategy="most_frequent").fit(features, y[:N_MEMBERS])
    with pytest.raises(
        AuditInputError,
        match=r"does not predict these labels — wrong output, label coding or column order\?",
    ):
        audit_model({"m": model}, members, non_members, label="target", verbose=False)


def test_force_low_accuracy_audits_it_with_a_note(wine):
    frame, X, y = wine
    members, non_members = frame[:N_MEMBERS], frame[N_MEMBERS:]
    model = DummyClassifier(strategy="most_frequent").fit(
        members.drop(columns="target"), y[:N_MEMBERS]
    )
    with pytest.warns(AuditInputWarning, match="audited anyway"):
        result = audit_model(
            {"m": model},
            members,
            non_members,
            label="target",
            force_low_accuracy=True,
            verbose=False,
        )
    assert any("does not predict these labels" in note for note in result.notes)


def test_the_cli_gate_exits_2_and_force_low_accuracy_is_an_option(wine, tmp_path, capsys):
    frame, X, y = wine
    forest = RandomForestClassifier(10, random_state=0).fit(X[:N_MEMBERS], y[:N_MEMBERS])
    sio.dump(forest, tmp_path / "forest.skops")
    shifted = frame.assign(target=(frame["target"] + 1) % 3)
    shifted[:N_MEMBERS].to_csv(tmp_path / "members.csv", index=False)
    shifted[N_MEMBERS:].to_csv(tmp_path / "non.csv", index=False)
    argv = ["audit-model", "--model", str(tmp_path / "forest.skops"), "--label", "target"]
    argv += ["--members", str(tmp_path / "members.csv"), "--quiet"]
    argv += ["--non-members", str(tmp_path / "non.csv"), "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "does not predict these labels — wrong output" in err
    assert "--force-low-accuracy" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as info:  # ONNX-only options meet a skops model
        main([*argv, "--probability-output", "probabilities"])
    assert info.value.code == 2 and "ONNX models only" in capsys.readouterr().err


# ------------------------------------------------------------------ 4. skops sizes
def _add_zeros(path, n_bytes, name="bomb.npy"):
    """Append a deflated member of ``n_bytes`` zeros, written a MiB at a time."""
    chunk = bytes(2**20)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open(name, "w", force_zip64=True) as member:
            for start in range(0, n_bytes, len(chunk)):
                member.write(chunk[: min(len(chunk), n_bytes - start)])
    return path


@pytest.fixture
def forest_skops(wine, tmp_path):
    frame, X, y = wine
    forest = RandomForestClassifier(5, random_state=0).fit(X, y)
    sio.dump(forest, tmp_path / "forest.skops", compression=zipfile.ZIP_DEFLATED)
    return tmp_path / "forest.skops"


def test_a_skops_zip_bomb_is_refused_before_anything_is_inflated(forest_skops, monkeypatch):
    declared = SKOPS_RATIO_FLOOR + 2**20  # 65 MiB of zeros deflate to ~65 KiB
    _add_zeros(forest_skops, declared)
    ratio = declared / os.path.getsize(forest_skops)
    assert ratio > 100  # a bomb by the default ratio cap
    inflated = []
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *a, **k: inflated.append(a))
    with pytest.raises(AuditInputError, match=r"declares 65\.\d MiB once inflated") as info:
        load_model(forest_skops)
    assert "zip bomb" in str(info.value) and "max_skops_bytes" in str(info.value)
    assert inflated == []  # refused on the declared sizes alone
    monkeypatch.undo()
    # trusted and allowed explicitly: the archive's sizes pass, skops loads the forest
    assert load_model(forest_skops, max_skops_bytes=2**30).classes_.tolist() == [0, 1, 2]


def test_the_absolute_cap_is_a_parameter(forest_skops):
    size = check_skops_archive(forest_skops)
    assert size > os.path.getsize(forest_skops)  # deflated: declared above the file size
    with pytest.raises(AuditInputError, match="above 1.0 KiB \\(max_skops_bytes=1024\\)"):
        load_model(forest_skops, max_skops_bytes=1024)
    with pytest.raises(ValueError, match="max_skops_bytes must be a positive integer"):
        check_skops_archive(forest_skops, max_bytes=0)


def _patch_declared_size(path, name, size):
    """Rewrite the size ``name`` declares (local header and central directory)."""
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    for signature, field, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        at = data.find(signature)
        while at >= 0:
            if data[at + name_at : at + name_at + len(encoded)] == encoded:
                data[at + field : at + field + 4] = struct.pack("<I", size)
            at = data.find(signature, at + 1)
    path.write_bytes(bytes(data))


def test_a_member_that_lies_about_its_size_is_refused(tmp_path):
    path = tmp_path / "liar.skops"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("schema.json", "{}" + " " * 2**20)
    _patch_declared_size(path, "schema.json", 1000)
    assert zipfile.ZipFile(path).getinfo("schema.json").file_size == 1000
    with pytest.raises(AuditInputError, match="Cannot read .* as a skops file"):
        check_skops_archive(path)


# the child's own peak resident memory: VmHWM belongs to its address space (ru_maxrss would
# carry the forking pytest process's peak across exec)
BOMB_CHILD = textwrap.dedent(
    """
    import re, sys, time
    from pathlib import Path
    from sklearn_mace.report import AuditInputError
    from sklearn_mace.report._kinds.model._io import load_model
    start, refused = time.perf_counter(), False
    try:
        load_model(sys.argv[1])
    except AuditInputError as exc:
        refused = "zip bomb" in str(exc)
    status = Path("/proc/self/status").read_text()
    peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) / 1024
    print(refused, time.perf_counter() - start, peak)
    """
)


def _refusal_cost(path):
    """(refused, seconds, peak MiB) of loading ``path`` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    done = subprocess.run(
        [sys.executable, "-c", BOMB_CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=True,
    )
    refused, seconds, peak = done.stdout.split()
    return refused == "True", float(seconds), float(peak)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM (Linux)")
@pytest.mark.parametrize(
    "declared", [pytest.param(256 * 2**20), pytest.param(3200 * 10**6, marks=pytest.mark.slow)]
)
def test_the_zip_bomb_refusal_is_fast_and_small(forest_skops, declared):
    """Issue #25: a 3 MB .skops holding a deflated 3.2 GB array took more than 6 GiB; the
    refusal must take < 60 s and < 500 MiB (the default suite: a 256 MiB array)."""
    _add_zeros(forest_skops, declared)
    assert os.path.getsize(forest_skops) < declared / 500  # a real bomb: zeros deflate ~1000x
    refused, seconds, peak = _refusal_cost(forest_skops)
    assert refused
    assert seconds < 60, seconds
    assert peak < 500, peak  # MiB, the whole interpreter with scikit-learn imported


# ------------------------------------------------------------------ the options
def test_the_gate_options_parse_and_the_demo_refuses_them(tmp_path, capsys):
    from sklearn_mace.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(
        ["audit-model", "--max-skops-size", "4G", "--classes", "1, 2.5,cat", "--force-low-accuracy"]
    )
    assert args.max_skops_size == 4 * 2**30 and args.classes == [1, 2.5, "cat"]
    assert parser.parse_args(["audit-model", "--max-skops-size", "512MiB"]).max_skops_size == 2**29
    for bad in (["--max-skops-size", "0"], ["--max-skops-size", "lots"], ["--classes", "1"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["audit-model", *bad])
        assert "must" in capsys.readouterr().err
    for flag in (["--force-low-accuracy"], ["--probability-output", "p"], ["--classes", "0,1"]):
        with pytest.raises(SystemExit) as info:
            main(["audit-model", "--out", str(tmp_path / "demo"), *flag])
        assert info.value.code == 2 and f"{flag[0]} need input files" in capsys.readouterr().err
