"""The audits — of synthetic releases and of trained models — and their reports.

Both audits run through one engine (``_engine.py``) under one set of claim rules
(``docs/design.md``, "The report layer"): :func:`audit_release` and :func:`audit_model` return an
:class:`AuditResult`, and :func:`write_report` writes either to a folder (HTML, CSV, PNG), as it
writes the one-run audit of training recipes (``audit_algorithm(..., design="one_run")``, a
:class:`OneRunResult`).
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._encode": ["encode_tables"],
        "._io": ["AuditInputError", "AuditInputWarning", "read_table"],
        "._kinds.algorithm._audit": ["audit_algorithm"],
        "._kinds.algorithm._types": ["OneRunRecipe", "OneRunResult"],
        "._kinds.model._audit": ["audit_model"],
        "._kinds.model._io": ["load_model"],
        "._kinds.release._audit": ["audit_release"],
        "._results": ["AnalysisResult", "AuditResult", "SubjectResult"],
        "._show": ["write_report"],
    },
)
