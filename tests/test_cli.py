"""`sklearn-mace audit` from files: outputs, ground truth on a planted leak, clear errors."""

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, audit_release, encode_tables
from sklearn_mace.report._kinds.release._audit import EXACT_NAME, MACE_BAYES, MACE_BEST
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
        "risk_1_leaky.png",
        "risk_2_safe.png",
        "roc_1_leaky.png",
        "roc_2_safe.png",
    ]
    for png in (out / "figures").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    new = {p for p in audited["after"] if p not in set(audited["before"])}
    assert all(p.parts[:2] == ("work", "report-out") for p in new), new


def test_comparisons_read_the_safe_release_as_leaking_less(audited):
    # the fixed-rule analyses (MACE's Bayes rule, the exact-copy test), one pair: 2 tests
    table = pd.read_csv(audited["out"] / "comparisons.csv").set_index("analysis")
    assert list(table.index) == [MACE_BAYES.name, EXACT_NAME]
    assert (table["family_size"] == 2).all()
    assert table.loc[MACE_BAYES.name, "reading"] == "'safe' leaks less than 'leaky'"
    assert table.loc[EXACT_NAME, "reading"] == "no difference shown"  # no verbatim copies
    assert "'safe' leaks less than 'leaky'" in audited["printed"]


def test_summary_certifies_the_planted_leak_and_not_the_safe_release(audited):
    summary = pd.read_csv(audited["out"] / "summary.csv")
    assert set(summary["subject"]) == set(RELEASES)
    # MACE's Bayes rule and best-ε threshold, DOMIAS, MC, GAN-leaks CAL, exact copy, and the
    # three points of the release-size figure, per release
    assert len(summary) == 2 * 9 and (summary["role"] == "figure").sum() == 2 * 3
    assert (summary["status"] == "ok").all()
    assert (summary["n_claims"] == 9).all()
    assert summary["claim_confidence"].to_numpy() == pytest.approx(1 - 0.05 / 9)
    # every analysis carries a certified ε with the operating point it rests on
    assert np.isfinite(summary["epsilon_lower_bound"]).all()
    assert (summary["epsilon_lower_bound"] >= 0).all()
    assert summary[["fpr_upper", "fnr_upper"]].stack().between(0, 1).all()
    assert (summary["fpr_upper"] >= summary["fpr"]).all()
    assert (summary["fnr_upper"] >= summary["fnr"]).all()
    by = summary.set_index(["subject", "analysis"])
    trivial = abs(2 * 40 / 70 - 1)  # 40 members, 30 non-member targets (30 are the reference)
    assert summary["trivial_advantage"].to_numpy() == pytest.approx(trivial)
    # leaky: members sit 0.05·√3 from a synthetic copy, hold-out rows about 1 away, so
    # members and non-members separate almost perfectly: leakage must be certified
    bayes = by.loc[("leaky", MACE_BAYES.name)]
    assert bayes["threshold_strategy"] == "explicit"
    assert bayes["advantage_lower_bound"] > trivial + 0.3
    assert bayes["p_value"] < 1e-6
    assert by.loc[("leaky", MACE_BEST.name), "threshold_strategy"] == "split"
    assert by.loc[("leaky", EXACT_NAME), "threshold_strategy"] == "explicit"
    # a perfect separation of 40 members and 30 non-members certifies at most ε ≈ 1.9 at
    # 1 − 0.05/9 per claim (Bayes rule, all targets); ask for half of that
    assert summary.loc[summary["subject"] == "leaky", "epsilon_lower_bound"].max() > 0.9
    # safe: the release is independent of the members (truth: no leak). All certified
    # claims hold together at 95 %, so this fails for at most 5 % of seeds; seed 0 is fixed
    safe = summary[summary["subject"] == "safe"]
    assert (safe["epsilon_lower_bound"] == 0).all()
    assert safe["advantage_lower_bound"].to_numpy() == pytest.approx(trivial)
    estimates = ["advantage_estimate", "advantage_estimate_low", "advantage_estimate_high"]
    assert by.loc[("safe", MACE_BAYES.name), estimates].notna().all()
    assert by.loc[("leaky", "DOMIAS (KDE, cross-validated bandwidth)"), "auc"] > 0.9
    printed = audited["printed"]
    assert "hold together at 95% (Bonferroni: 9 claims each at 99.44%)" in printed
    assert (
        "leaky: [leakage certified" in printed
        and "safe: [inconclusive: no leakage certified, and none bounded]" in printed
    )
    assert "MACE Bayes rule" in printed and "GAN-leaks CAL" in printed
    assert f"{bayes['advantage_lower_bound']:.3f}" in printed
    assert "column 'record_id' dropped" in printed


