"""The terminal table: grouped by severity, cost and savings, set-aside counts, gaps, summary."""

from __future__ import annotations

import re

import pytest

from gpu_audit.core.results import ScanResult
from gpu_audit.core.savings import summarize
from gpu_audit.report import table


def test_groups_by_severity_and_ends_with_the_summary(demo: ScanResult) -> None:
    text = table.render(demo)
    lines = text.splitlines()
    assert lines[0].startswith("HIGH (30; savings $")
    assert text.index("HIGH (") < text.index("MEDIUM (")
    assert "$/month" in lines[1] and "saving/mo" in lines[1]  # the saving's unit in its header
    assert re.search(r"\$[\d,]+\.\d\d  +\$[\d,]+\.\d\d ", lines[3])  # cost and saving, to the cent
    assert "waived: 4 gpu-class-cap, 1 idle-gpu" in text
    assert "expired waiver: gpu-class-cap,spot-for-training" in text
    assert lines[-1] == table.summary_line(summarize(demo))
    assert lines[-1].startswith(
        "50 findings (30 high, 20 medium); 50 resources; GPU spend $556,231.65/month"
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
    assert text.splitlines()[-1].startswith("0 findings; 0 jobs; GPU rate $0.00/hour")


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


def _table_lines(text: str) -> list[str]:
    """The lines of each severity group's table (heading to the blank line after it)."""
    lines: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.split(" (", 1)[0] in {"CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO"}:
            inside = True
        elif not line:
            inside = False
        elif inside:
            lines.append(line)
    return lines


@pytest.mark.parametrize("width", [80, 100, 120])
def test_fits_the_width(demo: ScanResult, width: int) -> None:
    lines = _table_lines(table.render(demo, width))
    assert len(lines) > 20
    assert max(map(len, lines)) <= width
    assert lines[0].split()[:2] == ["rule", "name"]  # the rule and the name always stay
    # what was found is clipped last: the instance type goes before it is cut
    assert "type" not in lines[0].split()
    assert "capacity = on-demand" in "\n".join(lines)
    assert "fm-h100-0" in "\n".join(lines) and "$42,261" in "\n".join(lines)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_make_demo_fits_the_terminal(width: int, in_root: object, tmp_path: object) -> None:
    """`make demo` (a history, so a `new` column too) with COLUMNS set, through the real CLI."""
    from pathlib import Path

    from click.testing import CliRunner

    from gpu_audit.cli.main import main
    from tests.report.conftest import DEMO_INVENTORY, DEMO_POLICY

    db = str(Path(str(tmp_path)) / "audits.db")
    common = ["scan", "--policy", DEMO_POLICY, "--history", db, "--fail-on", "none"]
    runner = CliRunner()
    first = runner.invoke(main, [*common, "--inventory", DEMO_INVENTORY, "-q"])
    assert first.exit_code == 0, first.output
    demo_next = DEMO_INVENTORY.replace("demo.yaml", "demo-next.yaml")
    second = runner.invoke(
        main,
        [*common, "--inventory", demo_next, "--format", "table"],
        env={"COLUMNS": str(width), "NO_COLOR": "1"},
    )
    assert second.exit_code == 0, second.output
    lines = _table_lines(second.stdout)
    assert any(line.startswith("new ") for line in lines)
    assert max(map(len, lines)) <= width
    assert "resource" in lines[0].split() or width < 100


def test_docs_quote_the_demo_as_it_prints(in_root: object, tmp_path: object) -> None:
    """docs/reports.md's summary and counts lines are what `make demo` prints."""
    from pathlib import Path

    from click.testing import CliRunner

    from gpu_audit.cli.main import main
    from tests.conftest import ROOT
    from tests.report.conftest import DEMO_INVENTORY, DEMO_POLICY

    db = str(Path(str(tmp_path)) / "audits.db")
    common = ["scan", "--policy", DEMO_POLICY, "--history", db, "--fail-on", "none"]
    runner = CliRunner()
    assert runner.invoke(main, [*common, "--inventory", DEMO_INVENTORY, "-q"]).exit_code == 0
    demo_next = DEMO_INVENTORY.replace("demo.yaml", "demo-next.yaml")
    printed = runner.invoke(main, [*common, "--inventory", demo_next, "--format", "table"])
    *_, counts, summary = printed.stdout.splitlines()
    docs = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8").splitlines()
    assert summary in docs and counts in docs


def test_a_large_group_shows_its_largest_savings_and_says_how_many_more(
    demo: ScanResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `ROWS` findings a severity lists its largest savings, then a count of the rest."""
    high = [f for f in demo.findings if f.is_open and f.severity.label == "high"]
    monkeypatch.setattr(table, "ROWS", 3)
    text = table.render(demo)
    section = text.split("HIGH", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = [line for line in section[3:] if not line.startswith("…")]
    assert len(rows) == 3
    assert f"… {len(high) - 3:,} more high findings with smaller savings" in text
    top = sorted(high, key=lambda f: -(f.monthly_savings_usd or 0.0))[:3]
    for finding, row in zip(top, rows, strict=True):
        assert f"{finding.monthly_savings_usd:,.2f}" in row


def test_an_expired_waiver_counts_its_findings_in_words(in_root: object, tmp_path: object) -> None:
    """`make demo`'s second audit: an expired waiver matching one finding says `1 finding`."""
    from click.testing import CliRunner

    from gpu_audit.cli.main import main
    from tests.report.conftest import DEMO_INVENTORY, DEMO_POLICY

    demo_next = DEMO_INVENTORY.replace("demo.yaml", "demo-next.yaml")
    args = ["scan", "--policy", DEMO_POLICY, "--inventory", demo_next, "--format", "table"]
    out = CliRunner().invoke(main, [*args, "--fail-on", "none"]).output
    assert "no longer applies to 1 finding\n" in out
    assert "no longer applies to 3 findings\n" in out
