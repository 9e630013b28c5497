"""``device=`` on the three audits and ``--device`` on their commands (issue #28 item 2).

The value reaches every kernel pass that takes one (recorded by the passes themselves),
changes nothing computed on the CPU (summary.csv byte for byte), and a device the machine
lacks is an input error before any work: ``device=`` in Python, ``--device`` on the command
line (exit 2, nothing written). CUDA is hidden where a test needs its absence, so the tests
mean the same on a GPU machine.
"""

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

from sklearn_mace.cli import main
from sklearn_mace.estimation import KDEAdvantageEstimator
from sklearn_mace.queries import (
    DOMIASQuery,
    GANLeaksQuery,
    MonteCarloQuery,
    NearestSyntheticDistance,
)
from sklearn_mace.report import AuditInputError, audit_algorithm, audit_model, audit_release
from sklearn_mace.report._engine import check_device
from sklearn_mace.report._kinds.algorithm import _audit as _algorithm
from sklearn_mace.report._kinds.model import _audit as _model
from sklearn_mace.report._kinds.model import _demo as _model_demo
from sklearn_mace.report._kinds.release import _audit as _release
from sklearn_mace.report._kinds.release import _demo as _release_demo
from sklearn_mace.report._output import write_csv
from tests.audit_data import audit_tables

#: the kernel passes of the release audit that take a device, and the model audit's one
RELEASE_PASSES = (
    NearestSyntheticDistance,
    KDEAdvantageEstimator,
    DOMIASQuery,
    MonteCarloQuery,
    GANLeaksQuery,
)
NO_CUDA = pytest.mark.skipif(
    torch.cuda.is_available(), reason="'auto' is CUDA here: the default is not the CPU"
)


class Stop(Exception):
    """Raised by a stand-in audit once it has recorded its keywords."""


@pytest.fixture
def no_cuda(monkeypatch):
    """A machine without CUDA, whatever this one has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture
def passes(monkeypatch):
    """Record ``(class, device)`` of every fit of the release and model audits' passes."""
    seen = []
    for cls in RELEASE_PASSES:
        fit = cls.fit

        def recording(self, *args, _fit=fit, **kwargs):
            seen.append((type(self).__name__, self.device))
            return _fit(self, *args, **kwargs)

        monkeypatch.setattr(cls, "fit", recording)
    return seen


def _iris():
    table = load_iris(as_frame=True).frame.drop_duplicates().sample(frac=1, random_state=0)
    members, non_members = table.iloc[:75], table.iloc[75:]
    tree = DecisionTreeClassifier(random_state=0)
    tree.fit(members.drop(columns="target"), members["target"])
    return {"tree": tree}, members, non_members


def _summary_bytes(result, path):
    write_csv(result.summary, path)
    return path.read_bytes()


# ---------------------------------------------------------------------------- the check
@pytest.mark.parametrize("device", ["auto", "cpu", torch.device("cpu")])
def test_check_device_returns_what_it_accepts(device):
    assert check_device(device) is device


@pytest.mark.parametrize(
    "device, words",
    [
        ("cuda", "device='cuda' was requested but CUDA is not available"),
        ("cuda:0", "device='cuda:0' was requested but CUDA is not available"),
        ("gpu", "device must be 'auto', 'cpu' or 'cuda[:N]'; got 'gpu'"),
        (3, "device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got 3"),
    ],
)
def test_check_device_names_device_and_what_is_allowed(no_cuda, device, words):
    with pytest.raises(AuditInputError, match="device") as info:
        check_device(device)
    assert words in str(info.value) and "--" not in str(info.value)


