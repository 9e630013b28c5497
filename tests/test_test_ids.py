"""Test ids are the same in every process (issue #28).

pytest-xdist's workers each collect the suite and must find the same ids, and a failing
test can only be rerun by its id when the id does not change. An id that prints an object's
default repr (``<function f at 0x7f...>``) holds a memory address, which differs from one
process to the next; parametrised estimators use :class:`sklearn_mace.utils._testing.RowMean`
and the like instead.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _collect():
    """Start a collection of the whole suite (slow tests too) in a fresh interpreter."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", ""]
    command += ["-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly"]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _ids(process):
    out, _ = process.communicate(timeout=600)
    assert process.returncode == 0, out[-3000:]
    return [line for line in out.splitlines() if "::" in line]


def test_two_collections_give_the_same_ids_and_no_addresses():
    first, second = _collect(), _collect()  # two processes, collecting at the same time
    ids_first, ids_second = _ids(first), _ids(second)
    assert len(ids_first) > 1000  # the whole suite was collected
    with_address = [test_id for test_id in ids_first if ADDRESS.search(test_id)]
    assert not with_address, f"{len(with_address)} ids hold an address, e.g. {with_address[0]}"
    assert ids_first == ids_second
