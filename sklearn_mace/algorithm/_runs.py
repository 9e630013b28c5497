"""The shadow runs: train a recipe with and without a target, many times, on joblib.

Every run is an independent task: draw its training set, train a seeded clone of the
recipe, featurize the output about the targets. All seeds are drawn up front by the caller,
so a run's result depends on its seed only — not on ``n_jobs``, nor on the joblib backend
(loky, Dask, Ray), nor on the order runs finish in. Runs go out in chunks (about eight per
worker), each run on one thread when runs are parallel; the caller's process writes each
finished chunk to the results file (:class:`RunStore`), so an interrupted audit resumes where
it stopped and the workers need no shared disk.
"""

import contextlib
import copy
import inspect
import json
import os
import sys
import threading
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone
from threadpoolctl import threadpool_limits

__all__ = ["RunPlan", "RunStore", "run_all", "seeded"]

#: Format tag and version of the results file's header line.
FORMAT = "sklearn-mace algorithm-audit runs"
FORMAT_VERSION = 2  # 2: substitute-one runs also featurize the replacement


def seeded(estimator, seed):
    """An unfitted clone whose every ``random_state`` parameter is ``seed``.

    Unlike shadow models, a seed the user fixed is replaced too: runs of a randomized
    algorithm must be independent draws, and a fixed seed would make every run the same.
    """
    model = clone(estimator)
    names = [
        name
        for name in model.get_params(deep=True)
        if name == "random_state" or name.endswith("__random_state")
    ]
    return model.set_params(**dict.fromkeys(names, int(seed))) if names else model


def has_random_state(estimator):
    """Whether any (nested) parameter of ``estimator`` is a ``random_state``."""
    return any(
        name == "random_state" or name.endswith("__random_state")
        for name in estimator.get_params(deep=True)
    )


def output_parameter(featurizer):
    """Name of the featurizer's first constructor parameter: the run's output goes there."""
    parameters = list(inspect.signature(type(featurizer).__init__).parameters)[1:]
    if not parameters:
        raise TypeError(
            f"featurizer {type(featurizer).__name__} takes no constructor parameter; its first "
            "parameter must receive each run's output (a release or a fitted model)."
        )
    return parameters[0]


@dataclass(frozen=True)
class RunPlan:
    """Everything a run needs besides its seeds (sent to the workers once per chunk)."""

    recipe: object
    kind: str  # "generator" or "classifier"
    featurizer: object
    pool: np.ndarray  # population rows the training sets are drawn from (targets left out)
    targets: np.ndarray
    relation: str
    n_train: int  # rows of a training set that holds the target
    n_runs: int  # runs per side (per target on the "with" side)
    n_synthetic: int | None
    fixed_seed: int | None  # the data seed of every run with datasets="fixed"
    output_parameter: str  # the featurizer's parameter that receives each run's output
    # substitute-one: pool rows a replacement is drawn from (those equal to no target)
    replacement_rows: np.ndarray | None = None

    @property
    def n_total(self):
        return self.n_runs * (1 + len(self.targets))

    def side(self, run):
        """``None`` for a run without any target, else the index of the target it holds."""
        return None if run < self.n_runs else (run - self.n_runs) // self.n_runs


def training_set(plan, target, data_seed):
    """``(data, replacement)``: the run's training set — ``n_train − 1`` pool rows plus the
    target, its replacement (``"substitute"``) or nothing (``"add_remove"`` without the
    target), at a random row — and the replacement row (None under add/remove).

    The replacement is drawn on both sides alike (a run with the target draws it too and
    leaves it out), so the pair ``(D ∪ {target}, D ∪ {replacement})`` of a run is a draw of
    the same neighbouring pairs on both sides, and the featurizer may read it."""
    rng = np.random.default_rng(data_seed)
    n_base = plan.n_train - 1
    substitute = plan.relation == "substitute"
    if substitute:
        # a replacement equal to the target would make the two datasets the same and the
        # run uninformative: it is drawn among the rows equal to no target, the rest from
        # the other rows (every such pair is a substitute-one neighbour pair)
        chosen = int(plan.replacement_rows[rng.integers(plan.replacement_rows.size)])
        others = rng.choice(len(plan.pool) - 1, size=n_base, replace=False)
        rows = np.r_[others + (others >= chosen), chosen]
    else:
        rows = rng.choice(len(plan.pool), size=n_base, replace=False)
    position = int(rng.integers(plan.n_train))
    base = plan.pool[rows[:n_base]]
    replacement = plan.pool[rows[-1]] if substitute else None
    if target is not None:
        extra = plan.targets[target]
    elif substitute:
        extra = replacement
    else:
        return base, None
    return np.insert(base, position, extra, axis=0), replacement


