"""A check of job files speaks of jobs: hourly rates, a run at the cap, savings per run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
JOBS = [str(ROOT / "fixtures" / "jobs" / name) for name in ("skypilot", "sagemaker")]


def _check(fmt: str, *extra: str) -> str:
    result = CliRunner().invoke(main, ["check", *JOBS, "--format", fmt, *extra])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


@pytest.mark.parametrize("fmt", ["table", "text", "markdown"])
def test_no_monthly_figure_for_files_that_run_nothing(fmt: str) -> None:
    text = _check(fmt)
    assert not re.search(r"/ ?month|per month|saving/mo", text, re.I), text


def test_the_summary_line_gives_rate_run_cost_and_run_savings() -> None:
    last = _check("text").splitlines()[-1]
    assert re.search(r"; \d+ jobs; GPU rate \$[\d,.]+/hour", last), last
    assert re.search(r"\$[\d,.]+ per run over \d+ jobs with a runtime cap", last), last
    assert re.search(r"savings \$[\d,.]+ per run over \d+ jobs", last), last


def test_table_groups_say_per_run_and_rows_rank_by_a_per_run_figure() -> None:
    lines = _check("table", "--fail-on", "none").splitlines()
    heads = [line for line in lines if re.match(r"^(CRITICAL|HIGH|MEDIUM|LOW|INFO) \(", line)]
    assert heads and all("month" not in h for h in heads)
    assert any(re.search(r"savings \$[\d,.]+ per run\)", h) for h in heads), heads
    high = lines.index(next(h for h in heads if h.startswith("HIGH")))
    header = lines[high + 1]
    assert "$/hour" in header and "$/month" not in header
    savings = [row for row in lines[high + 3 :] if row.strip()][:6]
    units = [("run" if "/run" in r else "h" if "/GPU-h" in r else "-") for r in savings]
    assert units == sorted(units, key=["run", "h", "-"].index), savings  # run before GPU-hour
    runs = [
        float(m.group(1).replace(",", ""))
        for r in savings
        if (m := re.search(r"\$([\d,.]+)/run", r))
    ]
    assert runs == sorted(runs, reverse=True)


def test_markdown_findings_by_resource_shows_rate_and_run() -> None:
    text = _check("markdown")
    assert "| Job (GPUs) | File | Rate / hour · run | Saving | Rules |" in text
    assert "Estimated savings per run" in text and "Estimated savings | " not in text
