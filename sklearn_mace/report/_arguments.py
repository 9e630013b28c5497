"""What the kinds' command-line parts share: option types, option groups, reading the tables.

Each kind adds its own arguments (``_kinds/<kind>/_cli.py``) from these pieces; the command
line itself (``sklearn_mace/cli.py``) only loops over the kinds. Nothing here imports more
than ``argparse`` at import time, so ``sklearn-mace --help`` stays fast (``docs/design.md``,
"Lazy imports"). Error messages name the flags: these are the command line's own checks.
"""

import argparse
import re
from pathlib import Path

EXIT_CODES = (
    "Exit status: 0 complete report, 2 input error (nothing written), 3 partial report (an "
    "analysis failed; see 'Failed analyses' in report.html and the status column of "
    "summary.csv), 130 interrupted (Ctrl-C; a previous report is left intact)."
)
RANDOM_STATE_HELP = (
    "the base of every random choice (reference split, folds, seeds): the same inputs and "
    "--random-state give the same report (default: 0)"
)
QUIET_HELP = (
    "no progress bars, and no count of the warnings of NumPy, scikit-learn and other code on "
    "the terminal (they are listed in the report's notes either way)"
)
RELATION = (
    "Members against fresh records refute substitute-one DP; an add/remove-one ε (what DP-SGD "
    "accountants and DP synthesizers state) implies substitute-one 2ε."
)
CLAIM_DEFAULTS = {
    "prior": None,
    "confidence": 0.95,
    "delta": 0.0,
    "claimed_epsilon": 1.0,
    "bounded_margin": 0.1,
}
TABLE_DEFAULTS = {"decimal": None, "thousands": None, "id_columns": None, "keep_id_columns": False}


def number(flag, low, high, *, closed_low=False, closed_high=False, integer=False):
    """An argparse type: a number in (low, high), each end open unless closed_*."""

    def parse(text):
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a number; got {text!r}") from None
        above = value >= low if closed_low else value > low
        below = value <= high if closed_high else value < high
        if not (above and below):
            ends = ("[" if closed_low else "(", "]" if closed_high else ")")
            raise argparse.ArgumentTypeError(
                f"{flag} must be in {ends[0]}{low:g}, {high:g}{ends[1]}; got {text}"
            )
        return value

    return parse


def integer(allowed, text):
    """``int(text)`` when it parses and ``allowed`` accepts it, else None."""
    try:
        return int(text) if allowed(int(text)) else None
    except ValueError:
        return None


def random_state(text):
    """``--random-state``: an integer in [0, 2**32 - 1]."""
    value = integer(lambda v: 0 <= v < 2**32, text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"--random-state must be an integer in [0, 2**32 - 1]; got {text!r}"
        )
    return value


def n_jobs(text):
    """``--n-jobs``: a non-zero integer."""
    value = integer(lambda v: v != 0, text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"--n-jobs must be a non-zero integer (-1: all cores); got {text!r}"
        )
    return value


def positive_count(flag, low=1):
    """An argparse type: an integer of at least ``low``."""

    def parse(text):
        value = integer(lambda v: v >= low, text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{flag} must be an integer >= {low}; got {text!r}")
        return value

    return parse


def named_path(text):
    """``NAME=PATH`` or ``PATH`` (the name is then the file name without its suffixes)."""
    name, sep, path = text.partition("=")
    if not sep or not name or Path(text).exists():
        path = text
        name = Path(text).name.split(".")[0] or text
    return name, path


def device(text):
    """``--device``: ``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (whether this machine has it
    is :func:`check_device`'s question, asked before any work)."""
    if re.fullmatch(r"auto|cpu|cuda(:\d+)?", text) is None:
        raise argparse.ArgumentTypeError(
            f"--device must be auto, cpu, cuda or cuda:N; got {text!r}"
        )
    return text


def add_device(group, passes, note=""):
    """``--device``: where ``passes`` (the kind's kernel passes, in words) run; ``note``
    follows the choices."""
    group.add_argument(
        "--device",
        type=device,
        default="auto",
        metavar="{auto,cpu,cuda,cuda:N}",
        help=f"where {passes} run: auto = CUDA when available, else the CPU; cpu, cuda or "
        f"cuda:N pin it{note} (default: auto)",
    )


def check_device(args):
    """``--device`` names a device this machine has: an input error naming the flag
    otherwise (``cuda`` without a GPU), before any work."""
    from ._engine import check_device as check

    check(args.device)


def add_random_state_and_quiet(group, random_state_help=RANDOM_STATE_HELP):
    """``--random-state`` and ``--quiet``, which every command has."""
    group.add_argument("--random-state", type=random_state, default=0, help=random_state_help)
    group.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def add_out(group, default, text=None):
    """``--out DIR``: ``text`` says the default (``default`` is what argparse stores)."""
    group.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=default,
        help=f"output folder (default: {text or default}); nothing is written elsewhere",
    )


