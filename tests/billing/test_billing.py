"""`gpu-audit billing` on the synthetic quarter: every figure equals what the rows say, to the
cent; superseded files and repeated runs never count; the forgotten cluster and the unused
reservation are findings; the reports parse and validate."""

from __future__ import annotations

import csv
import io
import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.billing.layout_aws import CLUSTER_IDS
from tests.billing.quarter import Quarter, Row, build_quarter

pytest.importorskip("duckdb")

SCHEMA = Path(__file__).resolve().parents[2] / "src/gpu_audit/billing/billing-v1.schema.json"
NOW = "2026-10-05T08:00:00Z"


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def shown(value: float) -> Decimal:
    return Decimal(str(value))


@pytest.fixture(scope="module")
def quarter(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("bill"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def paths(q: Quarter) -> list[str]:
    return [str(q.root / cloud) for cloud in ("aws", "azure", "gcp")]


@pytest.fixture(scope="module")
def report(quarter: Quarter) -> dict[str, Any]:
    code, out, err = run(
        "billing", *paths(quarter), "--period", "2026-Q3", "--format", "json", "--now", NOW
    )
    assert code == 0, err
    return json.loads(out)


def spend(q: Quarter) -> list[Row]:
    """The rows the report calls GPU spend: GPU usage and GCP GPU machines' cores and memory."""
    return [r for r in q.in_period() if r.kind in ("gpu", "gpu-machine")]


def total(rows: list[Row], field: str) -> Decimal:
    return sum((getattr(r, field) for r in rows), Decimal(0))


def test_the_report_validates_against_its_schema(report: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(report)
    assert report["period"] == {
        "name": "2026-Q3",
        "start": "2026-07-01T00:00:00Z",
        "end": "2026-10-01T00:00:00Z",
    }


def test_gpu_spend_and_gpu_hours_equal_the_rows_to_the_cent(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    rows = spend(quarter)
    gpu = report["totals"]["gpu"]
    assert shown(gpu["effective_usd"]) == cents(total(rows, "effective"))
    assert shown(gpu["billed_usd"]) == cents(total(rows, "billed"))
    assert shown(gpu["gpu_hours"]) == total(rows, "gpu_hours").quantize(Decimal("0.01"))
    assert gpu["rows"] == len(rows)
    machine = [r for r in rows if r.kind == "gpu-machine"]
    assert machine and shown(report["totals"]["gpu_machine"]["effective_usd"]) == cents(
        total(machine, "effective")
    )
    spot = [r for r in rows if r.capacity == "spot"]
    assert shown(gpu["spot_gpu_hours"]) == total(spot, "gpu_hours").quantize(Decimal("0.01"))


def test_unused_reserved_capacity_is_its_own_line_and_never_gpu_hours(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    unused = [r for r in quarter.in_period() if r.kind == "unused"]
    assert {r.cloud for r in unused} == {"aws", "azure", "gcp"}
    line = report["totals"]["unused"]
    assert shown(line["effective_usd"]) == cents(total(unused, "effective"))
    assert shown(line["billed_usd"]) == cents(total(unused, "billed"))
    assert line["gpu_hours"] == 0
    by_cloud = {}
    for item in report["unused"]:
        by_cloud[item["cloud"]] = by_cloud.get(item["cloud"], Decimal(0)) + shown(
            item["effective_usd"]
        )
    for cloud in ("aws", "azure", "gcp"):
        expected = cents(total([r for r in unused if r.cloud == cloud], "effective"))
        assert abs(by_cloud[cloud] - expected) <= Decimal("0.01") * len(report["unused"])


def test_what_is_read_adds_up_so_a_reader_can_check_it_against_the_invoice(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    every = quarter.in_period()
    totals = report["totals"]
    assert totals["read"]["rows"] == len(every)
    assert shown(totals["read"]["billed_usd"]) == cents(total(every, "billed"))
    assert shown(totals["read"]["effective_usd"]) == cents(total(every, "effective"))
    other = [r for r in every if r.kind == "other"]
    left = sum((shown(line["effective_usd"]) for line in totals["left_out"]), Decimal(0))
    assert abs(left - cents(total(other, "effective"))) <= Decimal("0.01") * len(totals["left_out"])
    assert sum(line["rows"] for line in totals["left_out"]) == len(other)
    reasons = {line["reason"] for line in totals["left_out"]}
    assert {"Tax", "Credit", "Purchase", "usage, not a GPU"} <= reasons


@pytest.mark.parametrize(
    "dimension",
    [
        "cloud",
        "account",
        "region",
        "capacity",
        "instance_type",
        "tag:team",
        "tag:project",
        "tag:owner",
    ],
)
def test_every_breakdown_line_equals_its_rows(
    quarter: Quarter, report: dict[str, Any], dimension: str
) -> None:
    def key(row: Row) -> str | None:
        if dimension.startswith("tag:"):
            return row.tags.get(dimension[4:])
        if dimension == "instance_type" and row.instance_type is None and row.kind == "gpu":
            return f"gpu:{row.gpu_model}"
        if dimension == "capacity" and row.kind == "gpu-machine" and row.capacity == "on-demand":
            return "on-demand"
        return getattr(row, dimension)

    # spend by who and where holds the unused capacity too; by what ran, it does not
    unused = [r for r in quarter.in_period() if r.kind == "unused"]
    rows_of = spend(quarter) + ([] if dimension in ("capacity", "instance_type") else unused)
    expected: dict[str | None, list[Row]] = {}
    for row in rows_of:
        expected.setdefault(key(row), []).append(row)
    lines = {line["key"]: line for line in report["breakdowns"][dimension]}
    assert set(lines) == set(expected)
    assert sum((shown(x["effective_usd"]) for x in lines.values()), Decimal(0)) == sum(
        (cents(total(rows, "effective")) for rows in expected.values()), Decimal(0)
    )
    for name, rows in expected.items():
        assert shown(lines[name]["effective_usd"]) == cents(total(rows, "effective")), name
        assert shown(lines[name]["gpu_hours"]) == total(rows, "gpu_hours").quantize(
            Decimal("0.01")
        ), name
    if dimension.startswith("tag:"):
        assert None in lines  # untagged spend is its own line


def test_superseded_files_and_earlier_azure_runs_are_never_read(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    skipped = [r for r in quarter.rows if not r.counted]
    assert {r.cloud for r in skipped} == {"aws", "azure"}
    sources = {s["cloud"]: s for s in report["sources"]}
    assert sources["aws"]["superseded"] >= 1 and sources["azure"]["superseded"] >= 1
    assert sources["gcp"]["superseded"] == 0
    # a naive glob would have counted them: the totals above hold only without them
    naive = cents(
        total(spend(quarter), "effective")
        + total([r for r in skipped if r.kind in ("gpu", "gpu-machine")], "effective")
    )
    assert shown(report["totals"]["gpu"]["effective_usd"]) != naive


def test_a_late_correction_counts_in_the_period_it_corrects(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    corrections = [r for r in quarter.in_period() if r.charge_class == "Correction"]
    assert corrections, "the quarter holds a correction delivered in October"
    assert shown(report["totals"]["corrections_usd"]) == cents(total(corrections, "effective"))
    late = [r for r in quarter.rows if r.counted and r.charge_period_start >= quarter.period[1]]
    assert late and report["outside_period"]["rows"] >= len(late)


def test_the_forgotten_cluster_is_a_finding_with_its_hours_and_dollars(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    found = {
        f["resource_id"]: f
        for f in report["findings"]
        if f["rule_id"] == "billed-untagged-long-running"
    }
    for instance in CLUSTER_IDS:
        finding = found[instance]
        rows = [r for r in quarter.in_period() if r.resource_id == instance]
        assert shown(finding["effective_usd"]) == cents(total(rows, "effective"))
        assert shown(finding["hours"]) == total(rows, "hours").quantize(Decimal("0.01"))
        assert finding["ended"] is True and finding["last_charge"] < "2026-09"
        assert finding["period"] == "2026-Q3" and finding["saving_usd"] == finding["effective_usd"]


def test_the_unused_reservation_is_a_finding_in_dollars(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    findings = [f for f in report["findings"] if f["rule_id"] == "unused-reserved-capacity"]
    assert {f["provider"] for f in findings} == {"aws", "azure", "gcp"}
    aws = [r for r in quarter.in_period() if r.kind == "unused" and r.cloud == "aws"]
    assert sum(shown(f["saving_usd"]) for f in findings if f["provider"] == "aws") == cents(
        total(aws, "effective")
    )


def test_azure_arm_ids_in_either_case_are_one_resource(report: dict[str, Any]) -> None:
    """The export writes one VM's id as `…/resourceGroups/ML/…/GPU-01` and `…/gpu-01`."""
    ids = {
        f["resource_id"]
        for f in report["findings"]
        if f["rule_id"] == "billed-cost-allocation-tags" and f["provider"] == "azure"
    }
    assert ids and all(i == i.lower() for i in ids)
    assert sum(i.endswith("/virtualmachines/gpu-01") for i in ids) == 1


def test_csv_markdown_and_table_render_the_same_totals(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    from markdown_it import MarkdownIt

    args = ["billing", *paths(quarter), "--period", "2026-Q3", "--now", NOW]
    code, text, _ = run(*args, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(text)))
    gpu = next(r for r in rows if r["section"] == "total" and r["dimension"] == "gpu")
    assert Decimal(gpu["effective_usd"]) == shown(report["totals"]["gpu"]["effective_usd"])
    assert not any(cell.startswith(("=", "+", "@")) for r in rows for cell in r.values() if cell)
    code, markdown, _ = run(*args, "--format", "markdown")
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    effective = report["totals"]["gpu"]["effective_usd"]
    assert f"${effective:,.2f}" in html and html.count("<table>") >= 4
    assert "billed-untagged-long-running" in markdown and "unused-reserved-capacity" in markdown
    code, table, _ = run(*args, "--format", "table")
    assert f"${effective:,.2f}" in table


def test_a_month_and_from_to_select_the_same_rows(quarter: Quarter) -> None:
    code, out, _ = run(
        "billing", *paths(quarter), "--period", "2026-08", "--format", "json", "--now", NOW
    )
    month = json.loads(out)
    code2, out2, _ = run(
        "billing",
        *paths(quarter),
        "--from",
        "2026-08-01",
        "--to",
        "2026-08-31",
        "--format",
        "json",
        "--now",
        NOW,
    )
    assert code == code2 == 0
    ranged = json.loads(out2)
    assert month["totals"] == ranged["totals"]
    august = [
        r
        for r in quarter.in_period()
        if r.charge_period_start.month == 8 and r.kind in ("gpu", "gpu-machine")
    ]
    assert shown(month["totals"]["gpu"]["effective_usd"]) == cents(total(august, "effective"))


def test_fail_on_exits_1_on_open_findings(quarter: Quarter) -> None:
    code, _, _ = run(
        "billing", *paths(quarter), "--period", "2026-Q3", "--format", "json", "--fail-on", "high"
    )
    assert code == 1


def test_every_dollar_sign_in_the_markdown_is_escaped(quarter: Quarter) -> None:
    """GitHub reads two `$` on a line as inline math: a negative amount too (`-$222.06`)."""
    code, markdown, _ = run(
        "billing", *paths(quarter), "--period", "2026-Q3", "--format", "markdown"
    )
    assert code == 0 and "-\\$" in markdown
    for line in markdown.splitlines():
        assert "$" not in line.replace("\\$", ""), line


def test_a_waiver_applies_to_a_finding_from_the_bill(quarter: Quarter, tmp_path: Path) -> None:
    policy = tmp_path / "team.yaml"
    policy.write_text(
        "version: 1\nextends: runbook\nwaivers:\n  - rule: unused-reserved-capacity\n"
        "    where: {provider: aws}\n    reason: Capacity Block for the Q4 launch, FIN-2211\n"
        "    owner: ml-platform@example.com\n    expires: 2027-03-31\n"
    )
    code, out, _ = run("billing", *paths(quarter), "--period", "2026-Q3", "--policy", str(policy),
                       "--format", "json", "--now", NOW)  # fmt: skip
    assert code == 0
    unused = {
        f["provider"]: f["status"]
        for f in json.loads(out)["findings"]
        if f["rule_id"] == "unused-reserved-capacity"
    }
    assert unused == {"aws": "waived", "azure": "open", "gcp": "open"}
    code, markdown, _ = run(
        "billing",
        *paths(quarter),
        "--period",
        "2026-Q3",
        "--policy",
        str(policy),
        "--format",
        "markdown",
    )
    assert ", 1 waived)" in markdown


def test_the_shipped_pack_by_name(quarter: Quarter) -> None:
    code, out, err = run(
        "billing",
        *paths(quarter),
        "--period",
        "2026-Q3",
        "--policy",
        "runbook",
        "--format",
        "json",
        "--now",
        NOW,
    )
    assert code == 0, err
    assert any(f["rule_id"] == "billed-untagged-long-running" for f in json.loads(out)["findings"])


def test_a_long_list_of_findings_is_capped_where_people_read_it(quarter: Quarter) -> None:
    """The runbook's table shows 100 findings and the terminal 30, each saying how many more;
    JSON and CSV list every one."""
    from dataclasses import replace
    from datetime import UTC, datetime

    from gpu_audit.billing.period import parse_period
    from gpu_audit.billing.render_text import ROWS, TERMINAL_ROWS, render_markdown, render_table
    from gpu_audit.billing.report import judge, read_groups
    from gpu_audit.policy.loader import load_policy

    summary, groups = read_groups(
        paths(quarter), parse_period("2026-Q3"), ("team", "project", "owner")
    )
    report = judge(summary, groups, load_policy(None), datetime(2026, 10, 5, tzinfo=UTC))
    many = replace(report, findings=report.findings * 10)
    total = len(many.open_findings)
    assert total > ROWS
    markdown = render_markdown(many)
    assert f"… and {total - ROWS:,} more (the JSON and CSV reports list every one)." in markdown
    table = render_table(many)
    assert f"  … and {total - TERMINAL_ROWS:,} more (--format json or csv lists every one)" in table
