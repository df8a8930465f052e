"""EC2 capacity bought ahead: On-Demand Capacity Reservations and Capacity Blocks for ML.

`DescribeCapacityReservations` lists both (`ReservationType` `default` or `capacity-block`) with
their instance type, zone, platform, match criteria (`open` or `targeted`), total and available
instance counts, and start and end dates. Only GPU instance types are kept, and only
reservations that hold or will hold capacity (active, scheduled, pending); expired, cancelled
and failed ones cost nothing more. The API states no hourly rate (both bill at the on-demand
rate; a Capacity Block's fee is paid up front), so the catalog's on-demand rate prices them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpu_audit.collectors.aws.lookups import InstanceTypes
from gpu_audit.core.resource import Capacity, Gpu, Kind, Reservation, Resource, State

PROVIDER = "aws"
_STATES = {
    "active": State.RUNNING,
    "scheduled": State.PENDING,
    "pending": State.PENDING,
    "payment-pending": State.PENDING,
    "assessing": State.PENDING,
    "delayed": State.PENDING,
}
_TYPES = {"capacity-block": "capacity-block", "default": "capacity-reservation"}


def read_reservations(ec2: Any, types: InstanceTypes, account: str, region: str) -> list[Resource]:
    """The region's GPU reservations, every page of them."""
    pages = ec2.get_paginator("describe_capacity_reservations").paginate(
        PaginationConfig={"PageSize": 1000}
    )
    raw = [r for page in pages for r in page.get("CapacityReservations", [])]
    kept = [r for r in raw if r.get("State") in _STATES and r.get("InstanceType")]
    specs = types.resolve(ec2, {r["InstanceType"] for r in kept})
    found = []
    for each in kept:
        gpu = specs[each["InstanceType"]].gpu
        if gpu is not None:
            found.append(reservation_resource(each, gpu, account, region))
    return found


def reservation_resource(raw: dict[str, Any], gpu: Gpu, account: str, region: str) -> Resource:
    """One reservation as a resource of its own (kind `reservation`)."""
    tags = {t["Key"]: t.get("Value", "") for t in raw.get("Tags", []) if "Key" in t}
    total = _count(raw.get("TotalInstanceCount"))
    available = _count(raw.get("AvailableInstanceCount"))
    used = None if total is None or available is None else max(0, total - available)
    block = raw.get("ReservationType") == "capacity-block"
    ends = raw.get("EndDate") if block or raw.get("EndDateType") == "limited" else None
    return Resource(
        kind=Kind.RESERVATION,
        provider=PROVIDER,
        service="ec2",
        id=raw["CapacityReservationId"],
        name=tags.get("Name"),
        account=raw.get("OwnerId") or account,
        region=region,
        zone=raw.get("AvailabilityZone"),
        instance_type=raw["InstanceType"],
        state=_STATES[raw["State"]],
        capacity=Capacity.RESERVED,
        gpu=gpu,
        tags=tags,
        reservation=Reservation(
            type=_TYPES.get(raw.get("ReservationType") or "default", "capacity-reservation"),
            id=raw["CapacityReservationId"],
            match=raw.get("InstanceMatchCriteria"),
            platform=raw.get("InstancePlatform"),
            total=total,
            used=used,
            unused=available if total is not None else None,
            starts_at=_utc(raw.get("StartDate")),
            ends_at=_utc(ends),
        ),
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


def _utc(value: Any) -> datetime | None:
    return value.astimezone(UTC) if isinstance(value, datetime) else None
