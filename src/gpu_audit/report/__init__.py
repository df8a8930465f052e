"""Output formats: one module per format, each with `render(ScanResult) -> str`.

The registry maps a format name to its module, imported only when used, so `check` never pays
for a format it does not print.
"""

from __future__ import annotations

from importlib import import_module

from gpu_audit.model import ScanResult

REPORTERS: dict[str, str] = {
    "table": "gpu_audit.report.table",
    "text": "gpu_audit.report.text",
    "json": "gpu_audit.report.json",
    "markdown": "gpu_audit.report.markdown",
    "sarif": "gpu_audit.report.sarif",
    "csv": "gpu_audit.report.csv",
}


def render(format_name: str, result: ScanResult) -> str:
    module = import_module(REPORTERS[format_name])
    text: str = module.render(result)
    return text
