"""Compute Engine reservations with GPUs: `reservations.aggregatedList` and, for capacity booked
for a window still ahead (calendar mode), `futureReservations.aggregatedList`.

A reservation states its machine type, GPUs (`guestAccelerators`), `count` and `inUseCount`,
whether instances must name it (`specificReservationRequired`: targeted, else open) and, when
set, `deleteAtTime`. A future reservation is listed only before its window opens: from then on
its capacity is an ordinary (auto-created) reservation, listed by the first call. Neither states
a rate of its own: the on-demand rate prices them (a commitment's discount is the bill's).
An instance names the reservation it consumes in `reservationAffinity` (`SPECIFIC_RESERVATION`,
key `compute.googleapis.com/reservation-name`); with `ANY_RESERVATION` it does not say which.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpu_audit.collectors.gcp.instances import gpu_of, last_segment
from gpu_audit.core.resource import Capacity, Kind, Reservation, Resource, State

_STATES = {"READY": State.RUNNING, "CREATING": State.PENDING, "UPDATING": State.RUNNING}
_NAME_KEY = "compute.googleapis.com/reservation-name"


def reservation_resource(project: str, raw: Any) -> Resource | None:
    """A reservation with GPUs as a resource of its own; None without GPUs or capacity."""
    state = _STATES.get(raw.status)
    if state is None or "specific_reservation" not in raw:
        return None
    held = raw.specific_reservation
    properties = held.instance_properties
    machine = last_segment(properties.machine_type) or None
    gpu = gpu_of(properties, machine)
    if gpu.model is None:
        return None
    zone = last_segment(raw.zone)
    total = int(held.count)
    used = int(held.in_use_count)
    return Resource(
        kind=Kind.RESERVATION,
        provider="gcp",
        service="gce",
        id=f"projects/{project}/zones/{zone}/reservations/{raw.name}",
        name=raw.name,
        account=project,
        region=zone.rsplit("-", 1)[0] if zone else None,
        zone=zone or None,
        instance_type=machine,
        state=state,
        capacity=Capacity.RESERVED,
        gpu=gpu,
        reservation=Reservation(
            type="capacity-reservation",
            id=f"projects/{project}/zones/{zone}/reservations/{raw.name}",
            match="targeted" if raw.specific_reservation_required else "open",
            total=total,
            used=used,
            unused=max(0, total - used),
            starts_at=_time(raw.creation_timestamp),
            ends_at=_time(raw.delete_at_time) if "delete_at_time" in raw else None,
        ),
    )


def future_resource(project: str, raw: Any, now: datetime) -> Resource | None:
    """A future reservation whose window is still ahead; None once it has begun."""
    window = raw.time_window
    starts = _time(window.start_time)
    if starts is None or starts <= now or "specific_sku_properties" not in raw:
        return None
    sku = raw.specific_sku_properties
    machine = last_segment(sku.instance_properties.machine_type) or None
    gpu = gpu_of(sku.instance_properties, machine)
    if gpu.model is None:
        return None
    ends = _time(window.end_time) if "end_time" in window else None
    if ends is None and "duration" in window:
        seconds = window.duration.seconds
        ends = datetime.fromtimestamp(starts.timestamp() + int(seconds), UTC) if seconds else None
    zone = last_segment(raw.zone)
    ident = f"projects/{project}/zones/{zone}/futureReservations/{raw.name}"
    return Resource(
        kind=Kind.RESERVATION,
        provider="gcp",
        service="gce",
        id=ident,
        name=raw.name,
        account=project,
        region=zone.rsplit("-", 1)[0] if zone else None,
        zone=zone or None,
        instance_type=machine,
        state=State.PENDING,
        capacity=Capacity.RESERVED,
        gpu=gpu,
        reservation=Reservation(
            type="future-reservation",
            id=ident,
            match="targeted" if raw.specific_reservation_required else "open",
            total=int(sku.total_count),
            starts_at=starts,
            ends_at=ends,
        ),
    )


def affinity_of(instance: Any) -> str | None:
    """`open` for an instance that consumes any matching reservation (`ANY_RESERVATION`, the
    default), `none` for `NO_RESERVATION`; None when it names one (see `reserved_by`)."""
    kind = "ANY_RESERVATION"
    if "reservation_affinity" in instance:
        kind = instance.reservation_affinity.consume_reservation_type or kind
    return {"ANY_RESERVATION": "open", "NO_RESERVATION": "none"}.get(kind)


def reserved_by(project: str, zone: str, instance: Any) -> str | None:
    """The reservation an instance names (`SPECIFIC_RESERVATION`), as the reservation's id."""
    if "reservation_affinity" not in instance:
        return None
    affinity = instance.reservation_affinity
    if affinity.consume_reservation_type != "SPECIFIC_RESERVATION" or affinity.key != _NAME_KEY:
        return None
    values = list(affinity.values)
    if not values:
        return None
    name = values[0]
    if "/" in name:  # a shared reservation: projects/OWNER/reservations/NAME
        parts = name.strip("/").split("/")
        owner = parts[1] if len(parts) >= 4 and parts[0] == "projects" else project
        return f"projects/{owner}/zones/{zone}/reservations/{parts[-1]}"
    return f"projects/{project}/zones/{zone}/reservations/{name}"


def _time(stamp: str) -> datetime | None:
    if not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