def claim_options(group, noun):
    """The options the release and model audits share: the claims' prior, level, δ, the
    claimed ε and the margin of a green card (then ``--random-state`` and ``--quiet``)."""
    group.add_argument(
        "--prior",
        type=number("--prior", 0, 1),
        default=None,
        help="P(member) at which advantages and risks are stated (default: the fraction of "
        "members among the audited records)",
    )
    group.add_argument(
        "--confidence",
        type=number("--confidence", 0, 1),
        default=0.95,
        help=f"level at which every certified number of a {noun} holds, all together "
        "(Bonferroni; default: 0.95)",
    )
    group.add_argument(
        "--delta",
        type=number("--delta", 0, 1, closed_low=True),
        default=0.0,
        help="δ of (ε, δ)-DP at which the ε lower bounds are stated, e.g. the 1e-5 of a "
        "DP-SGD accountant (default: 0)",
    )
    group.add_argument(
        "--claimed-epsilon",
        type=number("--claimed-epsilon", 0, float("inf"), closed_low=True, closed_high=True),
        default=1.0,
        help=f"the ε of a DP claim to test: a certified ε above it turns a {noun}'s card red "
        f"(default: 1). {RELATION} For an add/remove-one claim ε, pass 2ε.",
    )
    group.add_argument(
        "--bounded-margin",
        type=number("--bounded-margin", 0, 1),
        default=0.1,
        metavar="M",
        help=f"a {noun}'s card is green (leakage bounded) only when every analysis's certified "
        "upper bound on the advantage is at most the trivial |2p - 1| plus this margin; "
        "otherwise red (leakage certified) or grey (inconclusive) (default: 0.1)",
    )
    add_random_state_and_quiet(group)


def _thousands(text):
    if len(text) > 1 or text.isdigit():
        raise argparse.ArgumentTypeError(
            f"--thousands must be one character other than a digit, or '' for none; got {text!r}"
        )
    return text


def table_options(group):
    """How the tables are read and which columns are row ids (release and model audits)."""
    group.add_argument(
        "--decimal",
        choices=(",", "."),
        default=None,
        metavar="MARK",  # argparse would show the choices as {,,.}
        help="the decimal mark of the CSV files' numbers, ',' or '.' (default: ',' for a "
        "';'-separated file whose numbers are written 14,25 and never 14.25, else '.')",
    )
    group.add_argument(
        "--thousands",
        type=_thousands,
        default=None,
        metavar="CHAR",
        help="the thousands separator of the CSV files' numbers, '' for none (default: '.' "
        "with a decimal comma, ',' when quoted numbers are written \"1,234\", else none)",
    )
    group.add_argument(
        "--id-columns",
        action="append",
        metavar="A,B,…",
        help="the columns that are row ids, left out of the audit (default: those that look "
        "like one: all-distinct integers over a dense range or under an id-like name, or an "
        "evenly spaced sequence; each is named in a warning)",
    )
    group.add_argument(
        "--keep-id-columns",
        action="store_true",
        help="keep the columns that look like row ids (split between members and hold-out "
        "rows, a row id fakes a leak)",
    )


