"""The embedded default of `make demo`: the leaky release leaks, the safer one much less."""

import numpy as np
import pytest

from sklearn_mace.report import encode_tables
from sklearn_mace.report._kinds.release._demo import make_demo_tables
from sklearn_mace.utils._neighbors import nearest_sq_distances


def test_demo_tables_plant_the_contrast():
    members, non_members, reference, releases = make_demo_tables(random_state=0)
    assert (len(members), len(non_members), len(reference)) == (200, 185, 184)
    assert set(releases) == {"leaky", "safe"}
    for frame in releases.values():
        assert list(frame.columns) == list(members.columns) and len(frame) == 1000
    tables = {"members": members, "non-members": non_members, **{k: v for k, v in releases.items()}}
    arrays, _, report = encode_tables(tables)
    assert report.set_index("column").loc["patient_id", "features"] == 0  # identifier dropped
    # measured medians (member / hold-out): leaky 1.44 / 2.59, safe 3.45 / 3.71
    for name, ratio in (("leaky", 0.7), ("safe", 0.85)):
        d_mem = np.sqrt(nearest_sq_distances(arrays["members"], arrays[name])[:, 0])
        d_non = np.sqrt(nearest_sq_distances(arrays["non-members"], arrays[name])[:, 0])
        if name == "leaky":  # samples of tight components sit next to the members
            assert np.median(d_mem) < ratio * np.median(d_non)
        else:  # a 3-component mixture does not reproduce individuals
            assert np.median(d_mem) > ratio * np.median(d_non)


@pytest.mark.slow
def test_full_demo_certifies_the_leaky_release_only(tmp_path, capsys):
    from sklearn_mace.cli import build_parser, run_kind

    args = build_parser().parse_args(["demo", "--out", str(tmp_path / "demo"), "--quiet"])
    result = run_kind(args.kind, args)  # the command line's path, which returns the result
    summary = result.summary
    assert not result.partial
    assert np.isfinite(summary["epsilon_lower_bound"]).all()
    assert (summary["epsilon_lower_bound"] >= 0).all()
    # the safer release's true advantage is small (about 0.04): nothing may be certified,
    # figure points included
    safe = result.subject("safe")
    assert not safe.certified_leak and result.verdict(safe) == "inconclusive"
    assert (summary.loc[summary["subject"] == "safe", "epsilon_lower_bound"] == 0).all()
    # the leaky release puts samples next to the members: it must be flagged
    leaky = result.subject("leaky")
    assert leaky.certified_leak and result.verdict(leaky) == "leak"
    assert leaky.ranking_result().scores.estimates["p_value"] < 1e-6
    page = (tmp_path / "demo" / "report.html").read_text(encoding="utf-8")
    assert "no leakage certified" in page and "most exposed member: row" in page
    printed = capsys.readouterr().out
    assert "safe: [inconclusive: no leakage certified, and none bounded]" in printed
    assert "leaky: [leakage certified" in printed
