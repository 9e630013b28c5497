"""disclosure_summary's correction: a release's rows are one family, flagged only when leaking.

A row is *flagged* when its corrected lower bound is above 0; the K rows of a release hold
together at ``confidence`` (Bonferroni, the card's rule). Null data — releases that are
fresh samples of the members' population, so every risk is 0 — must flag a row of a release
in at most α of the runs, over tables of several widths with skewed and heavy-tailed columns.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from sklearn_mace.disclosure import disclosure_summary
from sklearn_mace.disclosure._rates import family_confidence
from sklearn_mace.disclosure._summary import FAMILY_COLUMNS, SUMMARY_COLUMNS, family_size


def population(n, n_columns, rng):
    """Skewed and heavy-tailed columns with a dependency: log-normal income, Student-t(1.5)
    score, a rare flag, a skewed category, integers; ``n_columns`` of them."""
    job = rng.choice(["a", "b", "c", "d"], n, p=[0.7, 0.2, 0.07, 0.03])
    columns = {
        "income": np.exp(rng.normal(10, 1, n) + (job == "a")),
        "score": rng.standard_t(1.5, n),
        "job": job,
        "flag": rng.random(n) < 0.05,
        "children": rng.poisson(0.7, n),
        "town": rng.choice(list("xyzw"), n, p=[0.55, 0.25, 0.15, 0.05]),
    }
    return pd.DataFrame(dict(list(columns.items())[:n_columns]))


def null_runs(n_runs, n, n_columns, seed):
    """Runs (of ``n_runs``) in which some corrected row of a fresh release is flagged."""
    rng = np.random.default_rng(seed)
    flagged = 0
    for run in range(n_runs):
        members, controls, fresh = (population(n, n_columns, rng) for _ in range(3))
        summary = disclosure_summary(
            members, controls, {"fresh": fresh}, n_queries=100, random_state=run
        )
        flagged += bool(summary["flagged"].any())
    return flagged


def allowed(n_runs, alpha=0.05, tail=0.01):
    """The most flagged runs a procedure flagging in α of runs gives with probability 1 − tail."""
    return int(binom.ppf(1 - tail, n_runs, alpha))


def test_rows_are_one_family_per_release():
    rng = np.random.default_rng(0)
    members, controls = population(150, 4, rng), population(150, 4, rng)
    releases = {"copy": members, "fresh": population(150, 4, rng)}
    summary = disclosure_summary(members, controls, releases, n_queries=100, random_state=0)
    assert list(summary.columns) == SUMMARY_COLUMNS and SUMMARY_COLUMNS[-3:] == FAMILY_COLUMNS
    k = family_size(4)  # 4 columns + pooled + linkability + 2 singling out
    assert k == 8
    assert (summary.groupby("release").size() == k).all()
    assert (summary["family_size"] == k).all()
    assert np.allclose(summary["confidence"], family_confidence(0.95, k))
    assert (summary["flagged"] == (summary["risk_low"] > 0)).all()
    copy = summary[summary["release"] == "copy"]
    assert copy.loc[copy["analysis"] != "singling out", "flagged"].all()
    # uncorrected: each row at 0.95 on its own, narrower
    plain = disclosure_summary(
        members, controls, releases, n_queries=100, corrected=False, random_state=0
    )
    assert (plain["family_size"] == 1).all() and np.allclose(plain["confidence"], 0.95)
    finite = np.isfinite(summary["risk_low"]) & np.isfinite(plain["risk_low"])
    assert (plain["risk_low"][finite] >= summary["risk_low"][finite] - 1e-12).all()
    assert (plain["risk_high"] <= summary["risk_high"] + 1e-12).all()


def test_family_size_counts_the_rows():
    assert family_size(1) == 1 + 1 + 2  # one secret: no pooled row
    assert family_size(15, n_linkability=2) == 15 + 1 + 2 + 2
    assert family_size(3, singling_out=False) == 3 + 1 + 1


@pytest.mark.parametrize(("n_columns", "seed"), [(3, 1), (6, 2)])
def test_fresh_releases_flag_nothing_beyond_alpha(n_columns, seed):
    n_runs = 8
    flagged = null_runs(n_runs, 120, n_columns, seed)
    assert flagged <= allowed(n_runs), flagged


@pytest.mark.slow
@pytest.mark.parametrize(("n_columns", "seed"), [(3, 3), (6, 4)])
def test_fresh_releases_flag_nothing_beyond_alpha_many_runs(n_columns, seed):
    n_runs = 100
    flagged = null_runs(n_runs, 300, n_columns, seed)
    assert flagged <= allowed(n_runs), flagged
