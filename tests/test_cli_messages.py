"""Library messages speak Python, the CLI speaks flags (issue #26).

The library's errors, warnings and notes name the Python parameter (``allow_unparsed=['age']``),
never a command-line flag a Python user does not have; the CLI rewrites its input errors and
the library warnings it lists into its flags (``--allow-unparsed age``) with one table read off
its parser (``cli._parameter_flags``).
"""

import ast
import inspect
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sklearn_mace
from sklearn_mace.cli import _in_flags, _parameter_flags, build_parser, main
from sklearn_mace.report import (
    AuditInputError,
    audit_algorithm,
    audit_model,
    audit_release,
    load_model,
    read_table,
)
from sklearn_mace.report._kinds._registry import KINDS
from sklearn_mace.report._kinds.algorithm._audit import audit_algorithm_one_run
from tests.audit_data import audit_tables

PACKAGE = Path(sklearn_mace.__file__).parent
FLAG = re.compile(r"--[a-z][a-z0-9-]*")
COMMANDS = ("audit", "audit-model", "audit-algorithm", "demo")


def _all_flags():
    """Every long option of every command, from the parser itself."""
    parser = build_parser()
    return {
        action.option_strings[-1]
        for command in COMMANDS
        for action in _parameter_flags(parser, command).values()
    }


def _flag_literals(source, flags):
    """``(line, flag, text)`` for each string (an f-string as a whole; docstrings and
    command lines to run, ``sklearn-mace …``, excepted) that names one of ``flags``."""
    tree = ast.parse(source)
    skipped = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))  # a docstring (or a bare string statement)
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                p.value
                for p in node.values
                if isinstance(p, ast.Constant) and isinstance(p.value, str)
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if "sklearn-mace " in text:  # a command line shown to run (the demos')
            continue
        found += [(node.lineno, f, text) for f in FLAG.findall(text) if f in flags]
    return found


def test_the_scan_finds_a_flag_in_a_message_and_skips_docstrings_and_command_lines():
    source = '''
def f(k):
    """Docstring naming --targets."""
    print("the same from files: sklearn-mace audit --targets 2")
    raise ValueError(f"--targets {k} is too large")
'''
    assert [(line, flag) for line, flag, _ in _flag_literals(source, {"--targets"})] == [
        (5, "--targets")
    ]


def _command_line_module(path):
    """The command line's own modules, which speak in flags: ``cli.py``, ``__main__.py``,
    the shared options (``report/_arguments.py``) and each kind's ``_cli.py``."""
    return path.name in ("cli.py", "__main__.py", "_arguments.py", "_cli.py")


def test_no_library_message_names_a_command_line_flag():
    flags = _all_flags()
    assert {"--allow-unparsed", "--targets", "--shadow-estimator", "--columns"} <= flags
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if _command_line_module(path):
            continue
        for line, flag, text in _flag_literals(path.read_text(encoding="utf-8"), flags):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {flag} in {text[:80]!r}")
    assert not found, "library messages name CLI flags:\n" + "\n".join(found)


def test_the_exceptions_name_python_parameters_and_flags_that_exist():
    parameters = set()
    for function in (
        audit_release,
        audit_model,
        audit_algorithm,
        audit_algorithm_one_run,
        load_model,
        read_table,
    ):
        parameters |= set(inspect.signature(function).parameters)
    parser = build_parser()
    dests = set().union(*(_parameter_flags(parser, c) for c in COMMANDS))
    renamed = {p: d for kind in KINDS for p, d in kind.command.renamed.items()}
    assert len(renamed) >= 8  # the kinds name their exceptions, or this checks nothing
    for parameter, dest in renamed.items():
        assert parameter.split("=")[0] in parameters, parameter
        assert dest in dests, dest