def test_cards_lead_with_certified_claims(audited):
    page = (audited["out"] / "report.html").read_text(encoding="utf-8")
    cards = page.split('<div class="card ')[1:]
    leaky, safe = (c for name in RELEASES for c in cards if f"<b>{name}</b>" in c)
    assert leaky.startswith("leak") and "leakage certified" in leaky
    assert safe.startswith("inconclusive") and "no leakage certified" in safe
    # a member is named only where leakage is certified
    assert "most exposed member: row" in leaky
    assert "most exposed member: row" not in safe and "no record is named" in safe
    for card in (leaky, safe):
        assert "at least" in card and "p = " in card
        assert "estimate, not certified" in card and "U_N = " in card
        assert "the largest of the 9 certified numbers of this card" in card


def test_records_rank_members_first_by_heldout_posterior(audited):
    records = pd.read_csv(audited["out"] / "records.csv")
    assert len(records) == 2 * 70
    # the same first columns as the model audit's records.csv
    # (tests/report/model/test_audit_model.py)
    core = ["subject", "rank", "source", "row", "member", "site", "risk_estimate"]
    assert list(records.columns[:9]) == [*core, "posterior_points_to", "exposed"]
    score = f"score: {MACE_BAYES.name}"
    assert f"score: {MACE_BEST.name}" not in records  # the same scores: one column
    for _, per_subject in records.groupby("subject"):
        assert per_subject["rank"].tolist() == list(range(1, 71))
        assert per_subject["member"].tolist() == [1] * 40 + [0] * 30
        for _, block in per_subject.groupby(["member", "exposed"]):
            assert block[score].is_monotonic_decreasing
        side = np.where(per_subject[score] > 0, "member", "non-member")
        assert (per_subject["posterior_points_to"] == side).all()
    assert set(records["site"]) == {"north", "south", "east"}
    assert records["risk_estimate"].between(0, 1).all()
    assert "risk_lower" not in records.columns  # in-sample intervals are not shown
    # leaky: every member is a near-copy; the held-out posterior must call it a member
    leaky = records[(records["subject"] == "leaky") & (records["member"] == 1)]
    assert (leaky["posterior_points_to"] == "member").mean() > 0.9
    assert not records.loc[records["subject"] == "safe", "exposed"].any()


def test_same_random_state_same_claims():
    members, non_members, releases = audit_tables()
    first, second = (
        audit_release(
            members, non_members, {"safe": releases["safe"]}, random_state=3, verbose=False
        )
        for _ in range(2)
    )
    pd.testing.assert_frame_equal(first.summary, second.summary)
    pd.testing.assert_frame_equal(first.records, second.records)


def test_releases_audited_in_parallel_give_the_serial_report():
    # seeds are drawn per release up front: n_jobs changes nothing (threads: no start-up cost)
    from joblib import parallel_config

    members, non_members, releases = audit_tables()
    serial = audit_release(members, non_members, releases, random_state=5, verbose=False)
    with parallel_config(backend="threading"):
        parallel = audit_release(
            members, non_members, releases, random_state=5, n_jobs=2, verbose=False
        )
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
        _args(inputs, tmp_path / "out", "--claimed-epsilon", "abc"),
        "--claimed-epsilon must be a number",
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
        (dict(claimed_epsilon=-1.0), "claimed_epsilon must be >= 0"),
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
        audit_release(members, non_members, releases, verbose=False, **kwargs)


