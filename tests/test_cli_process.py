"""What the command line sets up for its process before a command runs (issue #28).

CUDA's JIT cache: with a GPU, the driver stores the kernels it compiles in
``~/.nv/ComputeCache`` unless ``CUDA_CACHE_PATH`` points elsewhere. No GPU is needed to test
where the CLI sends it: a child process with a fake HOME runs the command line as a CUDA
build of torch would (``torch.version.cuda`` set), with the command itself replaced by a
stand-in that writes into the cache folder, as the driver would, and reports where that
was. The real command's run under a fake HOME is
``tests/report/release/test_sweep_audit.py::test_nothing_is_written_outside_out``.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CODE = """
import os, sys, types
from pathlib import Path
import torch
from sklearn_mace import cli

torch.version.cuda = torch.version.cuda or "13.0"  # a CUDA build, as on a GPU machine

def run_kind(kind, args):  # the command line's one path, for every kind
    folder = Path(os.environ["CUDA_CACHE_PATH"])
    (folder / "ComputeCache").mkdir(parents=True, exist_ok=True)
    (folder / "ComputeCache" / "index").write_text("a kernel")  # what the driver writes
    Path(args.out).mkdir()
    (Path(args.out) / "report.html").write_text("report")
    print(folder)
    return types.SimpleNamespace(partial=False)

cli.run_kind = run_kind
sys.exit(cli.main(["audit", "--members", "m.csv", "--non-members", "n.csv",
                   "--synthetic", "s.csv", "--out", "out", "--quiet"]))
"""


def _tree(root):
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _run(root, code=CODE, **extra_env):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_CACHE_PATH", "MPLCONFIGDIR")}
    env.update(HOME=str(root / "home"), TMPDIR=str(root / "tmp"), PYTHONPATH=str(ROOT))
    env.update(extra_env)
    for folder in ("home", "tmp", "work"):
        (root / folder).mkdir(exist_ok=True)
    before = _tree(root)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1]), _tree(root) - before


def test_cuda_cache_goes_to_a_temporary_folder_removed_at_exit(tmp_path):
    cache, written = _run(tmp_path)
    assert cache.parent == tmp_path / "tmp"  # under TMPDIR, not HOME
    assert cache.name.startswith("sklearn-mace-cuda-")
    assert not cache.exists()  # removed at exit, with what the "driver" wrote
    assert written == {"work/out", "work/out/report.html"}


def test_a_cpu_build_of_torch_gets_no_cuda_cache(tmp_path):
    """Nothing to cache without CUDA: the variable stays unset and no folder is made."""
    code = (
        CODE.replace('torch.version.cuda or "13.0"', "None")
        .replace(
            'folder = Path(os.environ["CUDA_CACHE_PATH"])',
            'print(os.environ.get("CUDA_CACHE_PATH", "unset")); folder = Path("unused")',
        )
        .replace("    print(folder)\n", "")
    )
    printed, written = _run(tmp_path, code=code)
    assert str(printed) == "unset"
    assert {name for name in written if not name.startswith("work/")} == set()


def test_a_cuda_cache_the_user_chose_is_kept(tmp_path):
    chosen = tmp_path / "my-cache"
    cache, written = _run(tmp_path, CUDA_CACHE_PATH=str(chosen))
    assert cache == chosen
    assert (chosen / "ComputeCache" / "index").read_text() == "a kernel"
    assert "my-cache/ComputeCache/index" in written
