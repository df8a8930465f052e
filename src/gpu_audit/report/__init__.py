"""Output formats: one module per format, each with `render(ScanResult) -> str` and, where the"""

from gpu_audit.report.registry import (
    OUTPUT_EXTENSIONS,
    REPORTERS,
    check_extension,
    format_for,
    render,
    write_report,
)

__all__ = [
    "OUTPUT_EXTENSIONS",
    "REPORTERS",
    "check_extension",
    "format_for",
    "render",
    "write_report",
]
