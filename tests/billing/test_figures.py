"""The figures a FinOps reader checks, on the synthetic quarter (the clouds' own layouts: Vertex AI
machine rows, an unused capacity reservation, a partly used reservation, an October invoice
correcting September), each equal to what the rows say to the cent, summed here from the
builder's truth, in JSON, table, CSV and Markdown."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.billing.quarter import Quarter, Row, build_quarter

SCHEMA = Path(__file__).resolve().parents[2] / "src/gpu_audit/billing/billing-v1.schema.json"
MONTHS = ("2026-07", "2026-08", "2026-09")


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def shown(value: float) -> Decimal:
    return Decimal(str(value))


def total(rows: list[Row], field: str) -> Decimal:
    return sum((getattr(r, field) or Decimal(0) for r in rows), Decimal(0))


@pytest.fixture(scope="module")
def quarter(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("bill"))


def run(q: Quarter, fmt: str, *extra: str) -> str:
    paths = [str(q.root / cloud) for cloud in ("aws", "azure", "gcp")]
    period = [] if "--from" in extra else ["--period", "2026-Q3"]
    result = CliRunner().invoke(main, ["billing", *paths, *period, "--format", fmt, *extra])
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def report(quarter: Quarter) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(run(quarter, "json", "--tag", "team", "--tag", "project"))
    jsonschema.validate(body, json.loads(SCHEMA.read_text()))
    return body


def spend_rows(q: Quarter) -> list[Row]:
    return [r for r in q.in_period() if r.kind in ("gpu", "gpu-machine", "unused")]


def test_vertex_machine_rows_are_gpu_spend(quarter: Quarter, report: dict[str, Any]) -> None:
    vertex = [r for r in quarter.in_period() if r.kind == "gpu-machine" and r.tags.get("project")]
    assert vertex  # Vertex AI custom training's A2 cores and RAM
    machine = [r for r in quarter.in_period() if r.kind == "gpu-machine"]
    assert shown(report["totals"]["gpu_machine"]["effective_usd"]) == cents(
        total(machine, "effective")
    )


def test_gpu_spend_holds_the_unused_capacity_in_total_cloud_and_tags(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    rows = spend_rows(quarter)
    assert shown(report["spend"]["effective_usd"]) == cents(total(rows, "effective"))
    assert shown(report["spend"]["billed_usd"]) == cents(total(rows, "billed"))
    assert report["spend"]["rows"] == len(rows)
    for cloud in ("aws", "azure", "gcp"):
        line = next(x for x in report["breakdowns"]["cloud"] if x["key"] == cloud)
        part = [r for r in rows if r.cloud == cloud]
        assert shown(line["effective_usd"]) == cents(total(part, "effective")), cloud
    for tag in ("team", "project"):
        lines = report["breakdowns"][f"tag:{tag}"]
        untagged = next(x for x in lines if x["key"] is None)
        part = [r for r in rows if tag not in r.tags]
        assert shown(untagged["effective_usd"]) == cents(total(part, "effective"))
        # the team lines and the untagged line add up to the spend (exact sums, rounded once)
        exact: dict[str | None, Decimal] = defaultdict(Decimal)
        for r in rows:
            exact[r.tags.get(tag)] += r.effective
        assert {x["key"]: shown(x["effective_usd"]) for x in lines} == {
            k: cents(v) for k, v in exact.items()
        }
    # the unused capacity is on its own line and in no capacity line
    capacity = {x["key"] for x in report["breakdowns"]["capacity"]}
    assert "reserved" not in capacity
    unused = [r for r in rows if r.kind == "unused"]
    assert shown(report["totals"]["unused"]["effective_usd"]) == cents(total(unused, "effective"))


def test_list_cost_and_the_effective_savings_rate(quarter: Quarter, report: dict[str, Any]) -> None:
    rows = spend_rows(quarter)
    listed = total(rows, "list_cost")  # an empty ListCost counts as 0
    effective = total(rows, "effective")
    assert shown(report["spend"]["list_usd"]) == cents(listed)
    assert shown(report["spend"]["savings_rate"]) == (1 - effective / listed).quantize(
        Decimal("0.0001")
    )
    usage = [r for r in rows if r.kind != "unused"]
    for line in report["breakdowns"]["capacity"]:
        part = [r for r in usage if r.capacity == line["key"]]
        eff, lst = total(part, "effective"), total(part, "list_cost")
        hours = total(part, "gpu_hours")
        assert shown(line["savings_rate"]) == (1 - eff / lst).quantize(Decimal("0.0001"))
        assert shown(line["cost_per_gpu_hour_usd"]) == (eff / hours).quantize(Decimal("0.001"))


def test_every_month_of_the_period_is_listed_with_its_spend(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    assert [m["month"] for m in report["months"]] == list(MONTHS)
    for m in report["months"]:
        part = [
            r for r in spend_rows(quarter) if r.charge_period_start.strftime("%Y-%m") == m["month"]
        ]
        read = [
            r for r in quarter.in_period() if r.charge_period_start.strftime("%Y-%m") == m["month"]
        ]
        assert shown(m["effective_usd"]) == cents(total(part, "effective")), m["month"]
        assert m["read_rows"] == len(read)


def test_a_month_with_no_rows_says_so(quarter: Quarter) -> None:
    body = json.loads(run(quarter, "json", "--from", "2026-09-01", "--to", "2026-12-31"))
    assert [m["month"] for m in body["months"]] == ["2026-09", "2026-10", "2026-11", "2026-12"]
    november = body["months"][2]
    assert november["read_rows"] == 0 and november["effective_usd"] == 0
    codes = {w["code"]: w for w in body["data_quality"]}
    assert "2026-11, 2026-12" in codes["missing-months"]["message"]
    markdown = run(quarter, "markdown", "--from", "2026-09-01", "--to", "2026-12-31")
    assert "| 2026-11 |" in markdown and "no rows" in markdown


def test_each_invoice_is_every_rows_billed_cost(quarter: Quarter, report: dict[str, Any]) -> None:
    every = [r for r in quarter.rows if r.counted]
    charged = {(r.cloud, r.billing_period) for r in quarter.in_period()}
    exact: dict[tuple[str, str | None], Decimal] = defaultdict(Decimal)
    for r in every:
        exact[(r.cloud, r.billing_period)] += r.billed
    got = {
        (i["provider"], i["billing_period_start"]): shown(i["billed"]) for i in report["invoices"]
    }
    assert got == {key: cents(value) for key, value in exact.items() if key in charged}
    # October's invoice corrects September: billed in one month, charged in another
    october = next(i for i in report["invoices"] if i["billing_period_start"] == "2026-10-01")
    assert october["billed"] != october["billed_charged_in_period"]


def test_commitment_utilization_and_coverage(quarter: Quarter, report: dict[str, Any]) -> None:
    rows = quarter.in_period()
    lines = {c["id"]: c for c in report["commitments"] if c["kind"] == "commitment"}
    partly = [c for c in lines.values() if 0 < c["utilization"] < 1]
    assert partly  # the Azure reservation is partly used
    for ident, line in lines.items():
        used = total([r for r in rows if r.commitment_id == ident and r.kind == "gpu"], "hours")
        unused = total(
            [r for r in rows if r.commitment_id == ident and r.kind == "unused"], "hours"
        )
        assert shown(line["used_hours"]) == used.quantize(Decimal("0.01"))
        assert shown(line["utilization"]) == (used / (used + unused)).quantize(Decimal("0.0001"))
    gpu = [r for r in rows if r.kind == "gpu"]
    covered = total([r for r in gpu if r.commitment_id or r.capacity == "committed"], "gpu_hours")
    assert shown(report["commitment_coverage"]) == (covered / total(gpu, "gpu_hours")).quantize(
        Decimal("0.0001")
    )


def test_every_format_states_the_new_figures(quarter: Quarter, report: dict[str, Any]) -> None:
    spend = f"{Decimal(str(report['spend']['effective_usd'])):,.2f}"
    table = run(quarter, "table")
    markdown = run(quarter, "markdown")
    assert f"GPU spend ${spend}" in table and f"GPU spend \\${spend}" in markdown
    for text in (table, markdown):
        assert "savings rate" in text and "per GPU-hour" in text and "spot share" in text
        for month in MONTHS:
            assert month in text
    rows = list(csv.DictReader(io.StringIO(run(quarter, "csv"))))
    total_spend = next(r for r in rows if r["section"] == "total" and r["dimension"] == "spend")
    assert Decimal(total_spend["effective_usd"]) == Decimal(str(report["spend"]["effective_usd"]))
    assert {r["key"] for r in rows if r["section"] == "month"} == set(MONTHS)
    assert {r["section"] for r in rows} >= {"invoice", "commitment"}


def test_the_gpu_resources_transfer_is_beside_the_spend(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    moved = [r for r in quarter.in_period() if r.kind == "transfer"]
    assert moved and all(r.resource_id for r in moved)
    assert shown(report["totals"]["transfer"]["effective_usd"]) == cents(total(moved, "effective"))
    assert report["totals"]["transfer"]["rows"] == len(moved)
    by_cloud = {x["key"]: shown(x["effective_usd"]) for x in report["transfer"]["cloud"]}
    assert by_cloud == {"aws": cents(total(moved, "effective"))}
    team = {x["key"]: shown(x["effective_usd"]) for x in report["transfer"]["tag:team"]}
    assert team == {"nlp": cents(total(moved, "effective"))}
    # not in the GPU spend, and not hidden in "left out"
    assert all(x["reason"] != "transfer" for x in report["totals"]["left_out"])
    assert shown(report["spend"]["effective_usd"]) == cents(total(spend_rows(quarter), "effective"))


def test_the_gpu_teams_other_transfer_is_its_own_line(
    quarter: Quarter, report: dict[str, Any]
) -> None:
    teamed = [r for r in quarter.in_period() if r.kind == "team-transfer"]
    # the nlp bucket, the speech storage account, the recsys feature store
    assert {r.cloud for r in teamed} == {"aws", "azure", "gcp"}
    assert all(r.resource_id and r.tags.get("team") for r in teamed)
    # never the same row in both: a GPU resource's transfer is not a team's other transfer
    gpu_ids = {r.resource_id for r in quarter.in_period() if r.kind == "gpu"}
    assert not {r.resource_id for r in teamed} & gpu_ids
    totals = report["totals"]
    assert shown(totals["team_transfer"]["effective_usd"]) == cents(total(teamed, "effective"))
    assert shown(totals["team_transfer"]["billed_usd"]) == cents(total(teamed, "billed"))
    assert totals["team_transfer"]["rows"] == len(teamed)
    by_cloud = {x["key"]: shown(x["effective_usd"]) for x in report["team_transfer"]["cloud"]}
    assert by_cloud == {
        cloud: cents(total([r for r in teamed if r.cloud == cloud], "effective"))
        for cloud in ("aws", "azure", "gcp")
    }
    team = {x["key"]: shown(x["effective_usd"]) for x in report["team_transfer"]["tag:team"]}
    assert team == {
        "nlp": cents(total([r for r in teamed if r.cloud == "aws"], "effective")),
        "speech": cents(total([r for r in teamed if r.cloud == "azure"], "effective")),
        "recsys": cents(total([r for r in teamed if r.cloud == "gcp"], "effective")),
    }
    # the GPU resources' own transfer is unchanged, and every row is read once
    moved = [r for r in quarter.in_period() if r.kind == "transfer"]
    assert shown(totals["transfer"]["effective_usd"]) == cents(total(moved, "effective"))
    left = [r for r in quarter.in_period() if r.kind == "other" and r.currency == "USD"]
    assert sum(x["rows"] for x in totals["left_out"]) == len(left)
    # the table, CSV and Markdown state it as the JSON does
    line = f"{cents(total(teamed, 'effective')):,}"
    assert line in run(quarter, "table", "--tag", "team")
    assert f"${line}" in run(quarter, "markdown", "--tag", "team")
    cells = {
        (r["section"], r["dimension"], r["key"]): Decimal(r["effective_usd"])
        for r in csv.DictReader(io.StringIO(run(quarter, "csv", "--tag", "team")))
        if r["section"] in ("total", "team-transfer")
    }
    assert cells[("total", "team-transfer", "2026-Q3")] == cents(total(teamed, "effective"))
    assert cells[("team-transfer", "tag:team", "speech")] == team["speech"]
