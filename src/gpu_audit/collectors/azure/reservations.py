"""Azure capacity reservation groups and the capacity reservations in them, through ARM.

Per subscription: `capacityReservationGroups` (listed), each group with `$expand=instanceView`
(per reservation, `utilizationInfo.virtualMachinesAllocated`: the VMs and scale-set instances
on it), and its `capacityReservations` (`sku.name` the VM size, `sku.capacity` the instances
reserved, `zones`, `provisioningState`, `timeCreated`). A VM names its group in
`capacityReservation.capacityReservationGroup.id`, so the group's instance view says which
reservation it holds. A capacity reservation bills at the size's pay-as-you-go rate whether used
or not and states no rate of its own: the on-demand rate prices it. Resource Graph lists no
instance views, so both inventory sources read reservations here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog import instance_spec
from gpu_audit.collectors.azure.connect import Arm
from gpu_audit.collectors.azure.mapping import arm_id, get, is_gpu_size, resource_group_of
from gpu_audit.core.resource import Capacity, Gpu, Kind, Reservation, Resource, State

_STATES = {"succeeded": State.RUNNING, "creating": State.PENDING, "updating": State.RUNNING}


def subscription_reservations(arm: Arm, subscription: str) -> list[Resource]:
    """The GPU capacity reservations of one subscription (raises the SDK's error on failure)."""
    compute = arm.compute(subscription)
    found: list[Resource] = []
    for group in compute.capacity_reservation_groups.list_by_subscription():
        gid = str(group.id or "")
        rg, name = resource_group_of(gid), gid.rstrip("/").rsplit("/", 1)[-1]
        viewed = compute.capacity_reservation_groups.get(rg, name, expand="instanceView")
        usage = _usage(viewed.as_dict())
        for held in compute.capacity_reservations.list_by_capacity_reservation_group(rg, name):
            row = held.as_dict()
            resource = reservation_resource(row, usage.get(str(row.get("name", "")).lower()))
            if resource is not None:
                found.append(resource)
    return found


def _usage(group: Mapping[str, Any]) -> dict[str, list[str] | None]:
    """Per reservation name in the group's instance view: the instances allocated on it."""
    views = get(group, "properties", "instanceView", "capacityReservations") or []
    out: dict[str, list[str] | None] = {}
    for view in views if isinstance(views, list) else []:
        if not isinstance(view, Mapping):
            continue
        allocated = get(view, "utilizationInfo", "virtualMachinesAllocated")
        ids = None
        if isinstance(allocated, list):
            ids = [_instance(str(v.get("id"))) for v in allocated if isinstance(v, Mapping)]
        out[str(view.get("name") or "").lower()] = ids
    return out


def _instance(resource_id: str) -> str:
    """A VM's id, or a scale-set instance's scale set (the collector lists scale sets whole)."""
    lowered = resource_id.lower()
    parts = lowered.strip("/").split("/")
    if "virtualmachinescalesets" in parts:
        at = parts.index("virtualmachinescalesets")
        return "/" + "/".join(parts[: at + 2])
    return lowered


def reservation_resource(row: Mapping[str, Any], allocated: list[str] | None) -> Resource | None:
    """A capacity reservation of a GPU size as a resource of its own; None otherwise."""
    size = get(row, "sku", "name")
    state = _STATES.get(str(get(row, "properties", "provisioningState") or "").lower())
    if not isinstance(size, str) or not is_gpu_size(size) or state is None:
        return None
    total = get(row, "sku", "capacity")
    total = total if isinstance(total, int) and total >= 0 else None
    spec = instance_spec(size)
    rid = arm_id(row)
    zones = [str(z) for z in row.get("zones") or [] if isinstance(z, str | int)]
    used = None if allocated is None else len(allocated)
    return Resource(
        kind=Kind.RESERVATION,
        provider="azure",
        service="vm",
        id=rid,
        name=str(row.get("name") or rid.rsplit("/", 1)[-1]),
        account=rid.strip("/").split("/")[1] if rid.count("/") > 2 else None,
        region=str(row.get("location") or "").lower() or None,
        zone=",".join(zones) or None,
        instance_type=size,
        state=state,
        capacity=Capacity.RESERVED,
        gpu=Gpu(spec.gpu_model, spec.gpu_count, spec.gpu_memory_gib) if spec else Gpu(),
        tags={str(k): str(v) for k, v in (row.get("tags") or {}).items()},
        reservation=Reservation(
            type="capacity-reservation",
            id=rid,
            match="targeted",  # a VM lands on one only by naming its group
            total=total,
            used=used,
            unused=None if total is None or used is None else max(0, total - used),
            starts_at=_time(get(row, "properties", "timeCreated")),
            instances=tuple(sorted(allocated)) if allocated else None,
        ),
    )


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
