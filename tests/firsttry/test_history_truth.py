"""Item 3 of the reader's report (round three): history that tells the truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_audit.core.results import CoverageGap
from tests.conftest import FIXTURES
from tests.firsttry.cli import gpu_audit
from tests.report.test_markdown import parse
from tests.report.test_markdown_rendered import _tables

DEMO = FIXTURES / "inventory"


@pytest.fixture(scope="module")
def two_quarters(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:  # type: ignore[type-arg]
    """The demo's two quarters recorded (as `make demo` does): its Markdown and JSON."""
    tmp = tmp_path_factory.mktemp("demo")
    db = tmp / "audits.db"
    common = ["--policy", str(DEMO / "demo-policy.yaml"), "--history", str(db),
              "--fail-on", "none"]  # fmt: skip
    first = gpu_audit("scan", "--inventory", str(DEMO / "demo.yaml"), *common, "-q",
                      "--format", "json")  # fmt: skip
    assert first.returncode == 0, first.stderr
    md, js = tmp / "next.md", tmp / "next.json"
    second = gpu_audit("scan", "--inventory", str(DEMO / "demo-next.yaml"), *common,
                       "--report", f"markdown={md}", "--report", f"json={js}",
                       "--format", "table")  # fmt: skip
    assert second.returncode == 0, second.stderr
    return db, md.read_text(encoding="utf-8"), json.loads(js.read_text(encoding="utf-8"))


def test_a_finding_gone_with_its_instance_is_no_saving_realised(two_quarters: tuple) -> None:  # type: ignore[type-arg]
    _, markdown, report = two_quarters
    resolved = next(t for t in _tables(parse(markdown)) if t[0][-1] == "Counted")
    _, *rows = resolved
    ended = {"v100-legacy", "i-0a1b2c3d4e5f60009", "asr-v100-stopped"}
    for row in rows:
        gone = any(name in row[0] for name in ended)
        assert (row[-1] == "gone with its resource") is gone, row
    counted = sum(float(r[-1].lstrip("\\$").replace(",", "")) for r in rows if "$" in r[-1])
    since = report["summary"]["since"]
    assert since["savings_realised_usd"] == pytest.approx(counted) == 24621.94
    removed = {r["resource_id"] for r in since["removed_resources"]}
    assert any("v100-legacy" in rid for rid in removed)


def test_the_counts_line_says_how_many_went_with_their_resource(two_quarters: tuple) -> None:  # type: ignore[type-arg]
    db, _, _ = two_quarters
    result = gpu_audit("history", "show", "2", "--history", str(db), "--format", "text")
    assert result.returncode == 0, result.stderr
    assert (
        "10 resolved (savings realised $24,621.94/month); 8 of them gone with their resource"
        in (result.stdout)
    )


def test_a_recorded_check_has_no_monthly_spend(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    result = gpu_audit("check", str(FIXTURES / "jobs"), "--history", str(db), "--fail-on", "none",
                       "--format", "json", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    listed = gpu_audit("history", "list", "--history", str(db), columns=200)
    header, _, row = listed.stdout.splitlines()[:3]
    cells = dict(zip(header.split(), row.split(), strict=False))
    assert cells["scope"] == "check"
    assert row.split()[-3:] == ["-", "-", "-"]
    trend = gpu_audit("history", "trend", "--history", str(db), columns=200)
    assert trend.stdout.splitlines()[2].split()[1:4] == ["-", "-", "-"]
    for command, key in (("list", "audits"), ("trend", "points")):
        data = json.loads(gpu_audit("history", command, "--history", str(db), "--format",
                                    "json").stdout)  # fmt: skip
        item = data[key][0]
        assert (item["monthly_cost_usd"], item["monthly_savings_usd"],
                item["savings_realised_usd"]) == (None, None, None)  # fmt: skip


def test_a_scans_money_stays_in_history_list(two_quarters: tuple) -> None:  # type: ignore[type-arg]
    db, _, _ = two_quarters
    data = json.loads(gpu_audit("history", "list", "--history", str(db), "--format", "json").stdout)
    assert data["audits"][1]["savings_realised_usd"] == 24621.94


def test_a_coverage_gap_names_its_account_and_region(tmp_path: Path) -> None:
    from gpu_audit.audit import audit
    from gpu_audit.core.results import Scope
    from gpu_audit.policy.loader import load_policy
    from gpu_audit.report import render
    from tests.conftest import NOW

    gap = CoverageGap(provider="aws", scope="account/region", error="UnauthorizedOperation",
                      message="not allowed", account="111122223333", region="eu-west-1")  # fmt: skip
    result = audit([], load_policy(None), NOW, Scope(command="scan", providers=("aws",)),
                   coverage_gaps=[gap])  # fmt: skip
    markdown = render("markdown", result)
    gaps = next(t for t in _tables(parse(markdown)) if t[0] == ["Provider", "Scope", "Error",
                                                                "Message"])  # fmt: skip
    assert gaps[1][:2] == ["aws", "account 111122223333, region eu-west-1"]
    table = render("table", result)
    assert "COVERAGE GAP: aws account 111122223333, region eu-west-1: UnauthorizedOperation" in (
        table
    )
    assert "account/region" not in markdown + table
