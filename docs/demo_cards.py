"""Sphinx extension: audit the three embedded demos at build time for "How to read a card".

When the HTML build starts, ``sklearn-mace audit``, ``sklearn-mace audit-model`` and
``sklearn-mace audit-algorithm`` run on their embedded demo data (about 10 s, 25 s and 60 s
on 2 busy cores) into ``generated/demo/``, and the one-run DP-SGD audit of
``guide/algorithm_card.rst`` (about 15 s) into ``generated/demo/one_run/``. The page
``guide/reading_cards.rst`` then shows

* the real report, card and table, in an ``<iframe>`` (the report is copied into the built
  site as ``_demo/<audit>/report.html``);
* the report's own figures (``generated/demo/<audit>/figures/*.png``);
* the numbers it explains, as substitutions (``|release_eps|``, …) read from the audits'
  ``summary.csv`` and input files (``generated/demo_values.txt``), so the prose quotes the
  numbers the card shows and cannot go stale: every number of the page about a demo is one
  of these substitutions.

The audits rerun only when a file of ``sklearn_mace/`` is newer than their reports.
"""

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEMO = HERE / "generated" / "demo"
AUDITS = {"release": ["audit"], "model": ["audit-model"], "algorithm": ["audit-algorithm"]}
#: the one-run card (``guide/algorithm_card.rst``): issue #30's DP-SGD command (opacus, ~15 s)
AUDITS["one_run"] = ["audit-algorithm", "--recipe", "dpsgd-logreg", "dpsgd-logreg-noise-bug"]
AUDITS["one_run"] += ["--design", "one-run", "--claimed-epsilon", "4"]


def _stale(report):
    if not report.exists():
        return True
    built = report.stat().st_mtime
    return any(path.stat().st_mtime > built for path in (ROOT / "sklearn_mace").rglob("*.py"))


def run_demos():
    """Run both demo audits into ``generated/demo/<audit>`` unless their reports are fresh."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    for folder, command in AUDITS.items():
        out = DEMO / folder
        if not _stale(out / "report.html"):
            continue
        # a generated folder: start afresh (a folder from before the report's manifest holds
        # report files that no manifest lists, which the writer refuses to overwrite)
        shutil.rmtree(out, ignore_errors=True)
        run = subprocess.run(
            [sys.executable, "-m", "sklearn_mace", *command, "--out", str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise RuntimeError(
                f"`sklearn-mace {' '.join(command)}` (a demo of the guide) failed with "
                f"exit code {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
            )
        (out / "printed.txt").write_text(_printed(run.stdout), encoding="utf-8")


def _printed(stdout):
    """The summary the CLI printed, without the progress bar and the machine's paths."""
    lines = []
    for line in stdout.splitlines():
        if line.startswith(("report:", "the same from files:")):
            continue
        lines.append(line.replace(str(DEMO) + os.sep, "<out>/"))
    return "\n".join(lines) + "\n"


