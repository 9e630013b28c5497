"""The audit of training recipes (``audit_algorithm``, ``sklearn-mace audit-algorithm``)."""

from .._kind import Command, Demo, Kind
from . import _cli


def _presentation(result):
    from ._view import presentation

    return presentation(result)


ALGORITHM = Kind(
    name="recipe",
    presentation=_presentation,
    command=Command(
        "audit-algorithm", _cli.HELP, _cli.DESCRIPTION, _cli.add_arguments, _cli.RENAMED
    ),
    default_out=_cli.DEFAULT_OUT,
    check_arguments=_cli.check_arguments,
    input_files=_cli.input_files,
    audit_from_arguments=_cli.audit_from_arguments,
    # the embedded population is read by the audit itself: no input files to stage
    demo=Demo(out=_cli.DEFAULT_OUT, wants=_cli.wants_demo, intro=_cli.demo_intro),
    writer=_cli.write,
    printer=_cli.show,
    writes=_cli.writes,
)
