"""Standard streams in a legacy encoding get escapes, never a traceback (cp1252 redirects on
Windows, ASCII with PYTHONIOENCODING)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_audit.report.escape import escape_unencodable

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = str(Path(sys.executable).with_name("gpu-audit"))
DEMO = str(ROOT / "fixtures" / "inventory" / "demo.yaml")


def test_unencodable_characters_become_json_escapes() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    escape_unencodable(stream)
    stream.write('"≥ 😀 é x"')
    stream.flush()
    assert raw.getvalue() == b'"\\u2265 \\ud83d\\ude00 \\u00e9 x"'
    assert json.loads(raw.getvalue()) == "≥ 😀 é x"


def test_a_stream_that_already_chose_its_errors_is_left_alone() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="replace")
    escape_unencodable(stream)
    assert stream.errors == "replace"


def _scan(fmt: str, encoding: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    argv = [PROGRAM, "scan", "--inventory", DEMO, "--format", fmt, "--fail-on", "none"]
    return subprocess.run(argv, capture_output=True, env=env, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_report_to_an_ascii_stdout_is_the_same_document(fmt: str) -> None:
    ascii_run, utf8_run = _scan(fmt, "ascii"), _scan(fmt, "utf-8")
    assert ascii_run.returncode == 0, ascii_run.stderr.decode()
    assert ascii_run.stdout.isascii() and b"\\u2265" in ascii_run.stdout
    assert json.loads(ascii_run.stdout) == json.loads(utf8_run.stdout)


@pytest.mark.parametrize("fmt", ["table", "text", "markdown", "csv"])
def test_every_format_prints_to_an_ascii_stdout(fmt: str) -> None:
    done = _scan(fmt, "ascii")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.isascii() and b"Traceback" not in done.stderr
