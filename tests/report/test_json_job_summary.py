"""A check's JSON summary speaks of jobs (per hour, per run), a scan's of months (issue 26, item 2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.report.conftest import CHECK_FILES, DEMO_INVENTORY, DEMO_POLICY
from tests.report.test_json_schema import schema

JOB_KEYS = ("hourly_cost_usd", "run_cost_usd", "jobs_with_run_cost")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def report(*args: str) -> dict[str, Any]:
    code, out, err = run(*args, "--format", "json", "--fail-on", "none")
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def errors(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema())
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


@pytest.fixture
def checked_report(in_root: Path) -> dict[str, Any]:
    return report("check", *CHECK_FILES)


def test_check_summary_is_per_hour_and_per_run(checked_report: dict[str, Any]) -> None:
    summary, resources = checked_report["summary"], checked_report["resources"]
    assert not errors(checked_report)
    assert summary["monthly_cost_usd"] is None and summary["monthly_savings_usd"] is None
    rates = [r["price"]["hourly_usd"] for r in resources if r["price"]["hourly_usd"] is not None]
    runs = [r["estimate"]["run_usd"] for r in resources if r["estimate"]["run_usd"] is not None]
    assert len(runs) < len(resources)  # a job with no runtime cap has no run cost
    assert summary["hourly_cost_usd"] == pytest.approx(sum(rates), abs=0.01)
    assert summary["run_cost_usd"] == pytest.approx(sum(runs), abs=0.01)
    assert summary["hourly_cost_usd"] > 0 and summary["run_cost_usd"] > 0
    assert summary["jobs_with_run_cost"] == len(runs)
    assert summary["run_savings_usd"] > 0 and summary["jobs_with_run_savings"] == 1


def test_check_summary_agrees_with_the_text_summary(in_root: Path) -> None:
    document = report("check", *CHECK_FILES)
    summary = document["summary"]
    _, out, _ = run("check", *CHECK_FILES, "--format", "text", "--fail-on", "none")
    last = out.splitlines()[-1]
    assert f"GPU rate ${summary['hourly_cost_usd']:,.2f}/hour" in last
    runs = summary["jobs_with_run_cost"]
    assert f"${summary['run_cost_usd']:,.2f} per run over {runs} jobs with a runtime cap" in last
    assert f"savings ${summary['run_savings_usd']:,.2f} per run over 1 job" in last
    assert "/month" not in last


def test_scan_summary_keeps_its_monthly_figures(in_root: Path) -> None:
    document = report("scan", "--inventory", DEMO_INVENTORY, "--policy", DEMO_POLICY)
    summary = document["summary"]
    assert not errors(document)
    assert summary["monthly_cost_usd"] > 0 and summary["monthly_savings_usd"] > 0
    assert not set(JOB_KEYS) & set(summary)


def test_the_schema_holds_each_command_to_its_units(checked_report: dict[str, Any]) -> None:
    monthly = copy.deepcopy(checked_report)
    monthly["summary"]["monthly_cost_usd"] = 42753.62  # what a check said before
    assert any("monthly_cost_usd" in e for e in errors(monthly))
    missing = copy.deepcopy(checked_report)
    del missing["summary"]["run_cost_usd"]
    assert any("run_cost_usd" in e for e in errors(missing))
    scanned = copy.deepcopy(checked_report)
    scanned["scope"]["command"] = "scan"  # a scan with job rates and no monthly figures
    found = errors(scanned)
    rate = checked_report["summary"]["hourly_cost_usd"]
    assert any(f"False schema does not allow {rate}" in e for e in found)  # no job rate
    assert any("None is not of type 'number'" in e for e in found)


def test_a_check_report_is_still_a_baseline(in_root: Path, tmp_path: Path) -> None:
    saved = tmp_path / "check.json"
    code, _, err = run(
        "check", *CHECK_FILES, "--format", "json", "--fail-on", "none", "-o", str(saved)
    )
    assert code == 0, err
    before = json.loads(saved.read_text())
    document = report("check", CHECK_FILES[0], "--baseline", str(saved))
    since = document["summary"]["since"]
    assert since["previous_at"] == before["generated_at"]
    assert since["resolved"] > 0 and since["new"] == 0
    money = ("monthly_cost_usd", "monthly_savings_usd", "savings_realised_usd")
    assert [since[key] for key in money] == [None] * 3  # a comparison of findings, no month
    now = document["summary"]["findings"]
    assert [p["findings"] for p in since["trend"]] == [before["summary"]["findings"], now]
    assert {p[key] for p in since["trend"] for key in money} == {None}
    assert not errors(document)
    saved.write_text(json.dumps(document))  # the compared check is a baseline in its turn
    assert report("check", CHECK_FILES[0], "--baseline", str(saved))["summary"]["since"]["new"] == 0
    monthly = copy.deepcopy(document)
    monthly["summary"]["since"]["monthly_cost_usd"] = {"then": 42753.62, "now": 18945.98}
    assert any("since" in e and "monthly_cost_usd" in e for e in errors(monthly))


def test_a_check_against_a_baseline_speaks_of_jobs_in_every_format(
    in_root: Path, tmp_path: Path
) -> None:
    """`check --baseline` compared job files with no monthly spend or saving anywhere: the
    Markdown's comparison is the findings' counts and savings in their units, the text line
    the counts; the tables fit GitHub's page."""
    from tests.report.github_width import CONTENT_PX, min_width
    from tests.report.test_markdown import parse
    from tests.report.test_markdown_rendered import _tables

    saved = tmp_path / "jobs.json"
    code, _, err = run("check", "fixtures/jobs", "--format", "json", "--fail-on", "none",
                       "-o", str(saved))  # fmt: skip
    assert code == 0, err
    now = ("check", "fixtures/jobs/skypilot", "fixtures/jobs/sagemaker", "--baseline", str(saved))
    code, text, err = run(*now, "--format", "markdown", "--fail-on", "none")
    assert code == 0, err
    assert "### Since the last audit" in text and "**Resolved since the last audit**" in text
    assert "month" not in text.lower() and "xychart" not in text
    tables = _tables(parse(text))
    counts = next(rows for rows in tables if rows[0] == ["Findings", "Now"])
    assert [row[0] for row in counts[1:]] == [
        "New findings",
        "Persisting findings",
        "Resolved findings",
    ]
    persisting = next(rows for rows in tables if rows[0][-1] == "Saving")
    assert {cell.rsplit("/", 1)[-1] for *_, cell in persisting[1:] if cell != "–"} <= {
        "run",
        "GPU-h",
    }
    assert any(cell.endswith("/run") for *_, cell in persisting[1:])
    assert all(min_width(rows) <= CONTENT_PX for rows in tables)
    for fmt in ("text", "table"):
        _, out, _ = run(*now, "--format", fmt, "--fail-on", "none")
        (line,) = [line for line in out.splitlines() if line.startswith("since ")]
        assert "resolved" in line and "month" not in out
