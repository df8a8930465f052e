"""The terminal table: grouped by severity, cost and savings, set-aside counts, gaps, summary."""

from __future__ import annotations

import pytest

from gpu_audit.model import ScanResult
from gpu_audit.report import table
from gpu_audit.report.summary import summarize


def test_groups_by_severity_and_ends_with_the_summary(demo: ScanResult) -> None:
    text = table.render(demo)
    lines = text.splitlines()
    assert lines[0].startswith("HIGH (28; savings $")
    assert text.index("HIGH (") < text.index("MEDIUM (")
    assert "$/month" in lines[1] and "saving" in lines[1]
    assert "$" in lines[3] and "/month" in lines[3]  # every saving cell states its unit
    assert "waived: 4 gpu-class-cap, 1 idle-gpu" in text
    assert "expired waiver: gpu-class-cap,spot-for-training" in text
    assert lines[-1] == table.summary_line(summarize(demo))
    assert lines[-1].startswith(
        "47 findings (28 high, 19 medium); 47 resources; GPU spend $549,206/month"
    )


def test_gaps_and_errors_are_called_out(hostile: ScanResult) -> None:
    text = table.render(hostile)
    assert "COVERAGE GAP: aws account" in text
    assert "error: " in text
    assert "PARTIAL: 1 coverage gap" in text.splitlines()[-1]


def test_control_characters_never_reach_the_terminal(hostile: ScanResult) -> None:
    from dataclasses import replace

    evil = "\x1b[2J\x1b]0;pwned\x07name\rover"
    finding = hostile.findings[0]
    bent = replace(finding, resource=replace(finding.resource, id=evil, tags={"team": evil}))
    text = table.render(replace(hostile, findings=(bent, *hostile.findings[1:])))
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text


def test_no_findings() -> None:
    from tests.report.test_registry import EMPTY

    text = table.render(EMPTY)
    assert text.startswith("No open findings.")
    assert text.splitlines()[-1].startswith("0 findings; 0 resources")


def test_name_column_width_and_colour_only_on_a_terminal(
    demo: ScanResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    wide = table.render(demo, 400)
    narrow = table.render(demo, 120)
    assert "name" in narrow.splitlines()[1] and "vision-h100" in narrow
    assert max(map(len, narrow.splitlines()[:10])) < max(map(len, wide.splitlines()[:10]))
    assert max(map(len, narrow.splitlines()[:10])) <= 125
    assert "\x1b[31mHIGH" in table.render(demo, colour=True)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    monkeypatch.delenv("NO_COLOR", raising=False)
    table.write(demo, tty)
    assert tty.getvalue().startswith("\x1b[31mHIGH")
    monkeypatch.setenv("NO_COLOR", "1")
    quiet = Tty()
    table.write(demo, quiet)
    assert "\x1b" not in quiet.getvalue()
    piped = io.StringIO()
    monkeypatch.delenv("NO_COLOR")
    table.write(demo, piped)
    assert "\x1b" not in piped.getvalue()
