"""Output formats: one module per format, each with `render(ScanResult) -> str` and, where the
format can stream, `write(ScanResult, TextIO)` (the others are written from `render`).

The registry maps a format name to its module, imported only when used, so `check` never pays
for a format it does not print.
"""

from __future__ import annotations

from importlib import import_module
from typing import TextIO

from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.results import ScanResult
from gpu_audit.report.formats import OUTPUT_EXTENSIONS, check_extension, format_for

__all__ = [
    "OUTPUT_EXTENSIONS",
    "REPORTERS",
    "check_extension",
    "format_for",
    "render",
    "write_report",
]

REPORTERS: dict[str, str] = {
    "table": "gpu_audit.report.table",
    "text": "gpu_audit.report.text",
    "json": "gpu_audit.report.json",
    "markdown": "gpu_audit.report.markdown",
    "sarif": "gpu_audit.report.sarif",
    "csv": "gpu_audit.report.csv",
}


def render(format_name: str, result: ScanResult) -> str:
    """The report in `format_name` (a REPORTERS key), its module imported on first use."""
    module = import_module(REPORTERS[format_name])
    text: str = module.render(result)
    return text


def write_report(format_name: str, result: ScanResult, stream: TextIO) -> None:
    """The report to `stream`, streamed where the format allows: for `write_atomic(path, ...)`,
    e.g. `write_atomic(path, functools.partial(write_report, "json", result))`."""
    module = import_module(REPORTERS[format_name])
    with paused_gc():  # a big report allocates millions of short-lived acyclic lists
        if hasattr(module, "write"):
            module.write(result, stream)
        else:
            stream.write(module.render(result))