def test_check_device_refuses_a_gpu_index_the_machine_lacks(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert check_device("cuda:1") == "cuda:1"
    assert check_device("cuda") == "cuda"
    with pytest.raises(AuditInputError, match=r"device='cuda:2' names a GPU .* it has 2"):
        check_device("cuda:2")


@pytest.mark.parametrize(
    "audit",
    [
        lambda: audit_release(*audit_tables(), disclosure=False, verbose=False, device="cuda"),
        lambda: audit_model(*_iris(), label="target", verbose=False, device="cuda"),
        lambda: audit_algorithm(["dp-histogram"], n_runs=10, verbose=False, device="cuda"),
    ],
    ids=["release", "model", "algorithm"],
)
def test_each_audit_refuses_cuda_without_a_gpu_before_any_work(no_cuda, passes, audit):
    with pytest.raises(AuditInputError, match="device='cuda' was requested"):
        audit()
    assert passes == []  # nothing ran


# ------------------------------------------------------------------- where the value goes
def test_the_release_audit_runs_every_kernel_pass_on_its_device(passes):
    members, non_members, releases = audit_tables()
    audit_release(
        members, non_members, releases["leaky"], disclosure=False, verbose=False, device="cpu"
    )
    assert {name for name, _ in passes} == {cls.__name__ for cls in RELEASE_PASSES}
    assert {device for _, device in passes} == {"cpu"}
    # the distances and MACE: the shared step, and once per figure point
    n_points = 1 + len(_release.SIZE_FRACTIONS)
    assert [n for n, _ in passes].count("KDEAdvantageEstimator") == n_points


def test_the_model_audit_fits_mace_on_its_device(passes):
    device = torch.device("cpu")
    audit_model(*_iris(), label="target", verbose=False, device=device)
    assert passes == [("KDEAdvantageEstimator", device)]


def test_the_algorithm_audit_carries_its_device_in_its_inputs(monkeypatch):
    seen = []

    def stop(engine, subject, seed):
        seen.append(engine.inputs.device)
        raise Stop

    monkeypatch.setattr(_algorithm, "shadow_runs", stop)
    with pytest.raises(Stop):
        audit_algorithm(["dp-histogram"], n_runs=10, verbose=False, device="cpu")
    assert seen == ["cpu"]


# ----------------------------------------------------------------- nothing else changes
@NO_CUDA
def test_device_cpu_gives_the_default_release_summary_byte_for_byte(tmp_path):
    members, non_members, releases = audit_tables()
    runs = [
        audit_release(members, non_members, releases, disclosure=False, verbose=False, **kw)
        for kw in ({}, {"device": "cpu"})
    ]
    default, cpu = (_summary_bytes(r, tmp_path / f"{i}.csv") for i, r in enumerate(runs))
    rows = 2 * (len(_release.ANALYSES) + len(_release.SIZE_FRACTIONS))  # 2 releases
    assert default == cpu and len(default.splitlines()) == 1 + rows


@NO_CUDA
def test_device_cpu_gives_the_default_model_summary_byte_for_byte(tmp_path):
    runs = [
        audit_model(*_iris(), label="target", verbose=False, **kw) for kw in ({}, {"device": "cpu"})
    ]
    default, cpu = (_summary_bytes(r, tmp_path / f"{i}.csv") for i, r in enumerate(runs))
    assert default == cpu and len(default.splitlines()) == 1 + 4


# ------------------------------------------------------------------------ command line
def _exit2(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def _release_files(folder):
    members, non_members, releases = audit_tables()
    paths = {"members": folder / "members.csv", "non-members": folder / "non_members.csv"}
    members.to_csv(paths["members"], index=False)
    non_members.to_csv(paths["non-members"], index=False)
    paths["leaky"] = folder / "leaky.csv"
    releases["leaky"].to_csv(paths["leaky"], index=False)
    return ["--members", str(paths["members"]), "--non-members", str(paths["non-members"])] + [
        "--synthetic",
        f"leaky={paths['leaky']}",
    ]


def _model_files(folder):
    import skops.io as sio

    models, members, non_members = _iris()
    members.to_csv(folder / "members.csv", index=False)
    non_members.to_csv(folder / "non_members.csv", index=False)
    sio.dump(models["tree"], folder / "tree.skops")
    return ["--model", str(folder / "tree.skops"), "--members", str(folder / "members.csv")] + [
        "--non-members",
        str(folder / "non_members.csv"),
        "--label",
        "target",
    ]


def _command(kind, folder):
    """The argv of ``kind``'s command on small inputs written under ``folder``."""
    if kind == "audit":
        return ["audit", *_release_files(folder)]
    if kind == "audit-model":
        pytest.importorskip("skops")
        return ["audit-model", *_model_files(folder)]
    if kind == "audit-algorithm":
        return ["audit-algorithm", "--recipe", "dp-histogram", "--n-runs", "10"]
    return [kind]  # a demo: "demo", or a command without inputs


@pytest.mark.parametrize(
    "command", ["audit", "audit-model", "audit-algorithm", "demo", "demo-audit-model"]
)
def test_cuda_without_a_gpu_is_exit_2_naming_the_flag_and_writes_nothing(
    tmp_path, capsys, no_cuda, passes, command
):
    argv = ["audit-model"] if command == "demo-audit-model" else _command(command, tmp_path)
    if command == "demo-audit-model":
        pytest.importorskip("skl2onnx")
    out = tmp_path / "out"
    err = _exit2(capsys, [*argv, "--device", "cuda", "--out", str(out), "--quiet"])
    assert "--device cuda was requested but CUDA is not available" in err
    assert "device=" not in err
    assert not out.exists() and passes == []


@pytest.mark.parametrize("value", ["gpu", "cuda:x", "CPU", ""])
def test_a_device_that_is_no_device_is_exit_2_naming_the_flag(capsys, value):
    err = _exit2(capsys, ["audit", "--device", value])
    assert f"--device must be auto, cpu, cuda or cuda:N; got {value!r}" in err


def _recording(monkeypatch, module, name):
    """Replace ``module.name`` (an audit or a demo) by a stand-in recording its keywords."""
    seen = {}

    def record(*args, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(module, name, record)
    return seen


@pytest.mark.parametrize(
    "command, module, name",
    [
        ("audit", _release, "audit_release"),
        ("audit-model", _model, "audit_model"),
        ("audit-algorithm", _algorithm, "audit_algorithm"),
        ("audit-algorithm-demo", _algorithm, "audit_algorithm"),
        ("demo", _release_demo, "audit_demo"),
        ("audit-model-demo", _model_demo, "audit_demo"),
    ],
)
@pytest.mark.parametrize("device", ["cpu", None])
def test_every_command_passes_its_device_on(tmp_path, monkeypatch, command, module, name, device):
    if command == "audit-model-demo":
        pytest.importorskip("skl2onnx")
    argv = [command.removesuffix("-demo")]
    if not command.endswith("demo"):
        argv = _command(command, tmp_path)
    seen = _recording(monkeypatch, module, name)
    given = [] if device is None else ["--device", device]
    with pytest.raises(Stop):
        main([*argv, *given, "--out", str(tmp_path / "out"), "--quiet"])
    assert seen["device"] == (device or "auto")


def test_the_demo_refusal_names_device_among_what_it_takes(capsys):
    err = _exit2(capsys, ["audit", "--prior", "0.3"])
    assert "takes only --out, --random-state, --device and --quiet" in err


def test_the_device_changes_no_number_of_the_command_line_report(tmp_path, capsys):
    """--device cpu and no --device: the same summary.csv (on the CPU)."""
    if torch.cuda.is_available():
        pytest.skip("'auto' is CUDA here")
    argv = ["audit", *_release_files(tmp_path), "--no-disclosure", "--quiet"]
    main([*argv, "--out", str(tmp_path / "default")])
    main([*argv, "--out", str(tmp_path / "cpu"), "--device", "cpu"])
    capsys.readouterr()
    default = (tmp_path / "default" / "summary.csv").read_bytes()
    assert default == (tmp_path / "cpu" / "summary.csv").read_bytes()
    assert pd.read_csv(tmp_path / "cpu" / "summary.csv")["status"].eq("ok").all()
    assert np.isfinite(pd.read_csv(tmp_path / "cpu" / "summary.csv")["epsilon_lower_bound"]).all()