def read_options(role, args=None):
    """The keywords of ``read_table`` for the ``role`` file, as ``--decimal``,
    ``--thousands`` and ``--quiet`` say (the release audit reads a release again with them)."""
    return {
        "role": role,
        "decimal": getattr(args, "decimal", None),
        "thousands": getattr(args, "thousands", None),
        "verbose": not getattr(args, "quiet", True),
    }


def read_inputs(files, distinct, args=None):
    """Read ``{role: path}`` as ``--decimal``/``--thousands`` say; the ``distinct`` roles
    must differ. What reading did is in each table's ``attrs["notes"]``."""
    from ._io import AuditInputError, read_table

    tables = {}
    for role, path in files.items():
        tables[role] = read_table(path, **read_options(role, args))
    present = [role for role in distinct if role in tables]
    for i, first in enumerate(present):
        for second in present[i + 1 :]:
            same = Path(files[first]).resolve() == Path(files[second]).resolve()
            if same or tables[first].equals(tables[second]):
                raise AuditInputError(
                    f"The {first} file '{files[first]}' and the {second} file "
                    f"'{files[second]}' hold the same table"
                    f"{' (the same file)' if same else ''}: they must be different records."
                )
    return tables


def listed(texts):
    """The comma-separated names of repeated options (``--columns a,b --columns c``)."""
    return [c.strip() for text in texts for c in text.split(",") if c.strip()]


def columns(args):
    """``columns=`` of the audits: the ``--columns`` named, or None (all)."""
    return listed(args.columns) if args.columns else None


def id_columns(args):
    """``id_columns`` of the audits: "auto", the named columns, or none (--keep-id-columns)."""
    from ._io import AuditInputError

    if args.keep_id_columns and args.id_columns:
        raise AuditInputError("--id-columns and --keep-id-columns exclude each other.")
    if args.keep_id_columns:
        return []
    return listed(args.id_columns) if args.id_columns else "auto"


def reading_notes(tables):
    """What reading the tables did (a decimal comma, a row left out), as the report's notes."""
    return [note for frame in tables.values() for note in frame.attrs.get("notes", [])]


def claim_kwargs(args):
    """The claim options (``CLAIM_DEFAULTS``), ``random_state`` and ``verbose`` as keywords."""
    return {name: getattr(args, name) for name in CLAIM_DEFAULTS} | {
        "random_state": args.random_state,
        "verbose": not args.quiet,
    }


def input_files(args, options):
    """``(flag, path)`` of every input file given among ``options`` (argparse dests, in the
    order the check reports them), for the check that none lies in ``--out``."""
    found = []
    for name in options:
        value = getattr(args, name, None)
        flag = "--" + name.replace("_", "-")
        for item in value if isinstance(value, list) else [value]:
            path = item[1] if isinstance(item, tuple) else item
            if path is not None:
                found.append((flag, path))
    return found


def missing_inputs(given, what, none="no input files"):
    """Refuse a partial set of inputs: ``given`` maps each needed flag to its value."""
    from ._io import AuditInputError

    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise AuditInputError(
            f"{what} needs {', '.join(missing)} as well (or {none} at all for the demo)."
        )


def check_names(names, what):
    """The subjects' names (``NAME=PATH``) must differ."""
    from ._io import AuditInputError

    if len(set(names)) != len(names):
        raise AuditInputError(f"{what} names must differ; got {names}. Name them with NAME=PATH.")


def refuse_demo_options(args, defaults, command, takes=""):
    """The demo has its own settings: refuse the options of ``defaults`` set to something
    else (running it would silently drop them). ``takes``: what else the demo takes."""
    from ._io import AuditInputError

    changed = [
        flag for flag, default in defaults.items() if getattr(args, flag, default) != default
    ]
    if changed:
        flags = ", ".join("--" + name.replace("_", "-") for name in changed)
        raise AuditInputError(
            f"{flags} need input files; the {command} demo takes only --out, --random-state, "
            f"--device and --quiet{takes}."
        )
