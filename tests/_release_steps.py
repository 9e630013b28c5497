"""What the release audit still holds at each of its steps (issue #28's memory tests):
``watch_release_steps`` wraps the steps with monkeypatch and records it."""

import weakref

from sklearn_mace.report._kinds.release import _audit


def watch_release_steps(monkeypatch, name, raw):
    """A dict the audit run after this call fills: whether the raw release (``raw``, a weak
    reference), the encoded release ``name`` and its row keys were alive during the
    analyses and the disclosure risks, and the release table the disclosure risks read."""
    seen = {}
    prepare, run_subject, disclose = (
        _audit.prepare_release_inputs,
        _audit.ReleaseAudit.run_subject,
        _audit.run_disclosure,
    )

    def prepared(*args, **kwargs):
        result = prepare(*args, **kwargs)
        seen["encoded"] = weakref.ref(result.synthetic[name])
        seen["keys"] = weakref.ref(result.synthetic_keys[name])
        return result

    def subject(engine, *args):
        seen["raw during the analyses"] = raw() is not None
        seen["keys during the analyses"] = seen["keys"]() is not None
        return run_subject(engine, *args)

    def disclosure_risks(tables, synthetic, *args, **kwargs):
        seen["encoded during the disclosure risks"] = seen["encoded"]() is not None
        seen["release"] = synthetic[name]
        assert tables[f"synthetic '{name}'"] is synthetic[name]
        return disclose(tables, synthetic, *args, **kwargs)

    monkeypatch.setattr(_audit, "prepare_release_inputs", prepared)
    monkeypatch.setattr(_audit.ReleaseAudit, "run_subject", subject)
    monkeypatch.setattr(_audit, "run_disclosure", disclosure_risks)
    return seen
