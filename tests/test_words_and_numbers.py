"""Issue 26 item 10: values as the policy language writes them, durations in the rule's unit,
money to the cent whatever its size (issue 38.12; a price list's prices per hour to a hundredth of
a cent, as the price files quote them), no machine paths in JSON, lists that name everything."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.jobs import FORMATS as JOB_FORMATS
from gpu_audit.report import REPORTERS
from gpu_audit.report.values import money

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "fixtures" / "inventory"


def _run(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _demo_text() -> str:
    return _run("scan", "--inventory", DEMO / "demo.yaml", "--policy", DEMO / "demo-policy.yaml",
                "--format", "text", "--fail-on", "none")  # fmt: skip


def test_booleans_read_as_the_policy_language_writes_them() -> None:
    text = _demo_text()
    assert "expected hpo.early_stopping = true; found hpo.early_stopping = false" in text
    assert "True" not in text and "False" not in text


def test_a_duration_is_shown_in_the_unit_the_rule_states() -> None:
    text = _demo_text()
    assert "expected uptime_hours ≤ 7d; found uptime_hours = 13.9d" in text  # 333 h
    assert "uptime_hours = 333" not in text


@pytest.mark.parametrize(
    ("amount", "shown", "listed"),
    [(0, "$0.00", "$0.0000"), (0.609, "$0.61", "$0.6090"), (1.8942, "$1.89", "$1.8942"),
     (583.94, "$583.94", "$583.9400"), (999.994, "$999.99", "$999.9940"),
     (1000, "$1,000.00", "$1,000.0000"), (65149.87, "$65,149.87", "$65,149.8700"),
     (-0.001, "$0.00", "-$0.0010"), (-12.5, "-$12.50", "-$12.5000")],
)  # fmt: skip
def test_money_to_the_cent_and_price_lists_to_four_places(
    amount: float, shown: str, listed: str
) -> None:
    assert money(amount) == shown and money(amount, places=4) == listed


@pytest.mark.parametrize("fmt", ["text", "table", "markdown"])
def test_every_amount_in_a_report_is_to_the_cent(fmt: str) -> None:
    """Before, `$2,234/month` stood beside `$882.23/month` in one column, and `$0.6090 per
    GPU-hour` beside `$4.26 per GPU-hour` (a precision per magnitude); now every figure of a
    scan's or a check's report has its cents, a month, a run, a rate and a GPU-hour alike."""
    text = _run("scan", "--inventory", DEMO / "demo.yaml", "--policy", DEMO / "demo-policy.yaml",
                "--format", fmt, "--fail-on", "none")  # fmt: skip
    text += _run("check", ROOT / "fixtures" / "jobs" / "skypilot", "--format", fmt)
    figures = re.findall(r"\$([\d,]+(?:\.\d+)?)", text)
    assert len(figures) > 20
    assert [f for f in figures if len(f.partition(".")[2]) != 2] == []


def test_catalog_prices_carry_the_dollar_sign() -> None:
    out = _run("catalog", "lookup", "p4d.24xlarge")
    assert "$21.9576" in out and "$5.0933" in out  # prices per hour: four places


def test_json_names_no_path_of_this_machine(tmp_path: Path) -> None:
    db = tmp_path / "audits.db"
    text = _run("scan", "--inventory", DEMO / "demo.yaml", "--history", db, "--format", "json",
                "--fail-on", "none")  # fmt: skip
    document = json.loads(text)
    assert document["scope"]["policy_files"] == ["runbook"]
    assert document["summary"]["since"]["source"] == "history audits.db"
    assert str(tmp_path) not in text


def test_the_readme_names_every_rule_and_format() -> None:
    readme = (ROOT / "README.md").read_text()
    pack = yaml.safe_load((ROOT / "policies" / "runbook.yaml").read_text())
    for rule in pack["rules"]:
        assert f"`{rule['id']}`" in readme, rule["id"]
    reports = readme[readme.index("### Reports") :]
    for name in REPORTERS:
        assert f"`{name}`" in reports, name


def test_the_hook_description_names_every_job_format() -> None:
    """As pre-commit reads it (YAML folded); tests/test_doc_lists.py holds the list's text."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    description = " ".join(hook["description"] for hook in hooks)
    for fmt in JOB_FORMATS.values():
        assert fmt.title in description, fmt.name
