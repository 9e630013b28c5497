"""The embedded demo: a correct and a wrong-noise DP histogram, both claimed at ε = 1.

What ``sklearn-mace audit-algorithm`` runs with no inputs: two recipes whose true ε is known
(1 and 2), the same targets, the same runs, and a verdict per target. The correct recipe must
never be contradicted (beyond the stated confidence); the wrong one should be, at 1 000 runs
per side, in about 19 audits out of 20 (measured in the issue #19 note).
"""

import os
from numbers import Integral

import numpy as np
from sklearn.base import clone

from ..datasets import make_categorical_population
from ._audit import AlgorithmAudit
from ._featurize import ReleaseFeatures
from ._mechanisms import DPHistogramSynthesizer, WrongNoiseHistogramSynthesizer

__all__ = ["dp_histogram_demo"]

RECIPES = {
    "DP histogram (Laplace noise, correct)": DPHistogramSynthesizer,
    "DP histogram (wrong noise: half the scale)": WrongNoiseHistogramSynthesizer,
}


def dp_histogram_demo(
    n_runs=1000,
    *,
    epsilon=1.0,
    confidence=0.95,
    n_jobs=None,
    random_state=0,
    results_dir=None,
    verbose=0,
):
    """Audit the correct and the wrong-noise DP histogram synthesizer, both claimed at ε.

    The embedded population (:func:`~sklearn_mace.datasets.make_categorical_population`:
    3 000 records over a 60-cell categorical domain) trains each
    recipe ``n_runs`` times without any target and ``n_runs`` times with each of two
    targets — the most common record and a canary in a cell no record occupies — on one
    fixed draw of 999 other records (:class:`AlgorithmAudit` with ``datasets="fixed"``,
    add/remove-one). The release is the expanded noisy histogram; the featurizer counts
    the target's copies in it (``ReleaseFeatures`` with radius 0: the histogram's count of
    the target's cell, all a release tells about the target). The correct recipe is
    ``epsilon``-DP; the wrong one adds half the noise and is ``2·epsilon``-DP.

    Each recipe's two bounds hold jointly at ``confidence`` (Bonferroni over the targets);
    the recipes are separate claims. With 1 000 runs per side (6 000 trainings) it takes
    about 10 s serially on a shared 2-core machine (``sklearn-mace audit-algorithm``, the
    same audits with the report, 11 s); ``n_jobs=2`` adds the workers' start-up, which such
    cheap runs do not pay back.

    Parameters
    ----------
    n_runs : int >= 10, default=1000
        Runs per side (per target for the runs with one).
    epsilon : float > 0, default=1.0
        The ε both recipes claim.
    confidence : float in (0, 1), default=0.95
        Joint confidence of each recipe's bounds.
    n_jobs : int, default=None
        Runs in parallel through joblib.
    random_state : int, default=0
        Seeds the population, every run and the attacks' splits.
    results_dir : str, path-like or None, default=None
        A directory (created if missing) where each recipe's runs are written as they
        finish (``<recipe number>.jsonl``), so an interrupted demo resumes; None writes
        nothing.
    verbose : int, default=0
        Progress bars over the runs when > 0.

    Returns
    -------
    summary : pandas.DataFrame
        One row per (recipe, target): ``recipe``, ``target`` (its description),
        ``true_epsilon`` (known for these mechanisms), then the columns of
        :meth:`AlgorithmAudit.summary` (``claimed_epsilon``, ``epsilon_lower_bound``,
        ``contradicted``, ``relation``, ``delta``, ``confidence``, ``per_target_confidence``,
        ``n_runs``, the operating point, ``auc``, ``roc_fpr``, ``roc_tpr``, …).

    See Also
    --------
    AlgorithmAudit : the audit, for any recipe.

    Examples
    --------
    A quick run (50 runs per side; the default 1 000 are what a verdict needs):

    >>> from sklearn_mace.algorithm import dp_histogram_demo
    >>> table = dp_histogram_demo(n_runs=50)
    >>> table.true_epsilon.tolist(), table.claimed_epsilon.tolist()
    ([1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0])
    >>> table.target.tolist()[:2]
    ['most common record', 'empty-cell canary']
    """
    import pandas as pd

    if isinstance(random_state, bool) or not isinstance(random_state, Integral):
        raise ValueError(f"random_state must be an int; got {random_state!r}.")
    data = make_categorical_population(random_state=random_state)
    population, targets, names = data.data, data.targets, data.target_names
    domain = [np.arange(k) for k in data.categories]
    count = ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None)
    if results_dir is not None:
        os.makedirs(results_dir, exist_ok=True)
    tables = []
    for number, (recipe_name, Recipe) in enumerate(RECIPES.items()):
        recipe = Recipe(epsilon, categories=domain)
        audit = AlgorithmAudit(
            recipe,
            targets=targets,
            n_runs=n_runs,
            train_size=data.train_size,
            datasets="fixed",
            featurizer=count,
            claimed_epsilon=epsilon,
            confidence=confidence,
            results_path=None
            if results_dir is None
            else os.path.join(results_dir, f"{number}.jsonl"),
            n_jobs=n_jobs,
            random_state=random_state,
            verbose=verbose,
        ).fit(population)
        table = audit.summary()
        table.insert(0, "recipe", recipe_name)
        table["target"] = names
        known = clone(recipe).fit(population[:1]).true_epsilon_  # Δ / noise scale
        table.insert(3, "true_epsilon", float(known))
        tables.append(table)
    return pd.concat(tables, ignore_index=True)
