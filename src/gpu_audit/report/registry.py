"""Output formats: one module per format, each with `render(ScanResult) -> str` and, where the
format can stream, `write(ScanResult, TextIO)` (the others are written from `render`).

The registry maps a format name to its module, imported only when used, so `check` never pays
for a format it does not print.
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import TextIO

from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.results import ScanResult
from gpu_audit.errors import ConfigError

REPORTERS: dict[str, str] = {
    "table": "gpu_audit.report.table",
    "text": "gpu_audit.report.text",
    "json": "gpu_audit.report.json",
    "markdown": "gpu_audit.report.markdown",
    "sarif": "gpu_audit.report.sarif",
    "csv": "gpu_audit.report.csv",
}

OUTPUT_EXTENSIONS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".sarif": "sarif",
    ".csv": "csv",
    ".txt": "text",
}


def check_extension(path: str, format_name: str) -> str | None:
    """Refuse an output path whose extension names another format than the one given
    (`--format markdown -o r.json`), or, with no format given (`format_name` empty), an
    extension no format writes (`-o r.html`: which format would it be?). With a format given,
    any other name is the user's business (`--format json -o report.out`); a path with no
    extension (`report`, `/dev/stdout`) takes any format. None, or raises ConfigError (the
    `str` return is kept for callers that print a warning)."""
    extension = os.path.splitext(path)[1].lower()
    if not extension:
        return None
    named = OUTPUT_EXTENSIONS.get(extension)
    if named is None and format_name:
        return None
    if named is None:
        known = ", ".join(OUTPUT_EXTENSIONS)
        raise ConfigError(
            f"{path}: no format writes '{extension}' files (the extensions: {known}; "
            "or name the format with --format)"
        )
    if not format_name or named == format_name or (named == "text" and format_name == "table"):
        return None
    raise ConfigError(
        f"{path}: the '{extension}' extension names the {named} format, not {format_name}: "
        f"give --format {named}, or a name that says {format_name}"
    )


def format_for(output: str | None, terminal: bool) -> str:
    """The report format an output path's extension names; else table on a terminal, or text."""
    extension = os.path.splitext(output or "")[1].lower()
    return OUTPUT_EXTENSIONS.get(extension) or ("table" if terminal else "text")


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
