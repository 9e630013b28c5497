"""The audit: default battery, report writer (HTML, CSV, PNG) and input handling."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._battery": ["AuditResult", "ReleaseResult", "audit"],
        "._encode": ["encode_tables"],
        "._html": ["write_report"],
        "._io": ["AuditInputError", "AuditInputWarning", "read_table"],
    },
)
