"""Capacity bought ahead across three clouds, end to end: `gpu-audit scan` against moto (behind the
EC2 capacity-reservation proxy), the GCE-shaped server and the ARM-shaped server on loopback, twice
with a history. Every dollar is worked out here by hand: unused instances × hours × rate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from azure_fixtures import SUB_A, capacity_group, vm
from azure_server import FakeAzure
from azure_server import serve as serve_azure
from click.testing import CliRunner
from gcp_server import FakeGcp
from gcp_server import serve as serve_gcp
from reservation_fixtures import RESERVED, aws_reservations, reserved_project

from gpu_audit.catalog import price
from gpu_audit.cli.main import main
from gpu_audit.collectors.azure.connect import ENDPOINT_ENV as AZURE_ENDPOINT_ENV
from gpu_audit.collectors.gcp.connect import (
    GCE_ENDPOINT_ENV,
    GCS_ENDPOINT_ENV,
    MONITORING_ENDPOINT_ENV,
    VERTEX_ENDPOINT_ENV,
)

FIRST = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
SECOND = FIRST + timedelta(hours=12)
P5 = price("p5.48xlarge", "us-east-1", "H100", 8, ())
ND96 = price("Standard_ND96asr_v4", "eastus", "A100-40GB", 8, ())
ODCR, BLOCK = "cr-0odcr000000000001", "cr-0block00000000001"


@pytest.fixture
def clouds(
    aws_fleet: Any, ec2_capacity: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Any]]:
    ids = aws_reservations(aws_fleet, ec2_capacity, FIRST)
    gcp = FakeGcp()
    gcp_vms = reserved_project(gcp, FIRST + timedelta(days=20), FIRST + timedelta(days=34))
    azure = FakeAzure(resources={SUB_A: [vm(SUB_A, "infer-t4", "Standard_NC4as_T4_v3")]})
    group = capacity_group(azure, SUB_A, "a100-crg", [("a100-pair", "Standard_ND96asr_v4", 2, [])])
    with serve_gcp(gcp) as gcp_url, serve_azure(azure) as azure_url:
        for env in (
            GCE_ENDPOINT_ENV,
            MONITORING_ENDPOINT_ENV,
            GCS_ENDPOINT_ENV,
            VERTEX_ENDPOINT_ENV,
        ):
            monkeypatch.setenv(env, gcp_url)
        monkeypatch.setenv(AZURE_ENDPOINT_ENV, azure_url)
        yield {"aws": ids, "gcp": gcp_vms, "azure_group": group}


def scan(tmp_path: Path, when: datetime, *extra: str) -> Any:
    config = tmp_path / ".gpu-audit.yaml"
    config.write_text(
        "aws:\n  max_attempts: 1\n  services: [ec2]\n  regions: [us-east-1]\n"
        f"gcp:\n  projects: [{RESERVED}]\n  services: [gce]\n  max_attempts: 1\n"
        f"azure:\n  subscriptions: ['{SUB_A}']\n  max_attempts: 1\n"
    )
    args = ["scan", "--provider", "aws", "--provider", "gcp", "--provider", "azure"]
    args += ["--config", str(config), "--now", when.isoformat(), "--fail-on", "critical"]
    return CliRunner().invoke(main, [*args, "--history", str(tmp_path / "audits.db"), *extra])


def _by_id(report: dict[str, Any]) -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
    resources = {r["id"]: r for r in report["resources"]}
    findings = {
        (f["rule_id"], report["resources"][f["resource"]]["id"]): f for f in report["findings"]
    }
    return resources, findings


@pytest.mark.server
def test_reservations_across_three_clouds_and_two_audits(
    clouds: dict[str, Any], tmp_path: Path
) -> None:
    assert P5 is not None and P5.on_demand and ND96 is not None and ND96.on_demand
    first = scan(tmp_path, FIRST, "--format", "json")
    assert first.exit_code == 1, first.output  # critical findings: the empty reservations
    resources, findings = _by_id(json.loads(first.stdout))
    a3 = f"projects/{RESERVED}/zones/us-central1-a/reservations/a3-pretrain"
    a100 = clouds["azure_group"].lower() + "/capacityreservations/a100-pair"
    held = {i: resources[i]["reservation"] for i in (ODCR, BLOCK, a3, a100)}

    # AWS: 4 × p5.48xlarge holding 1, open-ended: 3 × 730 h × the on-demand rate.
    assert (held[ODCR]["total"], held[ODCR]["used"]) == (4, 1)
    assert held[ODCR]["unused_usd"] == round(3 * 730 * P5.on_demand, 2) == 120537.6
    assert findings[("reserved-capacity-unused", ODCR)]["monthly_savings_usd"] == 120537.6
    # Severity by dollars: the pack raises the rule (high) to critical from $10,000.
    assert findings[("reserved-capacity-unused", ODCR)]["severity"] == "critical"
    assert findings[("reserved-capacity-unused", BLOCK)]["severity"] == "high"
    # The Capacity Block ends in 20 hours with training on it: 1 unused × 20 h, and checkpoint.
    assert (held[BLOCK]["type"], held[BLOCK]["hours_left"]) == ("capacity-block", 20)
    assert held[BLOCK]["unused_usd"] == round(1 * 20 * P5.on_demand, 2) == 1100.8
    assert ("capacity-block-ending", BLOCK) in findings
    # On-demand p5 in its zone beside the open reservation's room: told to move onto it.
    beside = [r for r in resources.values() if r["reservation"]["covering"] == ODCR]
    assert len(beside) == 2 and all(r["capacity"] == "on-demand" for r in beside)
    for each in beside:
        assert ("use-open-reservation", each["id"]) in findings
    # GCP: 8 A3 machines reserved, 8 in use: nothing unused, no finding.
    assert (held[a3]["total"], held[a3]["used"], held[a3]["unused_usd"]) == (8, 8, 0.0)
    assert ("reserved-capacity-unused", a3) not in findings
    # Azure: an empty A100 reservation of 2: 2 × 730 h × the pay-as-you-go rate.
    assert (held[a100]["total"], held[a100]["used"]) == (2, 0)
    assert held[a100]["unused_usd"] == round(2 * 730 * ND96.on_demand, 2) == 39707.62
    assert findings[("reserved-capacity-unused", a100)]["monthly_savings_usd"] == 39707.62
    # No spot advice to anything on reserved capacity; the on-demand trainers do get it.
    reserved = [r["id"] for r in resources.values() if r["capacity"] == "reserved"]
    kinds = [resources[i]["kind"] for i in reserved]
    assert len(reserved) == 2 + 8 + 6 and kinds.count("reservation") == 6  # GCP: A2 and ahead
    assert not [i for i in reserved if ("spot-for-training", i) in findings]
    assert {i for rule, i in findings if rule == "spot-for-training"} == {r["id"] for r in beside}
    # Without an earlier audit, how long the empty reservation has been empty is unknown.
    assert held[a100]["idle_hours"] is None

    second = scan(tmp_path, SECOND, "--format", "json")
    assert second.exit_code == 1, second.output
    resources, findings = _by_id(json.loads(second.stdout))
    assert resources[a100]["reservation"]["idle_hours"] == 12  # empty in both audits
    assert resources[ODCR]["reservation"]["idle_hours"] == 0  # something on it
    assert resources[BLOCK]["reservation"]["unused_usd"] == round(8 * P5.on_demand, 2)

    shown = CliRunner().invoke(
        main, ["history", "reservations", "--history", str(tmp_path / "audits.db"), "--format",
               "json"]
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    uses = json.loads(shown.stdout)["reservations"]
    runs = {(u["id"], u["generated_at"][:13]): (u["used"], u["total"]) for u in uses}
    for when in (FIRST, SECOND):
        hour = when.isoformat()[:13]
        assert runs[(ODCR, hour)] == (1, 4)
        assert runs[(a3, hour)] == (8, 8)
        assert runs[(a100, hour)] == (0, 2)
    table = CliRunner().invoke(
        main, ["history", "reservations", "--history", str(tmp_path / "audits.db")]
    )
    assert "a100-pair" in table.output and "0/2" in table.output and "25%" in table.output

    markdown = CliRunner().invoke(
        main, ["history", "show", "2", "--history", str(tmp_path / "audits.db"), "--format",
               "markdown"]
    )  # fmt: skip
    section = markdown.output[markdown.output.index("## Reservations") :]
    assert "| 1 / 4 |" in section and "| 8 / 8 |" in section and "| 0 / 2 |" in section
    assert "\\$120,537.60 (3 × 730 h)" in section and "\\$39,707.62 (2 × 730 h)" in section
