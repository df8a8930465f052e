"""Capacity bought ahead judged from saved inventories (no cloud): the join of reservations and
the instances on them, the dollars worked out by hand, the idle window from the history, the
Markdown section; values from the file are escaped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from gpu_audit.catalog import price
from gpu_audit.cli.main import main

P4D = price("p4d.24xlarge", "us-east-1", "A100-40GB", 8, ())


def inventory(path: Path, captured: str, used: int, on_it: bool) -> Path:
    resources: list[dict[str, Any]] = [
        {
            "kind": "reservation",
            "provider": "aws",
            "id": "cr-0abc",
            "name": "pool | *bold* <b>",
            "account": "111122223333",
            "region": "us-east-1",
            "zone": "us-east-1a",
            "instance_type": "p4d.24xlarge",
            "state": "running",
            "capacity": "reserved",
            "reservation": {
                "type": "capacity-reservation",
                "match": "open",
                "platform": "Linux/UNIX",
                "total": 3,
                "used": used,
                "ends_at": "2026-11-25T06:00:00Z",
            },
        },
        {
            "provider": "aws",
            "id": "i-0beside",
            "account": "111122223333",
            "region": "us-east-1",
            "zone": "us-east-1a",
            "instance_type": "p4d.24xlarge",
            "state": "running",
            "capacity": "on-demand",
            "workload": "training",
            "reservation": {"platform": "Linux/UNIX"},
        },
        {
            "provider": "aws",
            "id": "i-0otherzone",
            "account": "111122223333",
            "region": "us-east-1",
            "zone": "us-east-1b",
            "instance_type": "p4d.24xlarge",
            "state": "running",
            "capacity": "on-demand",
        },
    ]
    if on_it:
        resources.append(
            {
                "provider": "aws",
                "id": "i-0on",
                "account": "111122223333",
                "region": "us-east-1",
                "zone": "us-east-1a",
                "instance_type": "p4d.24xlarge",
                "state": "running",
                "capacity": "on-demand",
                "workload": "training",
                "reservation": {"id": "cr-0abc"},
            }
        )
    path.write_text(yaml.safe_dump({"version": 1, "captured_at": captured, "resources": resources}))
    return path


def scan(tmp_path: Path, source: Path, *extra: str) -> Any:
    args = ["scan", "--inventory", str(source), "--history", str(tmp_path / "h.db"), *extra]
    return CliRunner().invoke(main, args)


def test_the_join_the_dollars_and_the_idle_window(tmp_path: Path) -> None:
    assert P4D is not None and P4D.on_demand
    first = inventory(tmp_path / "a.yaml", "2026-11-10T06:00:00Z", used=1, on_it=True)
    report = json.loads(scan(tmp_path, first, "--format", "json").stdout)
    resources = {r["id"]: r for r in report["resources"]}
    held = resources["cr-0abc"]["reservation"]
    # 2 unused × the 360 hours to its end (under a month) × the on-demand rate.
    assert (held["unused"], held["hours_left"]) == (2, 360)
    assert held["unused_usd"] == round(2 * 360 * P4D.on_demand, 2)
    assert held["instances"] == ["i-0on"] and held["idle_hours"] == 0
    assert resources["i-0on"]["capacity"] == "reserved"
    assert resources["i-0beside"]["reservation"]["covering"] == "cr-0abc"
    assert resources["i-0otherzone"]["reservation"]["covering"] is None  # another zone
    rules = {(f["rule_id"], report["resources"][f["resource"]]["id"]) for f in report["findings"]}
    assert ("spot-for-training", "i-0on") not in rules
    assert {
        ("spot-for-training", "i-0beside"),
        ("use-open-reservation", "i-0beside"),
    } <= rules

    # Empty since the second audit; the third, 3 days later, knows it has been empty 3 days,
    # the fourth (8 days after the second) that it has been for more than the 7-day window.
    for captured in ("2026-11-12T06:00:00Z", "2026-11-15T06:00:00Z"):
        empty = inventory(tmp_path / "b.yaml", captured, used=0, on_it=False)
        report = json.loads(scan(tmp_path, empty, "--format", "json").stdout)
    resources = {r["id"]: r for r in report["resources"]}
    assert resources["cr-0abc"]["reservation"]["idle_hours"] == 72
    last = inventory(tmp_path / "c.yaml", "2026-11-20T06:00:00Z", used=0, on_it=False)
    markdown = scan(tmp_path, last, "--format", "markdown").stdout
    section = markdown[markdown.index("## Reservations") :]
    # 3 unused × the 120 hours left × the rate; the reservation's name is escaped.
    amount = round(3 * 120 * P4D.on_demand, 2)  # to the cent, as every amount is written
    assert f"\\${amount:,.2f} (3 × 120 h)" in section and "| 0 / 3 |" in section
    assert "pool \\| \\*bold\\* &lt;b&gt;" in section
    assert "reservation-idle" in markdown

    table = CliRunner().invoke(
        main, ["history", "reservations", "--history", str(tmp_path / "h.db")]
    )
    assert table.exit_code == 0, table.output
    rows = [line.split() for line in table.output.splitlines()[2:] if line.strip()]
    assert [row[-3:-1] for row in rows] == [
        ["1/3", "33%"],
        ["0/3", "0%"],
        ["0/3", "0%"],
        ["0/3", "0%"],
    ]


CAPACITY_BLOCK_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: pretrain-on-block
spec:
  activeDeadlineSeconds: 72000
  template:
    spec:
      nodeSelector:
        eks.amazonaws.com/capacityType: CAPACITY_BLOCK
        node.kubernetes.io/instance-type: p5.48xlarge
      containers:
        - name: train
          image: example.com/train:3
          command: ["torchrun", "--nproc_per_node=8", "train.py", "--save_steps", "500"]
          resources:
            limits:
              nvidia.com/gpu: 8
      restartPolicy: Never
"""


