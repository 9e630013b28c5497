"""The kinds of audit are units: each folder under ``report/_kinds/`` is one kind, listed once."""

from pathlib import Path

import pytest

from sklearn_mace.report._kinds import _registry
from sklearn_mace.report._kinds._kind import Kind

KINDS_DIR = Path(_registry.__file__).parent


def test_every_kind_folder_is_registered_once():
    folders = sorted(p.name for p in KINDS_DIR.iterdir() if (p / "__init__.py").exists())
    assert len(_registry.KINDS) == len(folders) == 3
    assert all(isinstance(kind, Kind) for kind in _registry.KINDS)
    assert len({kind.name for kind in _registry.KINDS}) == 3


def test_kind_named_finds_each_and_refuses_others():
    for kind in _registry.KINDS:
        assert _registry.kind_named(kind.name) is kind
    with pytest.raises(ValueError, match="no kind of audit is called 'table'"):
        _registry.kind_named("table")
