"""The warnings of an audit run, caught into the report's notes (the CLI and the demos).

* :func:`catching_warnings` records every warning raised while an audit runs — in this
  process, and in the worker processes joblib's default (loky) back-end starts, whose
  warnings would otherwise go straight to the terminal: each worker sends them back through
  a queue (a loky back-end registered for the duration of the run, with a worker
  initializer; the ``prefer``/``require`` hints of joblib's callers are kept).
* :func:`add_warning_notes` turns them into notes: the library's own as written, the others
  (NumPy's, scikit-learn's, …) one note per kind with its count and where it was raised.
* :func:`printed_notes` is what the terminal shows: the library's notes, and — unless
  quiet — one line counting the third-party warnings listed in the report.
"""

import contextlib
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WarningLog", "add_warning_notes", "catching_warnings", "printed_notes"]


class WarningLog(list):
    """The warnings of a run (:class:`CaughtWarning`), and once they are notes, ``counts``:
    ``(n_notes, n_warnings)`` of the third-party ones (the last ``n_notes`` notes)."""

    counts = (0, 0)


@dataclass(frozen=True)
class CaughtWarning:
    """One warning: its category's module and name, its message and its file."""

    module: str
    category: str
    message: str
    filename: str

    @classmethod
    def of(cls, caught):
        """From a ``warnings.WarningMessage``."""
        category = caught.category
        return cls(category.__module__, category.__name__, str(caught.message), caught.filename)


def _collect_in_worker(channel):
    """A loky worker's initializer: send every warning to the parent through ``channel``."""

    def send(message, category, filename, lineno, file=None, line=None):
        channel.put((category.__module__, category.__name__, str(message), filename))

    warnings.simplefilter("always")
    warnings.showwarning = send


class _Channel:
    """A pipe the workers write each warning into at once (no feeder thread: the write is
    done when the task returns), read by a thread of this process while the run goes on."""

    def __init__(self, context):
        self.queue = context.SimpleQueue()
        self.received = []
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        while (item := self.queue.get()) is not None:
            self.received.append(CaughtWarning(*item))

    def close(self):
        """Every task has returned, so every warning is in the pipe before this marker."""
        self.queue.put(None)
        self.thread.join(timeout=5)
        self.queue.close()
        return self.received


@contextlib.contextmanager
def _worker_warnings(caught):
    """Route the warnings of joblib's loky workers into ``caught`` for the duration."""
    try:
        from joblib import parallel
        from joblib._parallel_backends import LokyBackend
        from joblib.externals.loky.backend.context import get_context
    except ImportError:  # another joblib: the workers' warnings are not collected
        yield
        return
    channels = []  # made when a worker pool starts: a serial run starts nothing

    class CollectingLoky(LokyBackend):
        def configure(self, n_jobs=1, *args, **kwargs):
            if self.effective_n_jobs(n_jobs) > 1 and "initializer" not in self.backend_kwargs:
                if not channels:
                    channels.append(_Channel(get_context("loky")))
                self.backend_kwargs.update(
                    initializer=_collect_in_worker, initargs=(channels[0].queue,)
                )
            return super().configure(n_jobs, *args, **kwargs)

    original = parallel.BACKENDS.get("loky")
    parallel.BACKENDS["loky"] = CollectingLoky
    try:
        yield
    finally:
        parallel.BACKENDS["loky"] = original
        for channel in channels:
            caught.extend(channel.close())


@contextlib.contextmanager
def catching_warnings():
    """Record every warning raised inside the block, joblib's worker processes included.

    Yields
    ------
    caught : WarningLog
        Filled while the block runs (the workers' warnings when it ends).
    """
    caught = WarningLog()
    with warnings.catch_warnings(record=True) as here:
        warnings.simplefilter("always")
        try:
            with _worker_warnings(caught):
                yield caught
        finally:
            caught[:0] = [CaughtWarning.of(w) for w in here]


def _source(filename):
    """Where a warning was raised: the path from its package down (``sklearn/…/x.py``)."""
    parts = Path(filename).parts
    top = [i for i, part in enumerate(parts) if part in ("site-packages", "dist-packages")]
    start = top[-1] + 1 if top else max(len(parts) - 2, 0)
    if "sklearn_mace" in parts:
        start = len(parts) - 1 - parts[::-1].index("sklearn_mace")
    return "/".join(parts[start:])


def warning_notes(caught, notes):
    """``(ours, third_party, count)`` notes from the warnings caught during an audit.

    The library's own warnings (inputs changed, controls copied) become notes as written;
    the others (numerical and technical warnings of NumPy, scikit-learn, …, whoever calls
    them) one note per kind, with its count and where it was raised. Messages already among
    ``notes`` are not repeated.
    """
    ours, theirs, seen = [], {}, set(notes)
    for item in caught:
        text = item.message.strip()
        if item.module.split(".")[0] == "sklearn_mace":
            if text not in seen:
                seen.add(text)
                ours.append(text)
            continue
        key = f"{item.category}: {text}"
        count, where = theirs.get(key, (0, _source(item.filename)))
        theirs[key] = (count + 1, where)
    third_party = [f"warning ({where}, {count}×): {key}" for key, (count, where) in theirs.items()]
    return ours, third_party, sum(count for count, _ in theirs.values())


def add_warning_notes(result, caught):
    """Append the caught warnings to ``result.notes``; sets and returns ``caught.counts``,
    ``(n_notes, n_warnings)`` of the third-party ones (the last ``n_notes`` notes)."""
    ours, third_party, count = warning_notes(caught, result.notes)
    result.notes.extend(ours + third_party)
    caught.counts = (len(third_party), count)
    return caught.counts


def printed_notes(result, caught, quiet):
    """The notes the terminal shows: all but the third-party ones of ``caught`` (a
    :class:`WarningLog`, or None), which are counted in one line unless ``quiet`` (they are
    listed in the report either way)."""
    n_notes, count = (0, 0) if caught is None else caught.counts
    shown = result.notes[: len(result.notes) - n_notes]
    if count and not quiet:
        shown = [
            *shown,
            f"{count} warnings of NumPy, scikit-learn and other code, listed in the report's notes",
        ]
    return shown
