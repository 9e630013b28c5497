"""The synthetic-data audit's inputs and shared results, as frozen dataclasses.

Read as attributes, so a misspelt name is an ``AttributeError`` where it is read (or a
``TypeError`` where it is built), never a ``KeyError`` turned into a failed row of the
report (``docs/design.md``, "One engine").

* :class:`ReleaseOptions` — the keywords of :func:`audit_release` that prepare the inputs;
* :class:`PreparedRelease` — the checked, encoded tables (:func:`prepare_release_inputs`);
* :class:`ReleaseInputs` — what every release's analyses share (``engine.inputs``);
* :class:`Release` — one audited release (``subject.inputs``);
* :class:`ReleaseShared` — its shared steps' results (``subject.shared``);
* :class:`ReleaseReportInputs` — how the inputs were used (``AuditResult.inputs``).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._encode import MAX_COLUMNS
from ..._engine import Targets
from ..._results import ReportInputs

__all__ = [
    "PreparedRelease",
    "Release",
    "ReleaseInputs",
    "ReleaseOptions",
    "ReleaseReportInputs",
    "ReleaseShared",
]


@dataclass(frozen=True)
class ReleaseOptions:
    """The keywords of :func:`audit_release` that read, encode and split the tables.

    ``columns``, ``max_categories``, ``id_columns``, ``allow_unparsed``, ``max_columns``
    and ``verbose`` go to :func:`encode_tables`, ``drop_overlapping_records`` to
    :func:`check_overlapping_records`; ``prior`` and ``group_by`` build the targets;
    ``confidence``, ``delta``, ``random_state`` (the base seed), ``n_jobs`` and
    ``on_error`` the engine; ``device`` goes to :class:`ReleaseInputs`.
    """

    columns: list = None
    prior: float = None
    max_categories: int = 20
    group_by: str = None
    confidence: float = 0.95
    delta: float = 0.0
    random_state: int = 0
    n_jobs: int = None
    id_columns: object = "auto"
    allow_unparsed: tuple = ()
    drop_overlapping_records: bool = False
    max_columns: int = MAX_COLUMNS
    verbose: bool = False
    on_error: str = "raise"
    device: object = "auto"


@dataclass(frozen=True)
class PreparedRelease:
    """The checked and encoded inputs of a release audit (:func:`prepare_release_inputs`).

    Attributes
    ----------
    tables : dict of str -> DataFrame
        The raw tables, after the data-quality gate.
    targets : Targets
        The target records (members, then the non-member targets).
    X_targets, X_reference : ndarray
        The encoded targets and reference rows.
    target_keys : ndarray
        Each target's raw row as a hashable key (exact copies).
    synthetic, synthetic_keys : dict of str -> ndarray
        Each release's encoded rows and raw row keys (sorted: looked up, not aligned with
        the rows), by name.
    unparsed : dict of str -> list of str
        Per release, the columns accepted as mostly not numbers (``allow_unparsed``).
    feature_names : list of str
        The encoded features.
    column_report : DataFrame
        :func:`encode_tables`'s report on every column.
    kept : list of str
        The audited raw columns.
    notes : list of str
        The data-quality notes.
    """

    tables: dict
    targets: Targets
    X_targets: np.ndarray
    X_reference: np.ndarray
    target_keys: np.ndarray
    synthetic: dict
    synthetic_keys: dict
    unparsed: dict
    feature_names: list
    column_report: pd.DataFrame
    kept: list
    notes: list


@dataclass(frozen=True)
class ReleaseInputs:
    """What every release's analyses share (the engine's ``inputs``): the encoded targets,
    the reference rows, the targets' raw row keys, and the ``device`` of the kernel passes
    (the nearest-synthetic distances, MACE's estimator, DOMIAS, MC, GAN-leaks CAL)."""

    X_targets: np.ndarray
    X_reference: np.ndarray
    target_keys: np.ndarray
    device: object = "auto"


@dataclass(frozen=True)
class Release:
    """One audited release (a subject's ``inputs``): its encoded rows, and whether each
    target appears verbatim in it (``copied``, from the raw row keys before the engine
    runs: the release's keys are not held through the analyses)."""

    synthetic: np.ndarray
    copied: np.ndarray


@dataclass(frozen=True)
class ReleaseShared:
    """A release's shared results: ``distances`` (nearest-synthetic distance of each
    target, MACE Eq. 2) and ``mace`` (MACE fitted on them); None until computed or when
    the step failed."""

    distances: np.ndarray = None
    mace: object = None


@dataclass(frozen=True, kw_only=True)
class ReleaseReportInputs(ReportInputs):
    """How a release audit used its inputs (``AuditResult.inputs``): the encoded
    ``feature_names``, :func:`encode_tables`'s ``column_report``, and (inherited)
    ``unparsed_columns`` per release."""

    feature_names: list
    column_report: pd.DataFrame