def train_output(plan, data, seed):
    """Train a seeded clone of the recipe on ``data``; its release or the fitted model."""
    model = seeded(plan.recipe, seed)
    if plan.kind == "classifier":
        return model.fit(data[:, :-1], data[:, -1])
    model.fit(data)
    release = model.sample() if plan.n_synthetic is None else model.sample(plan.n_synthetic)
    if isinstance(release, tuple):  # GaussianMixture.sample returns (X, component labels)
        release = release[0]
    return np.asarray(release, dtype=np.float64)


def featurize(plan, output, target_rows, replacement=None):
    """Features of the targets about one output; with a ``replacement`` (substitute-one
    runs) its features follow as further columns, the same for every target: a swap moves
    the target's cell up and the replacement's down, and an attack blind to the second half
    of the swap sees only half of what the mechanism must hide (issue #30)."""
    featurizer = copy.copy(plan.featurizer)
    # set the attribute directly: set_params would re-read every parameter per run
    setattr(featurizer, plan.output_parameter, output)
    features = np.asarray(featurizer.fit_transform(plan.targets[target_rows]), dtype=np.float64)
    if replacement is not None:
        other = np.asarray(featurizer.transform(replacement[None, :]), dtype=np.float64)
        features = np.hstack([features, np.repeat(other, len(features), axis=0)])
    if features.ndim != 2 or features.shape[0] != len(target_rows):
        raise ValueError(
            f"featurizer {type(plan.featurizer).__name__} returned shape {features.shape} for "
            f"{len(target_rows)} target(s); it must return one row per target."
        )
    if not np.isfinite(features).all():
        raise ValueError(
            f"featurizer {type(plan.featurizer).__name__} returned NaN or infinite features; "
            "an attack cannot learn from them."
        )
    return features


def one_run(plan, run, data_seed, recipe_seed):
    """``(run, features)``: features of the targets this run tells about (all targets for a
    run without any, else only the one it holds). Module-level, so that it pickles."""
    target = plan.side(run)
    seed = plan.fixed_seed if plan.fixed_seed is not None else data_seed
    data, replacement = training_set(plan, target, seed)
    output = train_output(plan, data, recipe_seed)
    rows = np.arange(len(plan.targets)) if target is None else np.array([target])
    return run, featurize(plan, output, rows, replacement)


_ONE_THREAD_LOCK = threading.Lock()
_ONE_THREAD = {"depth": 0, "restore": None}


@contextlib.contextmanager
def one_thread(active=True):
    """Run the body on one BLAS / OpenMP (and torch) thread when ``active``.

    Runs in parallel are already one per core: a recipe that starts its own threads on top
    (``GaussianMixture``'s BLAS, torch) would put several threads on each core, and every
    barrier of theirs would wait for a scheduler slice (``utils/_threads.py``). The limits
    are process-wide (OpenMP's per thread), so with threads as workers each sets them and
    the last to leave restores what the first found. (A fresh lookup of the libraries each
    time, ~2 ms per chunk: a cached controller's limits did not reach the BLAS from worker
    threads.)
    """
    if not active:
        yield
        return
    with _ONE_THREAD_LOCK:
        _ONE_THREAD["depth"] += 1
        if _ONE_THREAD["depth"] == 1:
            torch = sys.modules.get("torch")  # only when a recipe already loaded it
            before = None if torch is None else torch.get_num_threads()
            if torch is not None:
                torch.set_num_threads(1)
            _ONE_THREAD["restore"] = (torch, before, threadpool_limits(limits=1))
        else:  # OpenMP's thread count is per thread: set it in this one too
            threadpool_limits(limits=1)
    try:
        yield
    finally:
        with _ONE_THREAD_LOCK:
            _ONE_THREAD["depth"] -= 1
            if _ONE_THREAD["depth"] == 0:
                torch, before, limiter = _ONE_THREAD["restore"]
                limiter.restore_original_limits()
                if torch is not None:
                    torch.set_num_threads(before)