def test_a_job_on_a_capacity_block_is_reserved_not_told_to_use_spot(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(CAPACITY_BLOCK_JOB)
    result = CliRunner().invoke(main, ["check", str(job), "--format", "json", "--fail-on", "none"])
    report = json.loads(result.stdout)
    (resource,) = report["resources"]
    assert (resource["capacity"], resource["workload"]) == ("reserved", "training")
    assert "spot-for-training" not in {f["rule_id"] for f in report["findings"]}
    checked = {n["rule_id"] for n in report["not_evaluated"]}
    assert "spot-for-training" not in checked  # judged, and it passes


def test_a_report_with_reservations_validates_against_the_v3_schema(tmp_path: Path) -> None:
    import jsonschema

    from tests.report.test_json_schema import schema

    fleet = Path(__file__).resolve().parents[1] / "fixtures" / "inventory" / "reservations.yaml"
    result = CliRunner().invoke(main, ["scan", "--inventory", str(fleet), "--format", "json"])
    document = json.loads(result.stdout)
    validator = jsonschema.Draft202012Validator(
        schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(document), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    kinds = [r["kind"] for r in document["resources"]]
    assert kinds.count("reservation") == 4
    block = next(r for r in document["resources"] if r["id"] == "cr-0b10c4aaaaaaaaaaa")
    assert block["reservation"]["ends_at"] == "2026-11-21T02:00:00Z"
    assert block["reservation"]["instances"] == ["i-0a1b2c3d4e5f60010"]


def test_an_instance_that_takes_any_reservation_is_never_said_to_be_beside_one() -> None:
    from datetime import UTC, datetime

    from gpu_audit.core.reserved import join_reservations
    from gpu_audit.core.resource import Capacity, Kind, Reservation, Resource, State

    def vm(name: str, match: str | None) -> Resource:
        return Resource(
            kind=Kind.INSTANCE, provider="gcp", id=name, account="p", zone="us-central1-b",
            instance_type="a2-highgpu-1g", state=State.RUNNING, capacity=Capacity.ON_DEMAND,
            reservation=Reservation(match=match),
        )  # fmt: skip

    spare = Resource(
        kind=Kind.RESERVATION, provider="gcp", id="projects/p/zones/us-central1-b/reservations/r",
        account="p", zone="us-central1-b", instance_type="a2-highgpu-1g", state=State.RUNNING,
        capacity=Capacity.RESERVED,
        reservation=Reservation(match="open", total=3, used=1, unused=2),
    )  # fmt: skip
    joined = join_reservations(
        [spare, vm("any", "open"), vm("none", "none"), vm("unsaid", None)],
        datetime(2026, 11, 20, tzinfo=UTC),
    )
    covering = {r.id: r.reservation.covering for r in joined if r.kind is Kind.INSTANCE}
    # GCP's ANY_RESERVATION VM may be the one in use; the other two each take an unused one.
    assert covering == {"any": None, "none": spare.id, "unsaid": spare.id}
