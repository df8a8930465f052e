"""The promises every run keeps, checked on the real CLI run in-process (click's CliRunner).

No exception escapes; the exit code is 0, 1, 2 or 3; every stderr line is one
`gpu-audit: error: FILE:LINE: …` (or a file-level `FILE: …`, or an `incomplete:` coverage gap);
every JSON and SARIF report parses strictly (no NaN/Infinity) and validates against its schema.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner, Result

from gpu_audit.cli import main
from tests.conftest import SHARED

SARIF_SCHEMA = SHARED / "reference" / "sarif-schema-2.1.0.json"
EXIT_CODES = {0, 1, 2, 3}
HANG_SECONDS = 30
# Whole-file problems have no line to name: the file is the location.
FILE_LEVEL = re.compile(
    r"(cannot read|file is larger than|binary content|not UTF-8 text|not a regular file)"
)


class Broken(AssertionError):
    """A promise the CLI did not keep; the message says which and shows the input."""


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (not hang) when one run takes longer than `seconds`."""

    def expire(signum: int, frame: Any) -> None:
        raise Broken(f"hang: no answer in {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def invoke(args: Sequence[str]) -> Result:
    with deadline(HANG_SECONDS):
        return CliRunner().invoke(main, list(args), catch_exceptions=True)


def check_run(result: Result, inputs: Sequence[str], fmt: str | None, text: str) -> None:
    """Every promise of one run; raises Broken naming the first one not kept."""
    where = f"\n--- input ({len(text)} chars) ---\n{text[:1500]}\n--- stderr ---\n{result.stderr[:1500]}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = result.exception
        raise Broken(f"exception escaped: {type(exc).__name__}: {exc}{where}") from exc
    if result.exit_code not in EXIT_CODES:
        raise Broken(f"exit code {result.exit_code}{where}")
    for line in result.stderr.splitlines():
        _check_line(line, inputs, where)
    if result.exit_code == 2 and not result.stderr.strip():
        raise Broken(f"exit 2 without a message{where}")
    if fmt in ("json", "sarif") and result.stdout.strip():
        document = strict_json(result.stdout, where)
        validate(fmt, document, where)


def _check_line(line: str, inputs: Sequence[str], where: str) -> None:
    if line.startswith("gpu-audit: incomplete: "):
        return
    message = line.removeprefix("gpu-audit: error: ")  # `policies validate` prints it bare
    for path in inputs:
        if message.startswith(f"{path}:"):
            rest = message.removeprefix(f"{path}:")
            if re.match(r"\d+(:\d+)?: \S", rest) or FILE_LEVEL.search(rest):
                return
            raise Broken(f"message names the file but no line: {line!r}{where}")
    raise Broken(f"message names no input file: {line!r}{where}")


def strict_json(text: str, where: str) -> Any:
    def refuse(name: str) -> Any:
        raise Broken(f"report contains {name}, which JSON does not allow{where}")

    try:
        return json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise Broken(f"report is not JSON: {exc}{where}") from exc


@cache
def _validators() -> dict[str, Any]:
    text = resources.files("gpu_audit.report").joinpath("report-v1.schema.json").read_text("utf-8")
    report = jsonschema.Draft202012Validator(
        json.loads(text), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    out: dict[str, Any] = {"json": report}
    if SARIF_SCHEMA.exists():
        out["sarif"] = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text("utf-8")))
    return out


def sarif_schema_present() -> bool:
    return SARIF_SCHEMA.exists()


def validate(fmt: str, document: Any, where: str) -> None:
    validator = _validators().get(fmt)
    if validator is None:
        return  # the SARIF schema is not in ../shared/reference: the test says so (skip)
    errors = sorted(validator.iter_errors(document), key=str)[:3]
    if errors:
        shown = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors]
        raise Broken(f"{fmt} report does not validate: {shown}{where}")


def write(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return str(path)
