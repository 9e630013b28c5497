"""`sklearn-mace audit` from files: outputs, ground truth on a planted leak, clear errors."""

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, audit, encode_tables
from tests.audit_data import audit_tables

RELEASES = ("leaky", "safe")


def _write_inputs(folder, parquet_members=False):
    folder.mkdir()
    members, non_members, releases = audit_tables()
    paths = {
        "members": folder / ("members.parquet" if parquet_members else "members.csv"),
        "non-members": folder / "non_members.csv",
    }
    if parquet_members:
        members.to_parquet(paths["members"])
    else:
        members.to_csv(paths["members"], index=False)
    non_members.to_csv(paths["non-members"], index=False)
    for name, frame in releases.items():
        paths[name] = folder / f"synthetic_{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def _args(paths, out, *extra):
    return [
        "audit",
        "--members",
        str(paths["members"]),
        "--non-members",
        str(paths["non-members"]),
        "--synthetic",
        *[f"{name}={paths[name]}" for name in RELEASES],
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """One CLI run on the planted-leak tables (members read from Parquet)."""
    pytest.importorskip("pyarrow")
    root = tmp_path_factory.mktemp("cli")
    paths = _write_inputs(root / "inputs", parquet_members=True)
    work = root / "work"
    work.mkdir()
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(work)
        import contextlib
        import io

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert main(_args(paths, "report-out", "--group-by", "site")) == 0
    after = sorted(p.relative_to(root) for p in root.rglob("*"))
    return {
        "root": root,
        "out": work / "report-out",
        "before": before,
        "after": after,
        "printed": printed.getvalue(),
    }


def test_writes_report_csvs_and_figures_only_under_out(audited):
    out = audited["out"]
    for name in ("report.html", "summary.csv", "records.csv"):
        assert (out / name).stat().st_size > 0
    pngs = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert pngs == [
        "advantage_vs_synthetic_size.png",
        "risk_leaky.png",
        "risk_safe.png",
        "roc_leaky.png",
        "roc_safe.png",
    ]
    for png in (out / "figures").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    new = {p for p in audited["after"] if p not in set(audited["before"])}
    assert all(p.parts[:2] == ("work", "report-out") for p in new), new


def test_summary_certifies_the_planted_leak_and_not_the_safe_release(audited):
    summary = pd.read_csv(audited["out"] / "summary.csv")
    assert set(summary["release"]) == set(RELEASES)
    assert len(summary) == 2 * 4  # MACE + DOMIAS + MC + GAN-leaks CAL per release
    # every analysis carries a certified ε with the operating point it rests on
    assert np.isfinite(summary["epsilon_at_least"]).all()
    assert (summary["epsilon_at_least"] >= 0).all()
    assert summary[["fpr_upper", "fnr_upper"]].stack().between(0, 1).all()
    assert (summary["fpr_upper"] >= summary["fpr"]).all()
    assert (summary["fnr_upper"] >= summary["fnr"]).all()
    mace = summary[summary["analysis"].str.startswith("MACE")].set_index("release")
    trivial = abs(2 * 40 / 70 - 1)  # 40 members, 30 non-member targets (30 are the reference)
    # leaky: members sit 0.05·√3 from a synthetic copy, hold-out rows about 1 away, so
    # members and non-members separate almost perfectly: leakage must be certified
    assert mace.loc["leaky", "optimal_advantage_at_least"] > trivial + 0.3
    assert mace.loc["leaky", "p_value"] < 1e-6
    # a perfect separation of the 20 members and 15 non-members left for evaluation after
    # the split certifies at most ε ≈ 1.1 at 99 % per claim; ask for half of that
    assert summary.loc[summary["release"] == "leaky", "epsilon_at_least"].max() > 0.5
    # safe: the release is independent of the members (truth: no leak). All certified
    # claims hold together at 95 %, so this fails for at most 5 % of seeds; seed 0 is fixed
    safe = summary[summary["release"] == "safe"]
    assert (safe["epsilon_at_least"] == 0).all()
    assert mace.loc["safe", "optimal_advantage_at_least"] == pytest.approx(trivial)
    assert mace[["advantage_estimate", "estimate_lower", "estimate_upper"]].notna().all(axis=None)
    domias = summary[summary["analysis"].str.startswith("DOMIAS")].set_index("release")
    assert domias.loc["leaky", "auc"] > 0.9
    printed = audited["printed"]
    assert "hold together at 95% (each at 99.00%)" in printed  # Bonferroni over 5 claims
    assert "leaky: [leakage certified" in printed and "safe: [no leakage certified]" in printed
    assert "MACE optimal" in printed and "GAN-leaks CAL" in printed
    assert f"{mace.loc['leaky', 'optimal_advantage_at_least']:.3f}" in printed
    assert "column 'record_id' dropped" in printed


def test_cards_lead_with_certified_claims(audited):
    page = (audited["out"] / "report.html").read_text(encoding="utf-8")
    cards = page.split('<div class="card ')[1:]
    leaky, safe = (c for name in RELEASES for c in cards if f"<b>{name}</b>" in c)
    assert leaky.startswith(("high", "mid")) and "leakage certified" in leaky
    assert safe.startswith("low") and "no leakage certified" in safe
    # a member is named only where leakage is certified
    assert "most exposed member: row" in leaky
    assert "most exposed member: row" not in safe and "no member is named" in safe
    for card in (leaky, safe):
        assert "at least" in card and "p = " in card
        assert "estimate, not certified: U_N" in card


def test_records_rank_members_first_by_heldout_posterior(audited):
    records = pd.read_csv(audited["out"] / "records.csv")
    assert len(records) == 2 * 70
    score = "score: MACE optimal (nearest-synthetic distance)"
    for _, per_release in records.groupby("release"):
        assert per_release["rank"].tolist() == list(range(1, 71))
        assert per_release["member"].tolist() == [1] * 40 + [0] * 30
        for _, block in per_release.groupby("member"):
            assert block[score].is_monotonic_decreasing
        side = np.where(per_release[score] > 0, "member", "non-member")
        assert (per_release["posterior_points_to"] == side).all()
    assert set(records["site"]) == {"north", "south", "east"}
    assert records["heldout_risk"].between(0, 1).all()
    assert "risk_lower" not in records.columns  # in-sample intervals are not shown
    # leaky: every member is a near-copy; the held-out posterior must call it a member
    leaky = records[(records["release"] == "leaky") & (records["member"] == 1)]
    assert (leaky["posterior_points_to"] == "member").mean() > 0.9


def test_same_random_state_same_claims():
    members, non_members, releases = audit_tables()
    first, second = (
        audit(members, non_members, {"safe": releases["safe"]}, random_state=3, verbose=False)
        for _ in range(2)
    )
    pd.testing.assert_frame_equal(first.summary, second.summary)
    pd.testing.assert_frame_equal(first.records, second.records)
    pd.testing.assert_frame_equal(first.releases[0].size_curve, second.releases[0].size_curve)


def test_releases_audited_in_parallel_give_the_serial_report():
    # seeds are drawn per release up front: n_jobs changes nothing (threads: no start-up cost)
    from joblib import parallel_config

    members, non_members, releases = audit_tables()
    serial = audit(members, non_members, releases, random_state=5, verbose=False)
    with parallel_config(backend="threading"):
        parallel = audit(members, non_members, releases, random_state=5, n_jobs=2, verbose=False)
    pd.testing.assert_frame_equal(serial.summary, parallel.summary)
    pd.testing.assert_frame_equal(serial.records, parallel.records)


# ----------------------------------------------------------------------------- errors
@pytest.fixture
def inputs(tmp_path):
    return _write_inputs(tmp_path / "inputs")


def _fails(capsys, argv, match, out):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert match in err, err
    assert not out.exists()  # nothing written when the input is rejected


def test_missing_file(inputs, tmp_path, capsys):
    inputs["members"] = tmp_path / "nope.csv"
    _fails(capsys, _args(inputs, tmp_path / "out"), "no such file", tmp_path / "out")


def test_unreadable_and_empty_files(inputs, tmp_path, capsys):
    inputs["members"].write_bytes(b"")
    _fails(capsys, _args(inputs, tmp_path / "out"), "the file is empty", tmp_path / "out")
    inputs["members"] = tmp_path / "broken.parquet"
    inputs["members"].write_bytes(b"not parquet at all")
    _fails(capsys, _args(inputs, tmp_path / "out"), "as Parquet", tmp_path / "out")


def test_mismatched_columns(inputs, tmp_path, capsys):
    frame = pd.read_csv(inputs["safe"]).drop(columns="bmi").assign(weight=1.0)
    frame.to_csv(inputs["safe"], index=False)
    _fails(capsys, _args(inputs, tmp_path / "out"), "Mismatched columns", tmp_path / "out")
    _fails(
        capsys,
        _args(inputs, tmp_path / "out", "--columns", "age,bmi"),
        "lacks the requested column(s) ['bmi']",
        tmp_path / "out",
    )


def test_columns_selects_a_common_subset(inputs, tmp_path, capsys):
    frame = pd.read_csv(inputs["safe"]).drop(columns="bmi").assign(weight=1.0)
    frame.to_csv(inputs["safe"], index=False)
    # the columns common to all tables make the audit possible again
    args = _args(inputs, tmp_path / "out", "--columns", "age", "--columns", "glucose,site")
    assert main(args) == 0
    # age, glucose and site (3 categories -> 2 coordinates)
    assert "4 encoded features" in (tmp_path / "out" / "report.html").read_text()


def test_too_few_rows(inputs, tmp_path, capsys):
    pd.read_csv(inputs["members"]).head(5).to_csv(inputs["members"], index=False)
    _fails(capsys, _args(inputs, tmp_path / "out"), "Too few rows", tmp_path / "out")


def test_incomplete_inputs_and_bad_options(inputs, tmp_path, capsys):
    _fails(
        capsys,
        ["audit", "--members", str(inputs["members"]), "--out", str(tmp_path / "out")],
        "--non-members, --synthetic",
        tmp_path / "out",
    )
    _fails(capsys, _args(inputs, tmp_path / "out", "--prior", "1.5"), "(0, 1)", tmp_path / "out")
    _fails(
        capsys,
        _args(inputs, tmp_path / "out", "--group-by", "record_id"),
        "distinct values",
        tmp_path / "out",
    )
    # without input files the audit is the demo, which would ignore --prior: an error instead
    _fails(
        capsys,
        ["audit", "--prior", "0.01", "--out", str(tmp_path / "out")],
        "--prior need input files",
        tmp_path / "out",
    )
    _fails(
        capsys,
        _args(inputs, tmp_path / "out", "--epsilon", "abc"),
        "--epsilon must be a number",
        tmp_path / "out",
    )
    _fails(
        capsys,
        _args(inputs, tmp_path / "out", "--max-categories", "0"),
        "--max-categories must be an integer >= 1",
        tmp_path / "out",
    )
    _fails(
        capsys,
        _args(inputs, tmp_path / "out", "--delta", "1"),
        "--delta must be in [0, 1)",
        tmp_path / "out",
    )
    _fails(
        capsys,
        ["audit", "--delta", "1e-5", "--out", str(tmp_path / "out")],
        "--delta need input files",
        tmp_path / "out",
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=-1.0), "epsilon must be >= 0"),
        (dict(max_categories=0), "max_categories must be an int >= 1"),
        (dict(confidence=1.0), "confidence must be in"),
        (dict(delta=-0.1), "delta must be a number in"),
        (dict(delta=float("nan")), "delta must be a number in"),
        (dict(delta="0"), "delta must be a number in"),
    ],
)
def test_audit_rejects_bad_options_before_any_work(kwargs, match):
    # the Python entry point checks what argparse checks for the CLI: a negative ε used to
    # fail only when the figures were drawn, after summary.csv and records.csv were written
    members, non_members, releases = audit_tables()
    with pytest.raises(ValueError, match=match):
        audit(members, non_members, releases, verbose=False, **kwargs)


