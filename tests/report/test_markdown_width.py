"""The audit, check and estimate Markdown fit GitHub's 980 px article (issue 26 item 4), measured
by rendering with markdown-it-py and the character-width model of tests/report/github_width.py
(no browser on the test machines: the model's metrics and layout rules are written there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.report.github_width import CONTENT_PX, min_width, one_line_width, text_px
from tests.report.test_markdown import parse
from tests.report.test_markdown_rendered import _tables

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "inventory"
DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b")  # with plain hyphens: a place a browser may wrap


def _markdown(tmp_path: Path, *args: object) -> str:
    out = tmp_path / "report.md"
    result = CliRunner().invoke(main, [*map(str, args), "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    return out.read_text(encoding="utf-8")


def _audit(tmp_path: Path) -> str:
    db = tmp_path / "audits.db"
    common = ("scan", "--policy", DEMO / "demo-policy.yaml", "--history", db, "--fail-on", "none")
    assert CliRunner().invoke(main, [*map(str, common), "--inventory", str(DEMO / "demo.yaml"),
                                     "-q"]).exit_code == 0  # fmt: skip
    return _markdown(tmp_path, *common, "--inventory", DEMO / "demo-next.yaml")


REPORTS = {
    "audit": _audit,
    "check": lambda tmp: _markdown(tmp, "check", ROOT / "fixtures" / "jobs", "--fail-on", "none"),
    "estimate-options": lambda tmp: _markdown(
        tmp, "estimate", "--gpu", "A100:8", "--hours", "3", "--max-usd", "50"
    ),
    "estimate-jobs": lambda tmp: _markdown(
        tmp, "estimate", ROOT / "fixtures" / "jobs" / "sagemaker" / "tuning-no-early-stopping.yaml"
    ),
    "reservations": lambda tmp: _markdown(
        tmp, "scan", "--inventory", DEMO / "reservations.yaml", "--fail-on", "none"
    ),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_table_fits_the_page_and_no_date_wraps(name: str, tmp_path: Path) -> None:
    tables = _tables(parse(REPORTS[name](tmp_path)))
    assert tables
    for rows in tables:
        assert len(rows[0]) <= 6, rows[0]
        width = min_width(rows)
        assert width <= CONTENT_PX, f"{rows[0]}: {width:.0f} px > {CONTENT_PX} px"
        dated = any(DATE.search(cell) for row in rows[1:] for cell in row)
        if dated:  # a date with plain hyphens stays whole only if its table needs no wrapping
            assert one_line_width(rows) <= CONTENT_PX, rows[0]


def test_the_model_measures_what_the_issue_saw(tmp_path: Path) -> None:
    """The old Findings by resource (a full `provider/account/region/id` Where) did not fit."""
    where = "gcp/acme-ml-train/us-central1/hyperparameterTuningJobs/118"
    assert text_px(where) > 400
    old = [["Resource", "Where", "GPU", "Cost / month", "Saving", "Rules"],
           ["i-0a1b2c3d4e5f60010", where, "16×\u00a0A100-40GB", "$94,082", "$74,046/month",
            "untagged-long-running, spot-for-training"]]  # fmt: skip
    assert min_width(old) > CONTENT_PX


def test_the_trend_chart_has_a_dark_line_dollar_axis_and_a_legend(tmp_path: Path) -> None:
    text = _audit(tmp_path)
    chart = text[text.index("xychart-beta") - 200 : text.index("xychart-beta") + 600]
    palette = re.search(r'"plotColorPalette": "(#[0-9a-f]{6})', chart)
    assert palette is not None
    red, green, blue = (int(palette.group(1)[i : i + 2], 16) for i in (1, 3, 5))
    assert 0.2126 * red + 0.7152 * green + 0.0722 * blue < 80  # dark on a light page
    assert 'y-axis "$ per month"' in chart
    assert "_Legend: dark line: GPU spend" in text


def test_check_over_real_repositories_job_files_fits_the_page(tmp_path: Path) -> None:
    """Issue 38.4: the corpus's file names (`owner__repo_path.cfn.yml`, no space) and job names
    wrap at the `<wbr>` after each `_`, `-` and `.` instead of pushing the table off the page."""
    from tests.conftest import SHARED, need_shared

    corpus = SHARED / "corpus"
    need_shared(corpus)
    text = _markdown(tmp_path, "check", corpus, "--fail-on", "none")
    tables = _tables(parse(text))
    assert any(row[0] == "Job (GPUs)" for rows in tables for row in rows[:1])
    for rows in tables:
        width = min_width(rows)
        assert width <= CONTENT_PX, f"{rows[0]}: {width:.0f} px > {CONTENT_PX} px"
    assert "<wbr>" in text and "\\_<wbr>" in text  # a break after an escaped `_` too
