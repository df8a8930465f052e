"""Item 2 of the reader's report (round three): a bill a reader can act on, on the demo's bill
(fixtures/billing/demo: three clouds' FOCUS exports), rendered by the real `gpu-audit`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.firsttry.cli import DEMO_BILL, DEMO_TIME, gpu_audit
from tests.report.github_width import CONTENT_PX, min_width
from tests.report.test_markdown import parse
from tests.report.test_markdown_rendered import _tables

WBR = "\u200b"


@pytest.fixture(scope="module")
def markdown(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("bill") / "bill.md"
    result = gpu_audit("billing", *DEMO_BILL, *DEMO_TIME, "--format", "markdown", "-o", str(out))
    assert result.returncode == 0, result.stderr
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def terminal() -> str:
    result = gpu_audit("billing", *DEMO_BILL, *DEMO_TIME, "--format", "table", columns=80)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _table(markdown: str, first_header: str, second: str) -> list[list[str]]:
    return next(t for t in _tables(parse(markdown)) if t[0][:2] == [first_header, second])


def test_every_table_of_the_bill_fits_githubs_page(markdown: str) -> None:
    tables = _tables(parse(markdown))
    # the bill's own ten, and issue 44's figures: months, cost per GPU-hour by instance type and
    # capacity, commitments, the two transfers by cloud and each tag, invoices
    assert len(tables) == 23
    for rows in tables:
        assert len(rows[0]) <= 6, rows[0]
        assert min_width(rows) <= CONTENT_PX, f"{rows[0]}: {min_width(rows):.0f} px"


def test_each_finding_names_a_resource_a_reader_tells_apart(markdown: str) -> None:
    rows = _table(markdown, "severity", "rule")[1:]
    data = json.loads(gpu_audit("billing", *DEMO_BILL, *DEMO_TIME, "--format", "json").stdout)
    ids = {(f["rule_id"], f["resource_id"]) for f in data["findings"] if f["status"] == "open"}
    assert len(rows) == len(ids) == 23
    shown = {(row[1].replace(WBR, ""), row[2].replace(WBR, "")) for row in rows}
    assert len(shown) == len(ids)  # no two findings of one rule read alike
    cells = {row[2].replace(WBR, "") for row in rows}
    # the part that names each: the two p4d instances, the three Azure VMs, the three GCP VMs
    for name in ("instance/i-04d7a1b2c3d4e5f60", "instance/i-04d7a1b2c3d4e5f62",
                 "virtualmachines/gpu-01", "virtualmachines/gpu-03", "virtualmachines/h100-spot-01",
                 "instances/a2-train-01", "instances/a2-ultra-01", "instances/g2-spot-01"):  # fmt: skip
        assert any(cell.endswith(name) for cell in cells), name
    assert not any(cell.endswith("…") for cell in cells)


def test_the_unused_capacity_names_each_reservation(markdown: str) -> None:
    rows = _table(markdown, "cloud", "reservation or commitment")[1:]
    assert [r[1].replace(WBR, "") for r in rows] == [
        "capacity-reservation/cr-0f3a9b1c2d4e5f607",
        "reservations/9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
        "commitments/a2-gpu-1y",
    ]


def test_the_terminal_bill_fits_80_columns(terminal: str) -> None:
    long = [line for line in terminal.splitlines() if len(line) > 80]
    assert not long, long


def test_finding_lines_say_what_each_amount_is(terminal: str) -> None:
    lines = terminal.splitlines()
    at = lines.index("  high     billed-spot-for-training: aws training-job/llm-pretrain-q3")
    assert lines[at + 1].strip() == "1,604 h; spend $60,460.97; saving $46,436.46 over the period"
    tags = [i for i, line in enumerate(lines) if "billed-cost-allocation-tags" in line]
    assert tags and all(re.fullmatch(r"[\d,]+ h; spend \$[\d,.]+", lines[i + 1].strip())
                        for i in tags)  # fmt: skip


def test_one_spot_share_said_of_what(terminal: str, markdown: str) -> None:
    # the demo's truth (python -m tests.billing.quarter --demo): 89,682.25 GPU-hours, 26,903.25 spot
    assert "(89,682.25 GPU-hours, 30.0% of them on spot)" in markdown
    assert "30.0% of them on spot" in terminal
    assert re.findall(r"\d+\.\d% on spot", terminal + markdown) == []
    assert _table(markdown, "capacity", "effective")[0][-1] == "share of spend"


@pytest.mark.parametrize(
    ("name", "first"),
    [("bill.md", "## GPU spend from the bill"), ("bill.markdown", "## GPU spend"),
     ("bill.csv", "section,"), ("bill.json", "{"), ("bill.txt", "GPU spend from the bill, ")],
)  # fmt: skip
def test_the_output_extension_picks_the_format(tmp_path: Path, name: str, first: str) -> None:
    out = tmp_path / name
    result = gpu_audit("billing", *DEMO_BILL, *DEMO_TIME, "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith(first)
    assert result.stderr.startswith("gpu-audit: wrote the ")


@pytest.mark.parametrize(
    ("args", "says"),
    [(["-o", "bill.sarif"], "billing writes no sarif"),
     (["-o", "bill.html"], "no format writes '.html' files"),
     (["--format", "markdown", "-o", "bill.json"], "names the json format, not markdown")],
)  # fmt: skip
def test_an_extension_no_billing_format_writes_is_refused(
    tmp_path: Path, args: list[str], says: str
) -> None:
    result = gpu_audit("billing", *DEMO_BILL, *DEMO_TIME, *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("gpu-audit: error: ") and says in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_billing_honours_the_teams_settings(tmp_path: Path) -> None:
    (tmp_path / "team-policy.yaml").write_text(
        "version: 1\nextends: runbook\nwaivers:\n  - rule: billed-cost-allocation-tags\n"
        "    where: {provider: azure}\n    reason: tagged by the platform team's policy, FIN-9\n"
        "    owner: finops@example.com\n    expires: 2027-06-30\n"
    )
    (tmp_path / ".gpu-audit.yaml").write_text("policies: [team-policy.yaml]\n")
    result = gpu_audit("billing", *DEMO_BILL, *DEMO_TIME, "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tags = [f for f in json.loads(result.stdout)["findings"]
            if f["rule_id"] == "billed-cost-allocation-tags"]  # fmt: skip
    waived = {f["provider"] for f in tags if f["status"] == "waived"}
    assert waived == {"azure"}
    assert {f["provider"] for f in tags if f["status"] == "open"} == {"aws", "gcp"}


def test_one_finding_is_singular(tmp_path: Path) -> None:
    policy = tmp_path / "one.yaml"
    policy.write_text(
        "version: 1\nrules:\n  - id: big-spend\n    title: Big spend\n    severity: low\n"
        "    targets: [billed]\n    where: {billing.effective_usd: {gte: 180000}}\n"
        "    require: {billing.effective_usd: {lt: 180000}}\n    remediation: Look at it.\n"
    )
    result = gpu_audit("billing", *DEMO_BILL, *DEMO_TIME, "--format", "table",
                       "--policy", str(policy))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "; 1 finding worth " in " ".join(result.stdout.split())
