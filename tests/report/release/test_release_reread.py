"""The CLI's release read again for the disclosure risks (issue #28): with the disclosure
risks on, a release the CLI read from a regular file is let go before the analyses and read
again after them (the same ``read_table`` call), refused when the file changed in between;
the report is byte for byte the audit of the tables held in memory, as before."""

import os
import weakref

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError, read_table, write_report
from sklearn_mace.report._kinds.release import _audit
from sklearn_mace.report._kinds.release._audit import HandedOver, audit_release
from sklearn_mace.report._kinds.release._inputs import ReleaseFile, table_fingerprint
from tests._release_steps import watch_release_steps

CSVS = ("summary.csv", "disclosure.csv", "records.csv")


def _mixed(n, rng):
    """Mixed records: an integer, a float, two categories."""
    return pd.DataFrame(
        {
            "age": rng.integers(20, 70, n),
            "income": rng.normal(50, 10, n).round(2),
            "job": rng.choice(["nurse", "clerk", "cook", "driver"], n),
            "city": rng.choice(["north", "south", "east"], n),
        }
    )


def _files(folder, seed=0):
    """Members, non-members and two releases (one holds members verbatim and missing
    incomes, so the disclosure risks leave a column out on the release read again)."""
    rng = np.random.default_rng(seed)
    members, non_members = _mixed(60, rng), _mixed(60, rng)
    leaky = pd.concat([_mixed(200, rng), members.iloc[:20]], ignore_index=True)
    leaky.loc[[3, 50], "income"] = np.nan
    tables = {"members": members, "non-members": non_members}
    tables |= {"leaky": leaky, "fresh": _mixed(250, rng)}
    paths = {name: folder / f"{name}.csv" for name in tables}
    for name, frame in tables.items():
        frame.to_csv(paths[name], index=False)
    return paths


def _argv(paths, out):
    return [
        "audit",
        "--members",
        str(paths["members"]),
        "--non-members",
        str(paths["non-members"]),
        "--synthetic",
        f"leaky={paths['leaky']}",
        f"fresh={paths['fresh']}",
        "--out",
        str(out),
        "--quiet",
    ]


def _counted_reads(monkeypatch):
    """The releases :meth:`ReleaseFile.read` read again, by file name."""
    reads, read = [], ReleaseFile.read

    def counted(self):
        reads.append(self.path.name)
        return read(self)

    monkeypatch.setattr(ReleaseFile, "read", counted)
    return reads


def test_the_cli_audit_reads_its_releases_again_and_writes_the_same_report(tmp_path, monkeypatch):
    """summary.csv, disclosure.csv and records.csv of the CLI audit, whose releases are read
    again for the disclosure risks, equal byte for byte those of the audit of the same
    tables held in memory (a plain dict: never let go, never read again)."""
    paths = _files(tmp_path)
    reads = _counted_reads(monkeypatch)
    assert main(_argv(paths, tmp_path / "cli")) == 0
    assert reads == ["leaky.csv", "fresh.csv"]

    tables = {name: read_table(path) for name, path in paths.items()}
    held = {"leaky": tables["leaky"], "fresh": tables["fresh"]}
    result = audit_release(tables["members"], tables["non-members"], held, verbose=False)
    write_report(result, tmp_path / "held")
    assert reads == ["leaky.csv", "fresh.csv"]
    assert held["leaky"] is tables["leaky"]
    for name in CSVS:
        expected = (tmp_path / "held" / name).read_bytes()
        assert (tmp_path / "cli" / name).read_bytes() == expected, name
    disclosure = pd.read_csv(tmp_path / "cli" / "disclosure.csv")
    assert set(disclosure["subject"]) == {"leaky", "fresh"}


def _handed(paths, name="leaky"):
    """``(members, non-members, a HandedOver release with its file, a weak reference to the
    raw release)``, read as the CLI reads them."""
    source = ReleaseFile.before_reading(paths[name], "--synthetic", role=f"synthetic '{name}'")
    release = read_table(paths[name], **source.read_options)
    raw = weakref.ref(release)
    handed = HandedOver({name: release}, sources={name: source})
    del release
    return read_table(paths["members"]), read_table(paths["non-members"]), handed, raw


def test_a_handed_over_release_is_let_go_before_the_analyses_with_the_disclosure_risks(
    tmp_path, monkeypatch
):
    """With the disclosure risks on, the raw release handed over with its file is freed
    before the analyses (as without them) and read again for the disclosure risks, after
    the encoded release was let go; they read a table equal to the first read."""
    paths = _files(tmp_path)
    members, non_members, handed, raw = _handed(paths)
    seen = watch_release_steps(monkeypatch, "leaky", raw)
    result = audit_release(members, non_members, handed, verbose=False)
    assert seen["raw during the analyses"] is False
    assert seen["encoded during the disclosure risks"] is False
    pd.testing.assert_frame_equal(seen["release"], read_table(paths["leaky"]), check_exact=True)
    assert seen["release"] is not raw() and "disclosure" in result.tables
    assert result.n_rows["synthetic 'leaky'"] == 220