def _rows(folder):
    with open(DEMO / folder / "summary.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _fmt(value, digits=2):
    return f"{float(value):.{digits}f}"


def _subject_values(prefix, rows, subject):
    """Substitutions for one subject's card, from its rows of summary.csv."""
    own = [row for row in rows if row["subject"] == subject and row["status"] == "ok"]
    head = max(own, key=lambda row: float(row["epsilon_lower_bound"]))
    adv = max(own, key=lambda row: float(row["advantage_lower_bound"]))
    bayes = next(row for row in own if row["analysis"].startswith("MACE Bayes rule ("))
    upper = max(own, key=lambda row: float(row["advantage_upper_bound"]))
    values = {
        "eps": _fmt(head["epsilon_lower_bound"]),
        "eps_half": _fmt(float(head["epsilon_lower_bound"]) / 2),
        "eps_source": head["analysis"],
        "eps_fpr": _fmt(head["fpr_upper"], 3),
        "eps_fnr": _fmt(head["fnr_upper"], 3),
        "adv": _fmt(adv["advantage_lower_bound"], 3),
        "adv_source": adv["analysis"],
        "upper": _fmt(upper["advantage_upper_bound"], 3),
        "upper_source": upper["analysis"],
        "un": _fmt(bayes["advantage_estimate"], 3),
        "un_low": _fmt(bayes["advantage_estimate_low"], 3),
        "un_high": _fmt(bayes["advantage_estimate_high"], 3),
        "un_eps": _fmt(bayes["epsilon_estimate"]),
        "p": f"{float(bayes['p_value']):.2g}",
        "auc": _fmt(bayes["auc"], 3),
        "tpr1": _fmt(bayes["tpr_at_1pct_fpr"], 3),
    }
    return {f"{prefix}_{key}": value for key, value in values.items()}


def _shared_values(prefix, rows):
    first = rows[0]
    confidence = float(first["claim_confidence"])
    return {
        f"{prefix}_trivial": _fmt(first["trivial_advantage"], 3),
        f"{prefix}_claims": first["n_claims"],
        f"{prefix}_claim_level": f"{100 * confidence:.2f} %",
        f"{prefix}_delta": f"{float(first['delta']):g}",
    }


def _exact_copy_heldout():
    """The leaky release's exact-copy rule's own held-out advantage (comparisons.csv)."""
    with open(DEMO / "release" / "comparisons.csv", newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["analysis"].startswith("Exact copy"):
                side = "a" if row["subject_a"] == "leaky" else "b"
                return _fmt(row[f"heldout_advantage_{side}"], 3)
    raise RuntimeError("the release demo's comparisons.csv has no exact-copy row")


def _n_rows(folder, name):
    """Data rows of an input file the demo wrote (``inputs/<name>.csv``)."""
    with open(DEMO / folder / "inputs" / f"{name}.csv", newline="", encoding="utf-8") as handle:
        return sum(1 for _ in csv.reader(handle)) - 1


def _targets_values(prefix, folder, rows):
    """Members, non-member targets, the prior, and the analyses of one subject."""
    n1, n0 = _n_rows(folder, "members"), _n_rows(folder, "non_members")
    first = rows[0]
    own = [row for row in rows if row["subject"] == first["subject"]]
    analyses = [row["analysis"] for row in own if row["role"] == "analysis"]
    values = {
        "members": n1,
        "nonmembers": n0,
        "targets": n1 + n0,
        "prior": _fmt(n1 / (n1 + n0), 3),
        "analyses": len(analyses),
        "figure_points": len(own) - len(analyses),
    }
    return {f"{prefix}_{key}": value for key, value in values.items()}


def _claim_relation(prefix, rows, subject):
    """Whether the card's advantage comes from the claim of its ε (its words)."""
    own = [row for row in rows if row["subject"] == subject and row["status"] == "ok"]
    head = max(own, key=lambda row: float(row["epsilon_lower_bound"]))
    adv = max(own, key=lambda row: float(row["advantage_lower_bound"]))
    same = head["analysis"] == adv["analysis"]
    return {f"{prefix}_adv_relation": "the same claim as ε" if same else "another claim"}


def _model_values(rows):
    values = {}
    for subject in ("overfit", "regularised"):
        row = next(row for row in rows if row["subject"] == subject)
        values[f"{subject}_format"] = row["format"]
        values[f"{subject}_train_accuracy"] = _fmt(row["train_accuracy"], 3)
        values[f"{subject}_test_accuracy"] = _fmt(row["test_accuracy"], 3)
    values["model_population"] = _n_rows("model", "population")
    return values


def _algorithm_values(rows):
    """The algorithm card of each demo recipe: its ε, source, error bounds, runs, power."""
    from sklearn_mace.metrics import detectable_epsilon

    first = rows[0]
    values = {
        "algorithm_claimed": f"{float(first['claimed_epsilon']):g}",
        "algorithm_runs": first["n_runs"],
        "algorithm_certify": first["n_certify_runs"],
        "algorithm_train_size": first["train_size"],
        "algorithm_claims": first["n_claims"],
        "algorithm_claim_level": f"{100 * float(first['claim_confidence']):.2f} %",
    }
    for prefix, name in (("correct", "dp-histogram"), ("wrong", "wrong-noise-histogram")):
        own = [row for row in rows if row["recipe_name"] == name and row["status"] == "ok"]
        head = max(own, key=lambda row: float(row["epsilon_lower_bound"]))
        values |= {
            f"{prefix}_recipe": head["subject"],
            f"{prefix}_eps": _fmt(head["epsilon_lower_bound"]),
            f"{prefix}_eps_source": head["analysis"],
            f"{prefix}_eps_fpr": _fmt(head["fpr_upper"], 3),
            f"{prefix}_eps_fnr": _fmt(head["fnr_upper"], 3),
            f"{prefix}_adv": _fmt(head["advantage_lower_bound"], 3),
            f"{prefix}_true_eps": f"{float(head['true_epsilon']):g}",
        }
    n = int(first["n_certify_runs"])
    detectable = detectable_epsilon(
        n,
        n,
        at_least=float(first["claimed_epsilon"]),
        delta=float(first["delta"]),
        confidence=float(first["claim_confidence"]),
        power=0.8,
    )
    values["algorithm_detectable"] = _fmt(detectable)
    values["algorithm_fit"] = int(first["n_runs"]) - n
    return values | _curve_values(rows)


def _curve_values(rows):
    """The algorithm card's trade-off figure and μ line (``guide/algorithm_card.rst``): each
    demo recipe's largest certified μ, its target's point and the claimed curve there."""
    from sklearn_mace.algorithm import PrivacyClaim
    from sklearn_mace.report._kinds.algorithm._view import implied_mu

    first = rows[0]
    claim = PrivacyClaim.approximate(float(first["claimed_epsilon"]), float(first["delta"]))
    family = 1 - int(first["n_claims"]) * (1 - float(first["claim_confidence"]))
    values = {
        "algorithm_implied_mu": _fmt(implied_mu(claim)),
        "algorithm_confidence": f"{100 * family:.0f} %",
    }
    for prefix, name in (("correct", "dp-histogram"), ("wrong", "wrong-noise-histogram")):
        own = [row for row in rows if row["recipe_name"] == name and row["status"] == "ok"]
        best = max(own, key=lambda row: float(row["mu_lower_bound"]))
        fpr, fnr = float(best["fpr_upper"]), float(best["fnr_upper"])
        mu = float(best["mu_lower_bound"])
        values |= {
            f"{prefix}_mu": _fmt(best["mu_lower_bound"]),
            f"{prefix}_mu_source": best["analysis"],
            f"{prefix}_mu_fpr": _fmt(fpr, 3),
            f"{prefix}_mu_fnr": _fmt(best["fnr_upper"], 3),
            f"{prefix}_mu_curve": _fmt(float(claim.tradeoff(fpr)), 3),
            f"{prefix}_contradicted": "yes" if best["contradicted"] == "True" else "no",
            f"{prefix}_side": "below" if fnr < float(claim.tradeoff(fpr)) else "on or above",
            f"{prefix}_mu_vs_implied": "above" if mu > implied_mu(claim) else "at most",
        }
    return values


def _one_run_values():
    """The one-run card (``guide/algorithm_card.rst``): issue #30's DP-SGD command, read
    from its summary.csv, guesses.csv and report.html."""
    import re

    rows = _rows("one_run")
    with open(DEMO / "one_run" / "guesses.csv", newline="", encoding="utf-8") as handle:
        guesses = list(csv.DictReader(handle))
    page = (DEMO / "one_run" / "report.html").read_text(encoding="utf-8")
    first = rows[0]
    keeping = re.search(r"a Gaussian mechanism keeps the claim up to μ = ([0-9.]+)", page)
    most = re.search(r"at most ε = ([0-9.]+) \(f-DP\) and μ = ([0-9.]+)", page)
    values = {
        "onerun_canaries": first["n_canaries"],
        "onerun_scored": first["n_scored_canaries"],
        "onerun_attack": int(first["n_canaries"]) - int(first["n_scored_canaries"]),
        "onerun_claimed_eps": _fmt(first["claimed_epsilon"]),
        "onerun_delta": f"{float(first['delta']):g}",
        "onerun_counts": sum(1 for g in guesses if g["recipe"] == first["recipe"]),
        "onerun_level": f"{100 * float(guesses[0]['confidence']):.2f} %",
        "onerun_keeping_mu": keeping.group(1),
        "onerun_most_eps": most.group(1),
        "onerun_most_mu": most.group(2),
    }
    for prefix, row in zip(("onerun_correct", "onerun_bug"), rows, strict=True):
        own = [g for g in guesses if g["recipe"] == row["recipe"]]
        best = max(own, key=lambda g: float(g["fdp_mu"]))
        values |= {
            f"{prefix}_recipe": row["recipe"],
            f"{prefix}_eps": _fmt(row["epsilon_lower_bound"]),
            f"{prefix}_fdp_eps": _fmt(row["fdp_epsilon_lower_bound"]),
            f"{prefix}_mu": _fmt(row["mu_lower_bound"]),
            f"{prefix}_guesses": row["n_guesses"],
            f"{prefix}_correct": row["n_correct"],
            f"{prefix}_mu_guesses": best["n_guesses"],
            f"{prefix}_mu_correct": best["n_correct"],
            f"{prefix}_contradicted": "yes" if row["contradicted"] == "True" else "no",
            f"{prefix}_rejected": sum(g["claim_rejected"] == "True" for g in own),
            f"{prefix}_vs_keeping": "above"
            if float(row["mu_lower_bound"]) > float(keeping.group(1))
            else "at most",
            f"{prefix}_fdp_vs_claim": "above"
            if float(row["fdp_epsilon_lower_bound"]) > float(first["claimed_epsilon"])
            else "at most",
        }
    return values


def write_values():
    """Write ``generated/demo_values.txt``: one substitution per number the page quotes."""
    release, model, algorithm = _rows("release"), _rows("model"), _rows("algorithm")
    values = {
        **_shared_values("release", release),
        **_targets_values("release", "release", release),
        **_subject_values("leaky", release, "leaky"),
        **_subject_values("safe", release, "safe"),
        **_claim_relation("leaky", release, "leaky"),
        **_shared_values("model", model),
        **_targets_values("model", "model", model),
        **_subject_values("overfit", model, "overfit"),
        **_subject_values("regularised", model, "regularised"),
        **_claim_relation("overfit", model, "overfit"),
        **_model_values(model),
        **_algorithm_values(algorithm),
        **_one_run_values(),
    }
    values["release_reference"] = _n_rows("release", "reference")
    values["exact_heldout"] = _exact_copy_heldout()
    values["model_analyses_list"] = ", ".join(
        f"**{row['analysis']}**"
        for row in model
        if row["subject"] == "overfit" and row["role"] == "analysis"
    )
    leaky = next(row for row in release if row["subject"] == "leaky")
    counts = ("synthetic_rows", "member_targets", "nonmember_targets")
    copies = ("member_exact_copies", "nonmember_exact_copies")
    copies += ("member_near_copies", "nonmember_near_copies")
    for key in counts + copies:
        values[f"leaky_{key}"] = leaky[key]
    lines = [f".. |{key}| replace:: {value}" for key, value in sorted(values.items())]
    path = HERE / "generated" / "demo_values.txt"
    text = "\n".join(lines) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _on_builder_inited(app):
    if app.builder.format != "html":
        return
    run_demos()
    write_values()


def _on_build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for folder in AUDITS:
        target = Path(app.outdir) / "_demo" / folder
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(DEMO / folder / "report.html", target / "report.html")


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
