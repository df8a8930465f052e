"""Output formats: one module per format, each with `render(ScanResult) -> str` and, where the"""

from gpu_audit.report.formats import COMMANDS, OUTPUT_EXTENSIONS, check_extension, format_for
from gpu_audit.report.registry import REPORTERS, render, write_report

__all__ = [
    "COMMANDS",
    "OUTPUT_EXTENSIONS",
    "REPORTERS",
    "check_extension",
    "format_for",
    "render",
    "write_report",
]