def _rewrite_same_size(path):
    """Another table in the file, of the same size and modification time: 12 becomes 21."""
    before = os.stat(path)
    text = path.read_text()
    changed = text.replace("12", "21", 1)
    assert changed != text and len(changed) == len(text)
    path.write_text(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _touch(path):
    stamp = os.stat(path).st_mtime_ns + 10**9
    os.utime(path, ns=(stamp, stamp))


def _append_row(path):
    with path.open("a") as handle:
        handle.write("33,40.5,cook,east\n")


@pytest.mark.parametrize(
    ("change", "how"),
    [
        (_touch, "its size or modification time differ"),
        (_append_row, "its size or modification time differ"),
        (lambda path: path.unlink(), "it is gone"),
        (_rewrite_same_size, "it holds another table"),
    ],
)
def test_a_release_file_changed_during_the_analyses_is_refused(tmp_path, monkeypatch, change, how):
    """The file changed while the analyses ran (a step of the engine changes it): the
    audit refuses it with an input error naming the file and its option, and computes no
    disclosure risk from it."""
    paths = _files(tmp_path)
    members, non_members, handed, _ = _handed(paths)
    run_subject = _audit.ReleaseAudit.run_subject

    def subject(engine, *args):
        change(paths["leaky"])
        return run_subject(engine, *args)

    def disclosure_risks(*args, **kwargs):
        pytest.fail("the disclosure risks ran on a changed file")

    monkeypatch.setattr(_audit.ReleaseAudit, "run_subject", subject)
    monkeypatch.setattr(_audit, "run_disclosure", disclosure_risks)
    with pytest.raises(AuditInputError, match="changed during the audit") as caught:
        audit_release(members, non_members, handed, verbose=False)
    message = str(caught.value)
    assert f"synthetic 'leaky' file '{paths['leaky']}' (--synthetic)" in message
    assert how in message and "disclosure=False" in message


def test_the_cli_reports_the_analyses_and_no_disclosure_risk_of_a_changed_file(
    tmp_path, monkeypatch
):
    """From the CLI (``on_error="report"``) the analyses' results are written and the
    disclosure risks fail with the reason (exit 3): no disclosure.csv, the summary as
    without the change."""
    paths = _files(tmp_path)
    assert main(_argv(paths, tmp_path / "before")) == 0
    run_subject = _audit.ReleaseAudit.run_subject

    def subject(engine, subject, *args):
        if subject.name == "fresh":
            _rewrite_same_size(paths["leaky"])
        return run_subject(engine, subject, *args)

    monkeypatch.setattr(_audit.ReleaseAudit, "run_subject", subject)
    assert main(_argv(paths, tmp_path / "after")) == 3
    assert not (tmp_path / "after" / "disclosure.csv").exists()
    for name in ("summary.csv", "records.csv"):
        before = (tmp_path / "before" / name).read_bytes()
        assert (tmp_path / "after" / name).read_bytes() == before, name
    html = (tmp_path / "after" / "report.html").read_text()
    assert "changed during the audit (it holds another table)" in html
    # the command line's words: its flag, not the Python parameter
    assert "--no-disclosure" in html and "disclosure=False" not in html


def test_what_cannot_be_read_twice_is_held(tmp_path):
    """A pipe is not read again (a second read would wait for a writer): no ReleaseFile,
    so the audit holds the table as before; nor a file that is not there."""
    fifo = tmp_path / "release.pipe"
    os.mkfifo(fifo)
    assert ReleaseFile.before_reading(fifo, "--synthetic") is None
    assert ReleaseFile.before_reading(tmp_path / "none.csv", "--synthetic") is None


def test_the_fingerprint_tells_tables_apart(tmp_path):
    """Equal for the same file read twice; another cell, type, column name or row order
    (the same rows) gives another, across the hashing blocks."""
    rng = np.random.default_rng(3)
    frame = _mixed(50, rng)
    frame.to_csv(tmp_path / "t.csv", index=False)
    first, second = read_table(tmp_path / "t.csv"), read_table(tmp_path / "t.csv")
    assert table_fingerprint(first, block=7) == table_fingerprint(second, block=7)
    others = [
        first.assign(income=first["income"].where(first.index != 40, 0.5)),
        first.assign(age=first["age"].astype(float)),
        first.rename(columns={"city": "town"}),
        first.iloc[::-1].reset_index(drop=True),
        first.iloc[:-1],
    ]
    found = {table_fingerprint(other, block=7) for other in others}
    assert table_fingerprint(first, block=7) not in found and len(found) == len(others)
