"""Issue 26 item 10: values as the policy language writes them, durations in the rule's unit,
one money precision per magnitude, no machine paths in JSON, lists that name everything."""

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
from gpu_audit.report.summary import usd

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
    ("amount", "shown"),
    [(0, "$0"), (0.609, "$0.6090"), (1.8942, "$1.89"), (583.94, "$583.94"), (999.994, "$999.99"),
     (1000, "$1,000"), (65149.87, "$65,150")],
)  # fmt: skip
def test_one_money_precision_per_magnitude(amount: float, shown: str) -> None:
    assert usd(amount) == shown


def test_every_amount_in_a_report_follows_the_magnitude_rule() -> None:
    text = _demo_text() + _run("check", ROOT / "fixtures" / "jobs" / "skypilot", "--format", "text")
    for figure in re.findall(r"\$([\d,]+(?:\.\d+)?)", text):
        cents = figure.replace(",", "").partition(".")[2]
        value = float(figure.replace(",", ""))
        expected = 0 if value >= 1000 or value == 0 else 2 if value >= 1 else 4
        assert len(cents) == expected, figure


def test_catalog_prices_carry_the_dollar_sign() -> None:
    out = _run("catalog", "lookup", "p4d.24xlarge")
    assert "$21.96" in out and "$5.09" in out


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