def _one_chunk(plan, runs, seeds, single_threaded=False):
    with one_thread(single_threaded):
        return [one_run(plan, run, int(a), int(b)) for run, (a, b) in zip(runs, seeds, strict=True)]


class RunStore:
    """The runs' features as JSON lines, appended as they finish, read back to resume.

    The first line is a header: the format, a fingerprint of everything that determines the
    runs (recipe, featurizer, data, targets, relation, sizes) and the seeds. Each further
    line is ``{"run": i, "features": [[...], ...]}`` with floats written exactly (JSON uses
    the shortest repr that round-trips). A last line cut by an interruption is dropped.
    Nothing is written but this one file.
    """

    def __init__(self, path):
        self.path = None if path is None else os.fspath(path)

    def load(self, fingerprint, seeds, seeds_are_given):
        """Finished runs ``{run: features}`` and the seeds to use (the file's, on resume)."""
        if self.path is None or not os.path.exists(self.path):
            return {}, seeds
        with open(self.path, "rb") as handle:
            raw = handle.read()
        lines = raw.split(b"\n")
        complete = lines[:-1]  # the text after the last newline was cut mid-write
        if not complete:  # not even the header was finished: start afresh
            with open(self.path, "r+b") as handle:
                handle.truncate(0)
            return {}, seeds
        header = json.loads(complete[0])
        if header.get("format") != FORMAT or header.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"results_path {self.path!r} exists and is not a results file of "
                "AlgorithmAudit; give a new path or remove the file."
            )
        if header["fingerprint"] != fingerprint:
            raise ValueError(
                f"results_path {self.path!r} holds the runs of another audit (recipe, "
                "featurizer, data, targets, relation or sizes differ); give a new path or "
                "remove the file to start again."
            )
        stored = np.asarray(header["seeds"], dtype=np.int64)
        if seeds_are_given and not np.array_equal(stored, seeds):
            raise ValueError(
                f"results_path {self.path!r} was written with another random_state; pass the "
                "same random_state (or None to take the file's seeds) to resume."
            )
        done = {}
        for line in complete[1:]:
            record = json.loads(line)
            done[int(record["run"])] = np.asarray(record["features"], dtype=np.float64)
        kept = len(raw) - len(lines[-1])
        if kept != len(raw):  # drop the cut line before appending
            with open(self.path, "r+b") as handle:
                handle.truncate(kept)
        return done, stored

    def start(self, fingerprint, seeds):
        """Write the header if the file is new (or was empty)."""
        if self.path is None:
            return
        if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            return
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "fingerprint": fingerprint,
            "seeds": np.asarray(seeds).tolist(),
        }
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(header) + "\n")

    def append(self, results):
        if self.path is None or not results:
            return
        text = "".join(
            json.dumps({"run": int(run), "features": features.tolist()}) + "\n"
            for run, features in results
        )
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()


def run_all(plan, seeds, done, store, *, n_jobs=None, progress=None):
    """Run every run not in ``done``; ``{run: features}`` for all runs.

    ``seeds`` has shape ``(n_total, 2)``: the data seed and the recipe seed of every run.
    Chunks of runs are joblib tasks (any backend: ``joblib.parallel_config``); the caller's
    process writes each finished chunk to ``store`` and advances ``progress`` (a tqdm bar).
    """
    results = dict(done)
    todo = np.array([run for run in range(plan.n_total) if run not in results], dtype=int)
    if todo.size == 0:
        return results
    workers = max(1, effective_n_jobs(n_jobs))
    # a few chunks per worker: enough to balance the load, few enough that dispatching and
    # pickling the plan stay a small part of the work (about 8 per worker)
    per_task = int(np.clip(np.ceil(todo.size / (8 * workers)), 1, 64))
    chunks = [todo[i : i + per_task] for i in range(0, todo.size, per_task)]
    tasks = (delayed(_one_chunk)(plan, runs, seeds[runs], workers > 1) for runs in chunks)
    # one call, results as they finish (no barrier between rounds); the caller's process
    # writes each finished chunk, so an interruption loses only the chunks in flight
    for chunk in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks):
        store.append(chunk)
        results.update(chunk)
        if progress is not None:
            progress.update(len(chunk))
    return results