# ----------------------------------------------------------------------------- encoding
def test_encoding_choice():
    frames = {
        "a": pd.DataFrame(
            {
                "x": [1.0, 2.0, np.nan, 7.0],
                "c": ["u", "v", "w", None],
                "num_text": ["1", "2", "3", "4"],
                "const": [5, 5, 5, 5],
                "when": pd.to_datetime(["2020-01-01"] * 4),
                "when_text": ["2020-01-01", "2020-02-01", "2020-03-01", "2020-01-01"],
                "ident": ["i1", "i2", "i3", "i4"],
            }
        ),
        "b": pd.DataFrame(
            {
                "x": [3.0, 4.0, 5.0, 6.0],
                "c": ["w", None, "u", "v"],
                "num_text": ["4", "5", "6", "7"],
                "const": [5, 5, 5, 5],
                "when": pd.to_datetime(["2021-01-01"] * 4),
                "when_text": ["2020-01-01", "2020-02-01", "2020-03-01", "2020-02-01"],
                "ident": ["i5", "i6", "i7", "i8"],
            }
        ),
    }
    arrays, names, report, encoder = encode_tables(frames, max_categories=4, return_encoder=True)
    treatment = dict(zip(report["column"], report["treatment"], strict=True))
    assert treatment["x"] == "numeric, robustly scaled; 1 missing imputed with the median"
    assert treatment["c"] == "one-hot, 4 categories"  # u, v, w and <missing>
    assert treatment["num_text"] == "numeric, robustly scaled"
    assert treatment["const"] == "dropped: constant"
    assert treatment["when"].startswith("dropped: date/time")
    assert treatment["when_text"].startswith("dropped: date/time")  # 3 distinct dates as text
    assert treatment["ident"].startswith("dropped: 8 distinct text values")
    X = np.vstack([arrays["a"], arrays["b"]])
    x = X[:, names.index("x")]
    # the median 4 imputed, then centred on the median, divided by IQR / 1.349
    raw = np.array([1, 2, 4, 7, 3, 4, 5, 6.0])
    q25, q75 = np.percentile(raw, [25, 75])
    np.testing.assert_allclose(x, (raw - np.median(raw)) / ((q75 - q25) / 1.3489795003921634))
    # the fitted ColumnTransformer maps a new table into the same space
    np.testing.assert_allclose(
        encoder.transform(frames["b"][encoder.feature_names_in_]), arrays["b"]
    )
    onehot = X[:, [i for i, n in enumerate(names) if n.startswith("c[")]]
    assert onehot.shape[1] == 3  # 4 categories in k − 1 coordinates
    # rows in different categories are exactly 1 apart (like one standard deviation),
    # rows in the same category 0 apart: rows 0, 1, 2, 3 are u, v, w, <missing>
    categories = onehot[[0, 1, 2, 3]]
    distances = np.linalg.norm(categories[:, None] - categories[None], axis=-1)
    np.testing.assert_allclose(distances, 1 - np.eye(4), atol=1e-12)
    assert np.linalg.norm(onehot[0] - onehot[6]) == pytest.approx(0.0, abs=1e-12)  # u, u
    # and no coordinate is a combination of the others
    assert np.linalg.matrix_rank(np.cov(categories, rowvar=False)) == 3


def test_encoding_with_nothing_usable():
    frames = {"a": pd.DataFrame({"k": [1, 1]}), "b": pd.DataFrame({"k": [1, 1]})}
    with pytest.raises(AuditInputError, match="No usable column"):
        encode_tables(frames)


def test_exactly_dependent_column_is_dropped_and_named(inputs, tmp_path, capsys):
    # a column repeated under another name (here in other units) makes every covariance
    # singular: the encoder drops it, names it, and the audit runs
    for key in ("members", "non-members", "leaky", "safe"):
        frame = pd.read_csv(inputs[key])
        frame.assign(age_again=3 * frame["age"] + 1).to_csv(inputs[key], index=False)
    assert main(_args(inputs, tmp_path / "out")) == 0
    assert "column 'age_again' dropped: linear in 'age'" in capsys.readouterr().out


def test_files_and_printed_lines_say_what_they_mean(audited):
    # issue #27: each of these read wrongly before
    summary = pd.read_csv(audited["out"] / "summary.csv")
    bayes = summary[summary["analysis"] == MACE_BAYES.name]
    # the Bayes rule "score > 0" is written 0, not the smallest float 5e-324
    assert (bayes["threshold"] == 0.0).all()
    assert not summary["threshold"].between(0, 1e-300, inclusive="neither").any()
    printed = audited["printed"]
    verdicts = [line for line in printed.splitlines() if line.startswith(("leaky: [", "safe: ["))]
    assert len(verdicts) == 2
    for line in verdicts:  # a name ending in ")" is never put inside another pair
        assert ")) (" not in line and ") (substitute-one" not in line
        assert "substitute-one (add/remove-one: " in line
    # no reference given: the note says what the split does to the prior
    assert (
        "the members' share of the targets (the prior, unless one is given) is 40 of 70 = "
        "0.571, not the 0.400" in printed
    )
    page = (audited["out"] / "report.html").read_text(encoding="utf-8")
    # the safe release's rows sit on the trivial advantage: the floor is explained
    assert "An advantage ≥ is never below the trivial |2p − 1|" in page
    # 30 non-member targets: at 1 % and 0.1 % FPR no false positive is allowed
    assert "With 30 non-members, 1 % and 0.1 % FPR mean zero false positives" in page
    assert "<b>MACE best-ε threshold</b>: the same held-out scores" in page
