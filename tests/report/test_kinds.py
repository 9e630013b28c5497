"""The kinds of audit are units: each folder under ``report/_kinds/`` is one kind, listed once.

A new kind is its folder and one line of ``_registry.py``: the command line and the common
report modules name no kind (checked on their code), and a toy fourth kind runs through the
command line's one path unchanged.
"""

import ast
import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

import sklearn_mace
from sklearn_mace.report._kinds import _registry
from sklearn_mace.report._kinds._kind import Command, Demo, Kind

KINDS_DIR = Path(_registry.__file__).parent
ROOT = Path(sklearn_mace.__file__).parent


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


# ------------------------------------------------- a new kind: its folder and one registry line
COMMON = [ROOT / "cli.py", *sorted((ROOT / "report").glob("*.py"))]
KIND_WORDS = {kind.name for kind in _registry.KINDS} | {k.command.name for k in _registry.KINDS}
KIND_WORDS |= {k.demo.command.name for k in _registry.KINDS if k.demo.command is not None}


def _docstrings(tree):
    """The docstring nodes of a module, its classes and functions (text, not code)."""
    owners = [tree, *(n for n in ast.walk(tree) if isinstance(n, DEFINITIONS))]
    return {
        id(owner.body[0].value)
        for owner in owners
        if owner.body
        and isinstance(owner.body[0], ast.Expr)
        and isinstance(owner.body[0].value, ast.Constant)
    }


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _code_strings(path):
    """The string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    }


def test_the_checker_sees_a_kind_named_in_code(tmp_path):
    path = tmp_path / "switch.py"
    path.write_text('"""About the release audit."""\nif command == "audit-model":\n    pass\n')
    assert _code_strings(path) & KIND_WORDS == {"audit-model"}


@pytest.mark.parametrize("path", COMMON, ids=lambda p: p.name)
def test_no_common_module_switches_on_a_kind(path):
    """cli.py and the common report modules name no kind and no command in their code: a
    new kind needs no branch there."""
    assert not _code_strings(path) & KIND_WORDS


def test_only_the_registry_and_the_public_exports_import_a_kind():
    """The common modules reach a kind through ``_registry.KINDS`` only (report/__init__.py
    lists the public ``audit_*`` functions, lazily: a kind with a public function adds its
    line there)."""
    kinds = {p.name for p in KINDS_DIR.iterdir() if (p / "__init__.py").exists()}
    for path in COMMON:
        if path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        for kind in kinds:
            assert f"_kinds.{kind}" not in text and f"_kinds import {kind}" not in text, path


def _toy_arguments(parser):
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")


def _toy_audit(args):
    warnings.warn("a toy warning", UserWarning, stacklevel=1)
    return SimpleNamespace(rows=args.rows, partial=args.rows == 0)


def _toy_demo(args, stage):
    (stage / "inputs").mkdir()
    (stage / "inputs" / "toy.csv").write_text("x\n1\n")
    return SimpleNamespace(rows=1, partial=False)


def _toy_write(kind, result, stage, caught):
    (stage / "summary.csv").write_text(f"rows,warnings\n{result.rows},{len(caught)}\n")
    return {"summary": stage / "summary.csv"}


def _toy_print(kind, result, paths, caught, quiet):
    print(f"{kind.name}: {result.rows} rows in {paths['summary']}")


def _toy_kind(out):
    """A fourth kind, as its folder's ``__init__.py`` would export it."""
    return Kind(
        name="table",
        presentation=None,
        command=Command("audit-table", "a toy kind", "A toy kind.", _toy_arguments),
        default_out=out,
        check_arguments=_no_check,
        input_files=_no_files,
        audit_from_arguments=_toy_audit,
        demo=Demo(
            out=out,
            wants=_no_rows,
            intro=_toy_intro,
            run=_toy_demo,
            outro=_toy_outro,
            folders=("inputs",),
            files=("inputs/toy.csv",),
        ),
        writer=_toy_write,
        printer=_toy_print,
    )


def _no_check(args):
    return None


def _no_files(args):
    return []


def _no_rows(args):
    return args.rows is None


def _toy_intro(args):
    return ["the toy demo"]


def _toy_outro(out):
    return [f"rerun: sklearn-mace audit-table --rows 1 --out {out}"]


def test_a_fourth_kind_is_one_registry_line(tmp_path, monkeypatch, capsys):
    """A kind added to ``KINDS`` (its folder's one line) gets its command, the ``--out``
    check, the caught warnings, the staged writing and the exit status, with no change
    elsewhere: a fourth kind touches its folder and ``_registry.py`` (and, for a public
    ``audit_*`` function, its line in ``report/__init__.py``)."""
    from sklearn_mace.cli import main

    out = tmp_path / "toy"
    monkeypatch.setattr(_registry, "KINDS", (*_registry.KINDS, _toy_kind(out)))
    assert main(["audit-table", "--rows", "3"]) == 0
    assert (out / "summary.csv").read_text() == "rows,warnings\n3,1\n"  # the warning caught
    assert json.loads((out / ".sklearn-mace-files.json").read_text())["files"] == ["summary.csv"]
    assert f"table: 3 rows in {out / 'summary.csv'}" in capsys.readouterr().out
    assert main(["audit-table", "--rows", "0"]) == 3  # partial: exit 3
    capsys.readouterr()
    # the demo: its input file staged with the report, then the rerun line
    assert main(["audit-table", "--out", str(tmp_path / "demo")]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "the toy demo" and printed[-1].startswith("rerun: ")
    assert (tmp_path / "demo" / "inputs" / "toy.csv").read_text() == "x\n1\n"
    # the --out check knows the demo's files: a user's file there stops it before any work
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "inputs").mkdir()
    (tmp_path / "user" / "inputs" / "toy.csv").write_text("mine")
    with pytest.raises(SystemExit) as stop:
        main(["audit-table", "--out", str(tmp_path / "user")])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "inputs/toy.csv" in error and "no earlier report wrote" in error
    assert (tmp_path / "user" / "inputs" / "toy.csv").read_text() == "mine"