# ----------------------------------------------------------------------------- encoding
def test_encoding_choice():
    frames = {
        "a": pd.DataFrame(
            {
                "x": [1.0, 2.0, np.nan],
                "c": ["u", "v", "u"],
                "num_text": ["1", "2", "3"],
                "const": [5, 5, 5],
                "when": pd.to_datetime(["2020-01-01"] * 3),
                "ident": ["i1", "i2", "i3"],
            }
        ),
        "b": pd.DataFrame(
            {
                "x": [3.0, 4.0, 5.0],
                "c": ["w", "w", None],
                "num_text": ["4", "5", "6"],
                "const": [5, 5, 5],
                "when": pd.to_datetime(["2021-01-01"] * 3),
                "ident": ["i4", "i5", "i6"],
            }
        ),
    }
    arrays, names, report = encode_tables(frames, max_categories=4)
    treatment = dict(zip(report["column"], report["treatment"], strict=True))
    assert treatment["x"] == "standardized; 1 missing imputed with the median"
    assert treatment["c"] == "one-hot, 4 categories"  # u, v, w and <missing>
    assert treatment["num_text"] == "standardized"
    assert treatment["const"] == "dropped: constant"
    assert treatment["when"].startswith("dropped: date/time")
    assert treatment["ident"].startswith("dropped: 6 distinct text values")
    X = np.vstack([arrays["a"], arrays["b"]])
    x = X[:, names.index("x")]
    # median of {1, 2, 3, 4, 5} = 3 imputed, then standardized over all 6 rows
    raw = np.array([1, 2, 3, 3, 4, 5.0])
    np.testing.assert_allclose(x, (raw - raw.mean()) / raw.std())
    onehot = X[:, [i for i, n in enumerate(names) if n.startswith("c[")]]
    assert onehot.shape[1] == 3  # 4 categories in k − 1 coordinates
    # rows in different categories are exactly 1 apart (like one standard deviation),
    # rows in the same category 0 apart: rows 0, 1, 3, 5 are u, v, w, <missing>
    categories = onehot[[0, 1, 3, 5]]
    distances = np.linalg.norm(categories[:, None] - categories[None], axis=-1)
    np.testing.assert_allclose(distances, 1 - np.eye(4), atol=1e-12)
    assert np.linalg.norm(onehot[0] - onehot[2]) == pytest.approx(0.0, abs=1e-12)
    # and no coordinate is a combination of the others
    assert np.linalg.matrix_rank(np.cov(categories, rowvar=False)) == 3


def test_encoding_with_nothing_usable():
    frames = {"a": pd.DataFrame({"k": [1, 1]}), "b": pd.DataFrame({"k": [1, 1]})}
    with pytest.raises(AuditInputError, match="No usable column"):
        encode_tables(frames)


def test_singular_data_audits(inputs, tmp_path):
    # a column repeated under another name makes every covariance singular: DOMIAS's KDE
    # shrinks it (Ledoit-Wolf, sklearn_mace.density._covariance) and the audit runs (issue
    # #12 item 1; it used to stop with an error)
    for key in ("members", "non-members", "leaky", "safe"):
        frame = pd.read_csv(inputs[key])
        frame.assign(age_again=frame["age"]).to_csv(inputs[key], index=False)
    assert main(_args(inputs, tmp_path / "out")) == 0
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert summary.notna().any(axis=None)
