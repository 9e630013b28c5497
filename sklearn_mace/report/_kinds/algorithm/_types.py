"""The algorithm audit's inputs and shared results, as frozen dataclasses.

Read as attributes, so a misspelt name is an ``AttributeError`` where it is read (or a
``TypeError`` where it is built), never a ``KeyError`` turned into a failed row of the
report (``docs/design.md``, "One engine").

* :class:`AlgorithmInputs` — what every recipe's analyses share (``engine.inputs``);
* :class:`AuditedRecipe` — one audited training recipe (``subject.inputs``);
* :class:`AlgorithmShared` — its shared step's result (``subject.shared``);
* :class:`AlgorithmReportInputs` — the audit's settings (``AuditResult.inputs``);
* :class:`OneRunRecipe`, :class:`OneRunResult` — the one-run design's result (one fitted
  :class:`~sklearn_mace.algorithm.AlgorithmAudit` per recipe; its own card, not the engine's).
"""

from dataclasses import dataclass

import numpy as np

from ..._results import ReportInputs

__all__ = [
    "AlgorithmInputs",
    "AlgorithmReportInputs",
    "AlgorithmShared",
    "AuditedRecipe",
    "OneRunRecipe",
    "OneRunResult",
]


@dataclass(frozen=True)
class AlgorithmInputs:
    """What every recipe's analyses share (the engine's ``inputs``).

    Attributes
    ----------
    population : ndarray
        The encoded population training sets are drawn from.
    targets : ndarray
        The audited target records, one row each.
    target_names : list of str
        Their names (one analysis each).
    relation : {"add_remove", "substitute"}
        The neighbour relation of the runs.
    n_runs : int
        Runs per side.
    train_size : int
        Records per training set.
    claim : PrivacyClaim
        The claim as stated.
    verbose : int
        The runs' progress bar (0: none).
    device : str or torch.device
        Where kernel passes would run (``audit_algorithm``'s ``device``); no step of the
        recipe audit has one today (its runs train the recipes and featurize in NumPy).
    certificate : {"threshold", "rank_test"}
        How the certifying runs give each target's ε (``AlgorithmAudit``'s ``certificate``).
    """

    population: np.ndarray
    targets: np.ndarray
    target_names: list
    relation: str
    n_runs: int
    train_size: int
    claim: object
    verbose: int
    device: object = "auto"
    certificate: str = "threshold"


@dataclass(frozen=True)
class AuditedRecipe:
    """One audited training recipe (a subject's ``inputs``).

    Attributes
    ----------
    key : str
        Its CLI name (a key of ``RECIPES``).
    recipe : estimator
        The unfitted recipe.
    true_epsilon : float
        Its ε when it is a mechanism of known ε (NaN otherwise).
    featurizer : ReleaseFeatures or None
        How a release is featurized about a target (None: the audit's default).
    n_synthetic : int or None
        Synthetic rows drawn from each fitted recipe (None: the histogram's own release).
    """

    key: str
    recipe: object
    true_epsilon: float
    featurizer: object
    n_synthetic: int


@dataclass(frozen=True)
class AlgorithmShared:
    """A recipe's shared result: ``runs``, its fitted
    :class:`~sklearn_mace.algorithm.AlgorithmAudit` (None until done, or when it failed)."""

    runs: object = None


@dataclass(frozen=True, kw_only=True)
class AlgorithmReportInputs(ReportInputs):
    """An algorithm audit's settings (``AuditResult.inputs``): the neighbour ``relation``,
    ``n_runs`` per side, the ``target_names``, the ``certificate`` of the ε and (inherited)
    the ``claim`` on the audited relation."""

    relation: str
    n_runs: int
    target_names: list
    certificate: str = "threshold"


@dataclass(frozen=True)
class OneRunRecipe:
    """One recipe audited in one run.

    Attributes
    ----------
    key : str
        Its CLI name (a key of ``RECIPES``).
    name : str
        Its name in the report.
    audit : AlgorithmAudit
        The fitted audit (``design="one_run"``): every number of the recipe's card is one of
        its fitted attributes.
    """

    key: str
    name: str
    audit: object


@dataclass(frozen=True)
class OneRunResult:
    """What the one-run design gives: one fitted audit per recipe, and the inputs' sizes.

    Returned by ``audit_algorithm(..., design="one_run")``;
    :func:`~sklearn_mace.report.write_report` writes it as the command line does
    (report.html, summary.csv, guesses.csv, one trade-off figure per recipe).

    Attributes
    ----------
    recipes : tuple of OneRunRecipe
        In the order asked for.
    confidence : float
        Each recipe's numbers hold together at this level (a separate claim per recipe).
    n_rows : dict of str -> int
        The inputs and their rows, for the page's header.
    partial : bool
        Always False: the one-run design has no analysis to fail (the command's exit code).
    kind : str
        ``"recipe"``, as the multi-run result's ``kind``: the kind of audit that writes it
        (``_kinds/_registry.py``).
    """

    recipes: tuple
    confidence: float
    n_rows: dict
    partial: bool = False
    kind: str = "recipe"

    @property
    def summary(self):
        """One row per recipe: ``recipe`` (its name) then the one-run columns of
        :meth:`~sklearn_mace.algorithm.AlgorithmAudit.summary`."""
        import pandas as pd

        rows = [{"recipe": r.name, **r.audit.summary().iloc[0].to_dict()} for r in self.recipes]
        return pd.DataFrame(rows)
