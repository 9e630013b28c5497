"""The audit of trained classifiers (``audit_model``, ``sklearn-mace audit-model``)."""

from .._kind import Command, Demo, Kind
from . import _cli, _demo


def _presentation(result):
    from ._view import presentation

    return presentation(result)


MODEL = Kind(
    name="model",
    presentation=_presentation,
    command=Command("audit-model", _cli.HELP, _cli.DESCRIPTION, _cli.add_arguments, _cli.RENAMED),
    default_out=_cli.DEFAULT_OUT,
    check_arguments=_cli.check_arguments,
    input_files=_cli.input_files,
    audit_from_arguments=_cli.audit_from_arguments,
    demo=Demo(
        out=_cli.DEFAULT_OUT,
        wants=_cli.wants_demo,
        intro=_cli.demo_intro,
        run=_cli.run_demo,
        check=_cli.check_demo,
        outro=_cli.demo_outro,
        folders=_demo.DEMO_FOLDERS,
        files=_demo.DEMO_FILES,
    ),
)
