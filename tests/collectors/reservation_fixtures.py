"""Reservations in the real APIs' shapes for the loopback servers: EC2 `CapacityReservation`
(DescribeCapacityReservations), GCE `compute#reservation` and `compute#futureReservation` (Compute
v1 REST reference), as of 2026-11, with instances that name them."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from gcp_fixtures import instance
from gcp_server import API, FakeGcp

RESERVED = "ml-reserved"
ZONE = "us-central1-a"
NAME_KEY = "compute.googleapis.com/reservation-name"
AWS_ZONE = "us-east-1a"


def gce_reservation(
    project: str,
    zone: str,
    name: str,
    machine_type: str,
    count: int,
    in_use: int,
    *,
    required: bool = True,
    accelerators: tuple[tuple[str, int], ...] = (),
    status: str = "READY",
) -> dict[str, Any]:
    return {
        "kind": "compute#reservation",
        "id": str(abs(hash(name)) % 10**18),
        "creationTimestamp": "2026-10-01T09:00:00.000-07:00",
        "selfLink": f"{API}/projects/{project}/zones/{zone}/reservations/{name}",
        "zone": f"{API}/projects/{project}/zones/{zone}",
        "name": name,
        "specificReservation": {
            "instanceProperties": {
                "machineType": machine_type,
                "guestAccelerators": [
                    {"acceleratorType": kind, "acceleratorCount": n} for kind, n in accelerators
                ],
            },
            "count": str(count),
            "inUseCount": str(in_use),
            "assuredCount": str(count),
        },
        "specificReservationRequired": required,
        "status": status,
        "shareSettings": {"shareType": "LOCAL"},
    }


def gce_future_reservation(
    project: str,
    zone: str,
    name: str,
    machine_type: str,
    count: int,
    start: datetime,
    end: datetime,
) -> dict[str, Any]:
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    return {
        "kind": "compute#futureReservation",
        "id": str(abs(hash(name)) % 10**18),
        "zone": f"{API}/projects/{project}/zones/{zone}",
        "name": name,
        "specificSkuProperties": {
            "instanceProperties": {"machineType": machine_type},
            "totalCount": str(count),
        },
        "timeWindow": {"startTime": start.strftime(stamp), "endTime": end.strftime(stamp)},
        "specificReservationRequired": True,
        "status": {"procurementStatus": "APPROVED"},
    }


def on_reservation(body: dict[str, Any], name: str) -> dict[str, Any]:
    body["reservationAffinity"] = {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": NAME_KEY,
        "values": [name],
    }
    return body


def reserved_project(fake: FakeGcp, start: datetime, end: datetime) -> list[str]:
    """8 × a3-highgpu-8g reserved and fully used (8 training VMs name it); an A2 reservation
    of 2 with none in use; a CPU reservation (not kept); a future A3 reservation a week ahead.
    Returns the names of the VMs on the A3 reservation."""
    names = [f"pretrain-{n}" for n in range(8)]
    fake.instances[RESERVED] = [
        on_reservation(
            instance(
                RESERVED,
                ZONE,
                name,
                "a3-highgpu-8g",
                id=str(7000 + n),
                labels={"workload": "training"},
            ),
            "a3-pretrain",
        )
        for n, name in enumerate(names)
    ]
    fake.reservations[RESERVED] = [
        gce_reservation(RESERVED, ZONE, "a3-pretrain", "a3-highgpu-8g", 8, 8),
        gce_reservation(
            RESERVED,
            "us-central1-b",
            "a2-spare",
            "a2-highgpu-1g",
            2,
            0,
            required=False,
            accelerators=(("nvidia-tesla-a100", 1),),
        ),
        gce_reservation(RESERVED, ZONE, "cpu-pool", "n2-standard-8", 10, 3),
    ]
    fake.future_reservations[RESERVED] = [
        gce_future_reservation(RESERVED, ZONE, "a3-next-month", "a3-highgpu-8g", 16, start, end)
    ]
    return names


def aws_reservations(fleet: Any, capacity: Any, now: datetime) -> dict[str, str]:
    """4 × p5.48xlarge reserved (open) holding 1; a 2-instance Capacity Block ending in 20 hours
    with 1 training instance on it; 2 on-demand p5 beside them; a non-GPU reservation and an
    expired one, all in us-east-1 (a tests/ec2_capacity.py proxy in front of moto answers)."""
    (on_odcr,) = fleet.launch("us-east-1", "p5.48xlarge", tags={"workload": "inference"})
    (on_block,) = fleet.launch("us-east-1", "p5.48xlarge", tags={"workload": "training"})
    beside = fleet.launch("us-east-1", "p5.48xlarge", count=2, tags={"workload": "training"})
    linux = {"platformDetails": "Linux/UNIX"}
    capacity.instance_fields[on_odcr] = {"capacityReservationId": "cr-0odcr000000000001", **linux}
    capacity.instance_fields[on_block] = {
        "instanceLifecycle": "capacity-block",
        "capacityReservationId": "cr-0block00000000001",
        **linux,
    }
    for one in beside:
        capacity.instance_fields[one] = linux
    common = {"ownerId": "123456789012", "availabilityZone": AWS_ZONE, "tenancy": "default"}
    capacity.reserve(
        "us-east-1",
        capacityReservationId="cr-0small0000000001",
        instanceType="m5.large",  # no GPU: not kept
        instancePlatform="Linux/UNIX",
        totalInstanceCount=10,
        availableInstanceCount=10,
        state="active",
        instanceMatchCriteria="open",
        **common,
    )
    capacity.reserve(
        "us-east-1",
        capacityReservationId="cr-0odcr000000000001",
        instanceType="p5.48xlarge",
        instancePlatform="Linux/UNIX",
        totalInstanceCount=4,
        availableInstanceCount=3,
        state="active",
        startDate=now - timedelta(days=10),
        endDateType="unlimited",
        instanceMatchCriteria="open",
        reservationType="default",
        tagSet={"Name": "p5-pool", "team": "llm"},
        **common,
    )
    capacity.reserve(
        "us-east-1",
        capacityReservationId="cr-0gone00000000001",
        instanceType="p5.48xlarge",
        totalInstanceCount=2,
        availableInstanceCount=2,
        state="expired",
        **common,
    )
    capacity.reserve(
        "us-east-1",
        capacityReservationId="cr-0block00000000001",
        instanceType="p5.48xlarge",
        instancePlatform="Linux/UNIX",
        totalInstanceCount=2,
        availableInstanceCount=1,
        state="active",
        startDate=now - timedelta(days=6, hours=4),
        endDate=now + timedelta(hours=20),
        endDateType="limited",
        instanceMatchCriteria="targeted",
        reservationType="capacity-block",
        **common,
    )
    capacity.page_size = 2  # the server pages: every reservation is on one of three pages
    return {"odcr": on_odcr, "block": on_block, "beside": ",".join(sorted(beside))}
