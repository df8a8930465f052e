"""The one format list: each output format's file extensions, which formats each command offers,
and `format_for`, the choice every command's `--format`/`-o` makes from them."""

from __future__ import annotations

import os

from gpu_audit.errors import ConfigError

# The extensions `-o` reads a format from (a table has none: it is for a terminal).
OUTPUT_EXTENSIONS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".sarif": "sarif",
    ".csv": "csv",
    ".txt": "text",
}

_REPORT = ("table", "text", "json", "markdown", "sarif", "csv")  # the scan report's reporters
_LISTING = ("table", "json")  # a listing: a table to read, JSON for scripts

# What each command offers, in the order its `--format` lists them.
COMMANDS: dict[str, tuple[str, ...]] = {
    "check": _REPORT,
    "scan": _REPORT,
    "merge": _REPORT,
    "history show": _REPORT,
    "diff": ("table", "text", "markdown", "json", "csv", "sarif"),
    "estimate": ("table", "text", "json", "markdown"),
    "billing": ("table", "json", "csv", "markdown"),
    "history list": _LISTING,
    "history trend": _LISTING,
    "history reservations": _LISTING,
    "catalog lookup": _LISTING,
    "catalog diff": _LISTING,
}


def offered(command: str) -> list[str]:
    """The formats `command` writes, for its `--format` choice."""
    return list(COMMANDS[command])


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


def format_for(
    command: str,
    path: str | None,
    explicit: str | None,
    terminal: bool = False,
    piped: str = "text",
) -> str:
    """The format `command` writes: `--format` (`explicit`), else the one `-o`'s extension
    names (`.txt` is a table for a command with no text), else table on a terminal and `piped`
    otherwise. Raises ConfigError, before any work, for an extension that names another format
    or none, and for a format the command does not write (`estimate -o e.sarif`)."""

    offers = COMMANDS[command]
    if path:
        check_extension(path, explicit or "")
    named = OUTPUT_EXTENSIONS.get(os.path.splitext(path or "")[1].lower())
    if named == "text" and "text" not in offers:
        named = "table"
    chosen = explicit or named or ("table" if terminal else piped)
    if chosen not in offers:
        where = f"{path}: " if path and not explicit else ""
        raise ConfigError(
            f"{where}{command} writes no {chosen}; its formats: {', '.join(offers)} "
            "(or name one with --format)"
        )
    return chosen