@pytest.mark.parametrize(
    "command, message, expected",
    [
        (
            "audit",
            "Write them as plain numbers, or pass allow_unparsed=['age', 'bmi'] to audit them",
            "Write them as plain numbers, or pass --allow-unparsed age --allow-unparsed bmi "
            "to audit them",
        ),
        (
            "audit",
            "at most 4 are audited (max_columns=). Choose with columns=, or raise max_columns=.",
            "at most 4 are audited (--max-columns). Choose with --columns, or raise --max-columns.",
        ),
        ("audit", "need decimal=','; a wrong", "need --decimal ,; a wrong"),
        (
            "audit",
            "group_by='site' has 40 distinct values",
            "--group-by site has 40 distinct values",
        ),
        ("audit", "pass drop_overlapping_records=True to", "pass --drop-overlapping-records to"),
        ("audit", "Pass id_columns=[] to keep it.", "Pass --keep-id-columns to keep it."),
        ("audit-algorithm", "targets=50 asks for more", "--targets 50 asks for more"),
        ("audit-algorithm", "n_canaries=5 must be", "--canaries 5 must be"),
        ("audit-model", "need one (shadow_estimators=).", "need one (--shadow-estimator)."),
        ("audit-model", "with classes=['A', 'B', ...], or", "with --classes A,B,..., or"),
        ("audit-model", "above 1 kB (max_skops_bytes=1000)", "above 1 kB (--max-skops-size 1000)"),
        ("audit-model", "with trust_pickle=True, a pickle", "with --trust-pickle, a pickle"),
        # not rewritten: a value that is no switch's, a parameter without a flag in this
        # command, an estimator's repr, a user's NAME=PATH
        ("audit", "force_low_accuracy=False", "force_low_accuracy=False"),
        ("audit", "drop_overlapping_records=False", "drop_overlapping_records=False"),
        ("audit", "RandomForestClassifier(n_jobs=2)", "RandomForestClassifier(n_jobs=2)"),
        ("audit-model", "label=members.csv", "label=members.csv"),
    ],
)
def test_the_cli_rewrites_python_parameters_into_its_flags(command, message, expected):
    assert _in_flags(message, _parameter_flags(build_parser(), command)) == expected


def _exit2(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_unit_string_column_names_allow_unparsed_in_python_and_its_flag_on_the_cli(
    tmp_path, capsys
):
    members, non_members, _ = audit_tables()
    copy = members.assign(age=[f"{v:.2f} cm" for v in members["age"]])
    with pytest.raises(AuditInputError) as info:
        audit_release(members, non_members, {"copy": copy}, disclosure=False, verbose=False)
    assert "allow_unparsed=['age']" in str(info.value) and "--" not in str(info.value)
    paths = {}
    for name, frame in {"members": members, "non-members": non_members, "copy": copy}.items():
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    argv = ["audit", "--members", str(paths["members"]), "--non-members"]
    argv += [str(paths["non-members"]), "--synthetic", f"copy={paths['copy']}"]
    err = _exit2(capsys, [*argv, "--out", str(tmp_path / "out"), "--quiet", "--no-disclosure"])
    assert "pass --allow-unparsed age to audit them" in err and "allow_unparsed" not in err
    assert not (tmp_path / "out").exists()


def test_too_many_targets_name_targets_in_python_and_its_flag_on_the_cli(tmp_path, capsys):
    rng = np.random.default_rng(0)
    population = pd.DataFrame(
        {"colour": rng.choice(["red", "green", "blue"], 40), "size": rng.integers(0, 4, 40)}
    )
    with pytest.raises(AuditInputError, match=r"^targets=50 asks for more targets"):
        audit_algorithm(["dp-histogram"], population, targets=50, n_runs=10, verbose=False)
    path = tmp_path / "population.csv"
    population.to_csv(path, index=False)
    argv = ["audit-algorithm", "--population", str(path), "--recipe", "dp-histogram"]
    argv += ["--targets", "50", "--n-runs", "10", "--out", str(tmp_path / "out"), "--quiet"]
    err = _exit2(capsys, argv)
    assert "error: --targets 50 asks for more targets than the population can spare" in err
    assert not (tmp_path / "out").exists()
