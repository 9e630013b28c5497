"""The six-release comparison of issue #29, reduced: GaussianMixture stand-ins, no peer tools.

``benchmarks/bench_peers_disclosure.py`` builds six releases (sdv GaussianCopula, CTGAN, TVAE,
smartnoise MST, a half-copy, a fresh population sample) and runs our singling-out,
linkability and inference risks beside anonymeter's. Here the same pipeline (the script's own
functions) runs on an Adult-like table with ``GaussianMixture`` stand-ins for the four
generators, small sizes, fixed seeds. Ground truth:

* ``halfcopy`` holds half the members verbatim (and as many fresh rows here). A copied
  member finds its own row at distance 0: it links (ties kept) and its secret is guessed,
  while the other members and the controls succeed at the same chance rate c; so ``a = 0.5
  + 0.5·c`` and the risk ``(a − c)/(1 − c)`` is 0.5 for linkability and pooled inference.
  Univariate singling out writes predicates from values unique in the release; one written
  from a copied row isolates that member, so its risk is the share of release rows that are
  copies: 0.5 here (150 of 300; on the benchmark's 5000-row release, 500 of 5000 = 0.1).
  Their corrected intervals must exclude 0 and cover 0.5.
* ``fresh`` is a population sample the members are not in: every risk is 0, and every
  corrected interval must cover 0.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _module(name):
    sys.path.insert(0, str(BENCHMARKS))  # bench_peers_disclosure imports bench_disclosure
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


@pytest.fixture(scope="module")
def bench():
    return _module("bench_peers_disclosure")


@pytest.fixture(scope="module")
def table(bench):
    """Our rows for the six releases (300 members, 300 controls, 300-row releases)."""
    n_members = n_release = 300
    rng = np.random.default_rng(0)
    data = _module("bench_disclosure").adult_like(2 * n_members + 2 * n_release + 100, rng)
    parts = bench.split(data, n_members, 0, n_release, rng)
    tables = bench.stand_in_releases(parts, n_release, seed=0)
    tables["halfcopy"] = bench.half_copy(parts["members"], parts["filler"], rng)
    tables["fresh"] = parts["fresh"]
    return bench.ours(parts["members"], parts["control"], tables, n_queries=200, seed=0)


def test_six_releases_every_analysis_once(bench, table):
    assert sorted(set(table.release)) == sorted(bench.RELEASES)
    n_columns = 8  # the Adult-like table's columns
    per_release = table.groupby("release").size()
    assert (per_release == bench.family_size(n_columns)).all()
    assert set(table.analysis) == {"singling out", "linkability", "inference"}


def test_intervals_are_corrected_over_a_release(bench, table):
    k = bench.family_size(8)  # 2 singling out + 2 linkability + 8 columns + pooled
    assert k == 13
    assert np.allclose(table.confidence, 1 - 0.05 / k)
    finite = table.dropna(subset=["risk"])
    assert (finite.risk_low <= finite.risk).all() and (finite.risk <= finite.risk_high).all()


def _row(table, release, target):
    row = table[(table.release == release) & (table.target == target)]
    assert len(row) == 1
    return row.iloc[0]


@pytest.mark.parametrize(
    "target",
    ["1 neighbour(s)", "univariate", "pooled (one random secret per record)"],
)
def test_halfcopy_is_flagged_and_covers_its_truth(table, target):
    row = _row(table, "halfcopy", target)
    assert row.risk_low > 0, row
    assert row.risk_low <= 0.5 <= row.risk_high, row


def test_fresh_sample_intervals_cover_zero(table):
    fresh = table[table.release == "fresh"]
    assert len(fresh) == 13
    assert ((fresh.risk_low <= 0) & (fresh.risk_high >= 0)).all(), fresh


def test_checks_name_the_releases(bench, table):
    lines = bench.checks(table, None)
    assert lines[0].startswith("halfcopy linkability 1 neighbour(s): ours 0.")
    assert lines[-1] == "fresh: 13 of 13 intervals cover 0"


def test_rows_flagged_by_their_corrected_lower_bound(table):
    assert (table.flagged == (table.risk_low > 0)).all()
    assert not table[table.release == "fresh"].flagged.any()


def test_odds_ratio_share_narrows_the_per_column_intervals(bench, table):
    # both intervals exact at the same corrected level (tests/disclosure/test_rates.py): the
    # per-column inference intervals with the odds-ratio share against the rates' alone
    widths = bench.widths(table, None).set_index("release")
    for name in ("gaussiancopula", "ctgan", "tvae", "mst", "fresh"):
        assert widths.loc[name, "now"] < 0.95 * widths.loc[name, "before"], widths.loc[name]
    assert widths.loc["halfcopy", "flagged_now"] >= widths.loc["halfcopy", "flagged_before"]
