"""A plain FOCUS 1.3 file holding several providers (built here, the columns as the spec names
them, no `x_` columns, `NULL` and empty cells): each row's cloud is its own
`ServiceProviderName`, and GPU rows are found from SkuPriceDetails, the AWS usage type, then the
description (AWS and SageMaker instance hours, GCP GPU SKUs and the core/RAM SKUs of GPU machine
families wherever they stand, Compute Engine and Vertex AI, OCI GPU shapes); the same resource's
volumes and transfer, and CPU instances, are not GPU rows."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

COLUMNS = (
    "ServiceProviderName", "HostProviderName", "BillingCurrency", "BillingPeriodStart",
    "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription",
    "PricingCategory", "BilledCost", "EffectiveCost", "ListCost", "ConsumedQuantity",
    "ConsumedUnit", "ServiceName", "SkuMeter", "SkuPriceDetails", "ResourceId", "RegionId",
    "SubAccountId", "CommitmentDiscountId", "CommitmentDiscountStatus", "Tags",
)  # fmt: skip
T = "2026-08-03T10:00:00Z"
E = "2026-08-03T11:00:00Z"


def row(provider: str, description: str, cost: str, quantity: str, **extra: str) -> dict[str, str]:
    base = dict.fromkeys(COLUMNS, "NULL")
    base.update(
        ServiceProviderName=provider, BillingCurrency="USD", BillingPeriodStart="2026-08-01",
        ChargePeriodStart=T, ChargePeriodEnd=E, ChargeCategory="Usage", ChargeClass="",
        ChargeDescription=description, PricingCategory="Standard", BilledCost=cost,
        EffectiveCost=cost, ListCost=cost, ConsumedQuantity=quantity, ConsumedUnit="Hours",
    )  # fmt: skip
    base.update(extra)
    return base


# (row, GPU-hours it counts, or None where it is not a GPU row)
ROWS: list[tuple[dict[str, str], Decimal | None]] = [
    (row("AWS", "$98.32 per On Demand Linux p5.48xlarge Instance Hour", "98.32", "1",
         ResourceId="i-0p5", SkuPriceDetails='{"InstanceType": "p5.48xlarge"}'), Decimal(8)),
    (row("AWS", "$1.624 per On Demand Linux g5.4xlarge Instance Hour", "16.24", "10",
         ResourceId="i-0g5"), Decimal(10)),
    (row("AWS", "$37.69 per hour for ml.p4d.24xlarge Training", "75.38", "2",
         ResourceId="arn:aws:sagemaker:us-east-1:1:training-job/t", ServiceName="Amazon SageMaker"),
     Decimal(16)),
    (row("AWS", "USE1-BoxUsage:g6.xlarge", "8.05", "10", SkuMeter="USE1-BoxUsage:g6.xlarge",
         ResourceId="i-0g6"), Decimal(10)),
    # the g5's volume and transfer, and a CPU instance: not GPU rows
    (row("AWS", "$0.08 per GB-month of General Purpose SSD (gp3) provisioned storage", "4.00",
         "50", ResourceId="i-0g5", ConsumedUnit="GB-Mo"), None),
    (row("AWS", "$0.09 per GB - data transfer out of US East (N. Virginia)", "9.00", "100",
         ResourceId="i-0g5", ConsumedUnit="GB"), None),
    (row("AWS", "$0.34 per On Demand Linux c5.2xlarge Instance Hour", "3.40", "10",
         ResourceId="i-0c5"), None),
    # GCP: a GPU SKU (GPU-hours), Compute Engine and Vertex AI core/RAM of GPU machines (spend)
    (row("Google Cloud", "Nvidia Tesla A100 GPU running in Americas", "29.39", "10",
         ResourceId="projects/p/instances/a2"), Decimal(10)),
    (row("Google Cloud", "A2 Instance Core running in Americas", "3.79", "120",
         ResourceId="projects/p/instances/a2"), Decimal(0)),
    (row("Google Cloud", "Vertex AI: Custom Training: A2 Instance Ram running in Americas", "1.10",
         "850", ServiceName="Vertex AI"), Decimal(0)),
    (row("Google Cloud", "Custom Training A3 High Instance Core running in Americas", "5.50", "208",
         ServiceName="Vertex AI"), Decimal(0)),
    (row("Google Cloud", "N2 Instance Core running in Americas", "2.00", "100"), None),
    # OCI shapes: GPU-hours in the unit where it says GPUs, else hours times the shape's GPUs
    (row("Oracle", "Compute - GPU - BM.GPU.H100.8", "800.00", "80", ConsumedUnit="GPU Hours",
         ResourceId="ocid1.instance.oc1..h100"), Decimal(80)),
    (row("Oracle", "Compute - GPU - VM.GPU.A10.1", "20.00", "10",
         ResourceId="ocid1.instance.oc1..a10"), Decimal(10)),
    (row("Oracle", "Standard - E5", "1.00", "10", ResourceId="ocid1.instance.oc1..e5"), None),
]  # fmt: skip


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("plain") / "focus-1.3.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(r for r, _ in ROWS)
    result = CliRunner().invoke(
        main, ["billing", str(path), "--period", "2026-08", "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def _cloud(provider: str) -> str:
    return {"AWS": "aws", "Google Cloud": "gcp", "Oracle": "oci"}[provider]


def test_every_gpu_row_and_only_those_is_gpu_spend(report: dict[str, Any]) -> None:
    gpu = [(r, h) for r, h in ROWS if h is not None]
    gpu_cost = sum((Decimal(r["EffectiveCost"]) for r, _ in gpu), Decimal(0))
    assert report["totals"]["gpu"]["rows"] == len(gpu)
    assert Decimal(str(report["totals"]["gpu"]["effective_usd"])) == gpu_cost
    hours = sum((h for _, h in gpu if h is not None), Decimal(0))
    assert Decimal(str(report["totals"]["gpu"]["gpu_hours"])) == hours


def test_each_rows_cloud_is_its_own_provider(report: dict[str, Any]) -> None:
    want: dict[str, Decimal] = {}
    for r, h in ROWS:
        if h is not None:
            cloud = _cloud(r["ServiceProviderName"])
            want[cloud] = want.get(cloud, Decimal(0)) + Decimal(r["EffectiveCost"])
    got = {
        line["key"]: Decimal(str(line["effective_usd"])) for line in report["breakdowns"]["cloud"]
    }
    assert got == want


def test_gpu_instance_types_are_named_from_the_description(report: dict[str, Any]) -> None:
    types = {line["key"] for line in report["breakdowns"]["instance_type"]}
    assert {"p5.48xlarge", "g5.4xlarge", "ml.p4d.24xlarge", "g6.xlarge"} <= types
    assert {"BM.GPU.H100.8", "VM.GPU.A10.1"} <= types
    assert "c5.2xlarge" not in types


def test_data_quality_warnings_count_their_rows(tmp_path_factory: pytest.TempPathFactory) -> None:
    unused = row("AWS", "$98.32 per Unused Reservation Linux p5.48xlarge Instance Hour", "98.32",
                 "1", CommitmentDiscountId="ri-1", CommitmentDiscountStatus="Unused")  # fmt: skip
    rows = [
        row("AWS", "$1.624 per On Demand Linux g5.4xlarge Instance Hour", "1.624", "1"),  # no id
        row("AWS", "$1.624 per On Demand Linux g5.4xlarge Instance Hour", "2.00", "1",
            ResourceId="i-1", ListCost="1.624"),  # effective over list
        row("AWS", "$1.624 per On Demand Linux g5.4xlarge Instance Hour", "-1.624", "-1",
            ResourceId="i-1", ChargeClass="Correction"),  # negative usage
        row("AWS", "$1.81 per On Demand Linux g5.4xlarge Instance Hour", "1.81", "1",
            ResourceId="i-2", BillingCurrency="EUR"),
        unused,  # no ResourceId, as unused capacity never has: not warned of
    ]  # fmt: skip
    path = tmp_path_factory.mktemp("quality") / "focus.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    result = CliRunner().invoke(
        main,
        ["billing", str(path), "--from", "2026-07-01", "--to", "2026-08-31", "--format", "json"],
    )
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    warnings = {w["code"]: w for w in body["data_quality"]}
    assert warnings["gpu-usage-without-resource-id"]["rows"] == 1
    assert warnings["effective-over-list"]["rows"] == 1
    assert warnings["negative-usage"]["rows"] == 1
    assert (
        warnings["other-currency"]["rows"] == 1 and "EUR" in warnings["other-currency"]["message"]
    )
    assert "2026-07" in warnings["missing-months"]["message"]
    assert [c["currency"] for c in body["other_currencies"]] == ["EUR"]
    assert Decimal(str(body["spend"]["effective_usd"])) == Decimal("1.624") + Decimal(
        "2.00"
    ) - Decimal("1.624") + Decimal("98.32")  # dollars only, the unused capacity included


def test_transfer_over_a_fifth_of_compute_is_a_finding(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tags = '{"team": "nlp", "owner": "ana", "project": "llm"}'
    rows = [
        row("AWS", "$1.624 per On Demand Linux g5.4xlarge Instance Hour", "162.40", "100",
            ResourceId="i-far", Tags=tags),
        row("AWS", "$0.02 per GB - US East (N. Virginia) data transfer to US West (Oregon)",
            "60.00", "3000", ResourceId="i-far", ConsumedUnit="GB", Tags=tags,
            SkuMeter="USE1-USW2-AWS-Out-Bytes"),
        row("AWS", "$1.624 per On Demand Linux g5.4xlarge Instance Hour", "162.40", "100",
            ResourceId="i-near", Tags=tags),
        row("AWS", "$0.01 per GB - regional data transfer - in/out/between EC2 AZs", "1.00",
            "100", ResourceId="i-near", ConsumedUnit="GB", Tags=tags),
    ]  # fmt: skip
    path = tmp_path_factory.mktemp("transfer") / "focus.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    result = CliRunner().invoke(
        main, ["billing", str(path), "--period", "2026-08", "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    assert Decimal(str(body["totals"]["transfer"]["effective_usd"])) == Decimal("61.00")
    assert Decimal(str(body["spend"]["effective_usd"])) == Decimal("324.80")  # not in the spend
    found = [f for f in body["findings"] if f["rule_id"] == "billed-transfer-over-compute"]
    assert [f["resource_id"] for f in found] == ["i-far"]
    assert found[0]["effective_usd"] == 162.4  # the compute; the transfer is beside it, in dollars
    assert found[0]["transfer_usd"] == 60.0


def test_the_gpu_teams_transfer_and_the_locality_saving(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    nlp, web = '{"team": "nlp"}', '{"team": "web"}'
    g5 = "$1.624 per On Demand Linux g5.4xlarge Instance Hour"
    far = "$0.02 per GB - US East (N. Virginia) data transfer to US West (Oregon)"
    rows = [
        row("AWS", g5, "162.40", "100", ResourceId="i-far", Tags=nlp),
        row("AWS", far, "60.00", "3000", ResourceId="i-far", ConsumedUnit="GB", Tags=nlp,
            SkuMeter="USE1-USW2-AWS-Out-Bytes"),
        # the nlp team's bucket replicated across regions: no GPU's id, the GPU team's tag
        row("AWS", far, "24.68", "1234", ResourceId="nlp-datasets", ConsumedUnit="GB",
            Tags=nlp, SkuMeter="USE1-USW2-AWS-Out-Bytes", ServiceName="Amazon S3"),
        row("AWS", far, "0.37", "18.5", ResourceId="nlp-cache", ConsumedUnit="GB", Tags=nlp),
        # a team without GPUs, and nlp's transfer on a cloud where nlp has no GPU rows
        row("AWS", far, "5.00", "250", ResourceId="web-assets", ConsumedUnit="GB", Tags=web),
        row("Google Cloud", "Network Inter Zone Egress", "3.30", "330", ConsumedUnit="GiB",
            ResourceId="nlp-gcs", Tags=nlp),
        # nlp storage: not transfer
        row("AWS", "$0.023 per GB - first 50 TB / month of storage used", "2.30", "100",
            ResourceId="nlp-datasets", ConsumedUnit="GB-Mo", Tags=nlp),
    ]  # fmt: skip
    path = tmp_path_factory.mktemp("team-transfer") / "focus.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    args = ["billing", str(path), "--period", "2026-08"]
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    totals = body["totals"]
    assert Decimal(str(totals["transfer"]["effective_usd"])) == Decimal("60.00")
    team = Decimal("24.68") + Decimal("0.37")
    assert Decimal(str(totals["team_transfer"]["effective_usd"])) == team
    assert totals["team_transfer"]["rows"] == 2
    by_cloud = {x["key"]: Decimal(str(x["effective_usd"])) for x in body["team_transfer"]["cloud"]}
    assert by_cloud == {"aws": team}
    by_team = {
        x["key"]: Decimal(str(x["effective_usd"])) for x in body["team_transfer"]["tag:team"]
    }
    assert by_team == {"nlp": team}
    left = {x["reason"]: Decimal(str(x["effective_usd"])) for x in totals["left_out"]}
    assert left == {"usage, not a GPU": Decimal("5.00") + Decimal("3.30") + Decimal("2.30")}
    # every row once: GPU + transfer + team transfer + left out = read
    read = Decimal(str(totals["read"]["effective_usd"]))
    assert read == Decimal("162.40") + Decimal("60.00") + team + sum(left.values())
    # the locality lever: the transfer above 20% of compute, 60.00 − 0.2 × 162.40
    found = [f for f in body["findings"] if f["rule_id"] == "billed-transfer-over-compute"]
    assert [(f["resource_id"], f["saving_usd"]) for f in found] == [("i-far", 27.52)]
    assert Decimal(str(found[0]["saving_usd"])) == Decimal("60.00") - Decimal("0.2") * Decimal(
        "162.40"
    )
    assert body["waste_usd"] >= 27.52
    # the table, CSV and Markdown state the team transfer too
    table = CliRunner().invoke(main, [*args, "--format", "table"]).stdout
    assert "GPU teams' other transfer" in table and "25.05" in table
    markdown = CliRunner().invoke(main, [*args, "--format", "markdown"]).stdout
    assert "GPU teams' other data transfer (same team tag, no GPU resource) by cloud" in markdown
    assert "$25.05" in markdown
    out = CliRunner().invoke(main, [*args, "--format", "csv"]).stdout
    cells = {
        (r["section"], r["dimension"], r["key"]): Decimal(r["effective_usd"])
        for r in csv.DictReader(out.splitlines())
    }
    assert cells[("total", "team-transfer", "2026-08")] == team
    assert cells[("team-transfer", "cloud", "aws")] == team
    assert cells[("team-transfer", "tag:team", "nlp")] == team


def test_a_teams_own_transfer_rule_prices_the_locality_lever_at_its_own_bound(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("own-rule")
    g5 = "$1.624 per On Demand Linux g5.4xlarge Instance Hour"
    far = "$0.02 per GB - US East (N. Virginia) data transfer to US West (Oregon)"
    rows = [
        row("AWS", g5, "162.40", "100", ResourceId="i-far"),
        row("AWS", far, "60.00", "3000", ResourceId="i-far", ConsumedUnit="GB",
            SkuMeter="USE1-USW2-AWS-Out-Bytes"),
    ]  # fmt: skip
    path = root / "focus.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    policy = root / "policy.yaml"
    policy.write_text(
        "version: 1\n"
        "rules:\n"
        "  - id: transfer-under-a-tenth\n"
        "    title: transfer under a tenth of compute\n"
        "    severity: low\n"
        "    targets: [billed]\n"
        "    require: {billing.billed_usd: {gte: 0}, billing.transfer_share: {lte: 0.1}}\n"
        "    savings: locality\n"
        "  - id: no-transfer\n"
        "    title: no transfer at all\n"
        "    severity: info\n"
        "    targets: [billed]\n"
        "    require: {billing.transfer_usd: {lte: 0}}\n"
        "    savings: locality\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        main,
        ["billing", str(path), "--period", "2026-08", "--format", "json", "--policy", str(policy)],
    )
    assert result.exit_code == 0, result.stderr
    found = {f["rule_id"]: f["saving_usd"] for f in json.loads(result.stdout)["findings"]}
    # above a tenth: 60.00 − 0.1 × 162.40; no bound on the share: the whole transfer
    assert Decimal(str(found["transfer-under-a-tenth"])) == Decimal("60.00") - Decimal(
        "0.1"
    ) * Decimal("162.40")
    assert Decimal(str(found["no-transfer"])) == Decimal("60.00")
