"""The audit: default battery, report writer (HTML, CSV, PNG) and input handling."""

from ._battery import AuditResult, ReleaseResult, audit
from ._encode import encode_tables
from ._html import write_report
from ._io import AuditInputError, read_table

__all__ = [
    "AuditInputError",
    "AuditResult",
    "ReleaseResult",
    "audit",
    "encode_tables",
    "read_table",
    "write_report",
]
