"""EC2 capacity reservations and Capacity Blocks in a live scan, against moto on loopback behind
the proxy that answers `DescribeCapacityReservations` in EC2's XML (tests/ec2_capacity.py)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from reservation_fixtures import aws_reservations
from tests.conftest import ROOT

from gpu_audit.catalog import price
from gpu_audit.cli.main import main
from gpu_audit.collectors.aws.collector import AwsCollector
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.results import CoverageGap

NOW = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
RATE = price("p5.48xlarge", "us-east-1", "H100", 8, ())


def scan_json(tmp_path: Path, *extra: str) -> dict[str, Any]:
    config = tmp_path / ".gpu-audit.yaml"
    config.write_text("aws:\n  max_attempts: 1\n  services: [ec2]\n")
    args = ["scan", "--provider", "aws", "--region", "us-east-1", "--region", "us-west-2"]
    args += ["--config", str(config), "--now", NOW.isoformat(), "--format", "json", *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output  # us-west-2's reservations: a gap
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_reservations_with_their_instances_and_dollars(
    aws_fleet: Any, ec2_capacity: Any, tmp_path: Path
) -> None:
    ids = aws_reservations(aws_fleet, ec2_capacity, NOW)
    ec2_capacity.denied.add("us-west-2")
    aws_fleet.launch("us-west-2", "g5.xlarge")
    report = scan_json(tmp_path)

    resources = {r["id"]: r for r in report["resources"]}
    odcr, block = resources["cr-0odcr000000000001"], resources["cr-0block00000000001"]
    assert "cr-0small0000000001" not in resources and "cr-0gone00000000001" not in resources
    assert odcr["kind"] == block["kind"] == "reservation"
    assert (odcr["gpu"]["model"], odcr["gpu"]["count"]) == ("H100", 8)
    held = odcr["reservation"]
    assert (held["type"], held["match"], held["platform"]) == (
        "capacity-reservation",
        "open",
        "Linux/UNIX",
    )
    assert (held["total"], held["used"], held["unused"]) == (4, 1, 3)
    assert held["instances"] == [ids["odcr"]] and held["ends_at"] is None
    assert odcr["tags"] == {"Name": "p5-pool", "team": "llm"}
    # By hand: 3 unused × 730 hours (no end: the month) × the on-demand rate, named so.
    assert RATE is not None and RATE.on_demand is not None
    assert held["hours_left"] == 730
    assert held["unused_usd"] == round(3 * 730 * RATE.on_demand, 2)
    assert odcr["price"]["hourly_usd"] == RATE.on_demand
    assert odcr["price"]["source"].startswith("on-demand rate (the reservation's API")
    blocked = block["reservation"]
    assert (blocked["type"], blocked["total"], blocked["used"]) == ("capacity-block", 2, 1)
    assert blocked["ends_at"] == "2026-11-21T02:00:00Z"
    assert blocked["hours_left"] == 20
    assert blocked["unused_usd"] == round(1 * 20 * RATE.on_demand, 2)
    assert block["workload"] == "training"  # the instance on it trains

    # The instances on reserved capacity are reserved, at the reservation's rate.
    for instance in (ids["odcr"], ids["block"]):
        assert resources[instance]["capacity"] == "reserved"
    assert resources[ids["odcr"]]["reservation"]["id"] == "cr-0odcr000000000001"
    beside = ids["beside"].split(",")
    assert [resources[i]["reservation"]["covering"] for i in beside] == ["cr-0odcr000000000001"] * 2

    findings: dict[tuple[str, str], dict[str, Any]] = {
        (f["rule_id"], report["resources"][f["resource"]]["id"]): f for f in report["findings"]
    }
    unused = findings[("reserved-capacity-unused", "cr-0odcr000000000001")]
    assert unused["monthly_savings_usd"] == held["unused_usd"]
    assert findings[("reserved-capacity-unused", "cr-0block00000000001")][
        "monthly_savings_usd"
    ] == round(20 * RATE.on_demand, 2)
    assert ("capacity-block-ending", "cr-0block00000000001") in findings
    assert ("capacity-block-ending", "cr-0odcr000000000001") not in findings
    for instance in beside:
        assert ("use-open-reservation", instance) in findings
        assert ("spot-for-training", instance) in findings  # on-demand training: spot advice
    # No spot advice for the training instance on the Capacity Block.
    assert ("spot-for-training", ids["block"]) not in findings
    assert not any(rule == "spot-for-training" and r.startswith("cr-") for rule, r in findings)

    # Paged (two per page), and us-west-2's 403 is a gap naming the call; its instance stands.
    assert [token for region, token in ec2_capacity.pages if region == "us-east-1"] == [
        None,
        "2",
    ]
    (gap,) = report["coverage_gaps"]
    assert (gap["region"], gap["error"]) == ("us-west-2", "UnauthorizedOperation")
    assert gap["message"].startswith("capacity reservations: ")
    assert any(r["region"] == "us-west-2" and r["kind"] == "instance" for r in resources.values())


def _documented_actions() -> set[str]:
    doc = (ROOT / "docs" / "permissions.md").read_text()
    section = doc[doc.index("## AWS") : doc.index('"Sid": "GpuAuditBucketRegions"')]
    listed = section[section.index('"Action": [') :]
    return set(re.findall(r'"([a-z0-9]+:[A-Za-z]+)"', listed))


def test_every_call_is_a_documented_read(aws_fleet: Any, ec2_capacity: Any) -> None:
    aws_reservations(aws_fleet, ec2_capacity, NOW)
    calls: set[str] = set()

    def record(model: Any, **_: Any) -> None:
        calls.add(f"{model.service_model.signing_name}:{model.name}")

    config = AwsSettings(regions=("us-east-1",), max_attempts=1, services=("ec2",))
    items = list(AwsCollector(config, event_hooks=(("before-call", record),)).collect())

    assert not [i for i in items if isinstance(i, CoverageGap)]
    assert "ec2:DescribeCapacityReservations" in calls
    actions = {c.replace("monitoring:", "cloudwatch:") for c in calls}
    assert actions <= _documented_actions() | {"sts:GetCallerIdentity"}


def test_an_answer_that_is_not_xml_is_one_line_gap(aws_fleet: Any, ec2_capacity: Any) -> None:
    (instance,) = aws_fleet.launch("us-east-1", "g5.xlarge")
    ec2_capacity.unimplemented.add("us-east-1")  # moto's own answer to the call

    config = AwsSettings(regions=("us-east-1",), max_attempts=1, services=("ec2",))
    items = list(AwsCollector(config).collect())

    (gap,) = [i for i in items if isinstance(i, CoverageGap)]
    assert (gap.region, gap.error) == ("us-east-1", "ResponseParserError")
    assert gap.message.startswith("capacity reservations: Unable to parse response")
    assert "\n" not in gap.message and "doctype" not in gap.message
    assert [i.id for i in items if not isinstance(i, CoverageGap)] == [instance]
