"""The text format: one `location: severity rule: message` line per open finding, inert values."""

from __future__ import annotations

from dataclasses import replace

from gpu_audit.core.results import Finding
from gpu_audit.report import render
from gpu_audit.report.text import clean
from tests.report.conftest import check_scan, demo_scan


def test_one_line_per_open_finding_then_the_summary() -> None:
    result = demo_scan()
    lines = render("text", result).splitlines()
    open_findings = [f for f in result.findings if f.is_open]
    assert len(lines) == len(open_findings) + 1
    assert lines[-1].startswith(f"{len(open_findings)} findings")


def test_job_findings_start_with_path_and_line() -> None:
    result = check_scan()
    first = render("text", result).splitlines()[0]
    path, line, rest = first.split(":", 2)
    assert path.endswith((".yaml", ".yml", ".json")) and line.isdigit()
    assert rest.split()[0] in {"info", "low", "medium", "high", "critical"}


def test_control_characters_from_values_are_escaped() -> None:
    result = demo_scan()
    finding: Finding = next(f for f in result.findings if f.is_open)
    hostile = replace(finding.resource, id="i-1\n\x1b[2Jfake: critical\rx")
    result = replace(result, findings=(replace(finding, resource=hostile),))
    text = render("text", result)
    assert "\x1b" not in text and "\r" not in text
    assert len(text.splitlines()) == 2
    assert clean("a\nb\x1b") == "a\\x0ab\\x1b"
