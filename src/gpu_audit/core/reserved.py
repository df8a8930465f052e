"""Capacity bought ahead, joined to what runs on it: each reservation with its instances, each
instance on a reservation priced at it, and the dollars its unused instances cost.

Runs after enrichment (prices known) and before the rules, as of the audit's `now`:
- an instance whose `reservation.id` names a scanned reservation, or that a reservation's API
  lists (Azure's `virtualMachinesAllocated`), is on reserved capacity: `capacity` reserved, and
  its hourly price the reservation's;
- a reservation counts the instances found on it where its API states no used count, takes
  their workload (training when any of them trains), and prices its unused instances:
  unused × hours left (to its end, at most the 730 hours a monthly figure spans) × its rate;
- a running on-demand instance of an open reservation's type, zone and platform, in its
  account, while that reservation has unused instances, is one it would have covered
  (`reservation.covering`); each unused instance covers one. An instance that consumes any
  matching reservation without saying which (GCP `ANY_RESERVATION`) may be on it already.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime

from gpu_audit.core.resource import Capacity, Kind, Resource, State, Workload

HOURS_PER_MONTH = 730.0
_ON_DEMAND = "on-demand rate (the reservation's API states no rate of its own)"
_Key = tuple[str, str]  # (provider, reservation id lower-cased: ARM ids ignore case)


def join_reservations(
    resources: Iterable[Resource],
    now: datetime,
    idle_hours: Mapping[_Key, float] | None = None,
) -> tuple[Resource, ...]:
    """The resources with reservations and the instances on them joined, in order;
    `idle_hours` (from the history) says how long each empty reservation has been empty."""
    items = tuple(resources)
    held = {
        _key(r.provider, r.reservation.id or r.id): index
        for index, r in enumerate(items)
        if r.kind is Kind.RESERVATION
    }
    if not held:
        return items
    listed: dict[_Key, _Key] = {
        (items[index].provider, instance.lower()): key
        for key, index in held.items()
        for instance in items[index].reservation.instances or ()
    }
    out = list(items)
    on: dict[_Key, list[Resource]] = {key: [] for key in held}
    for index, resource in enumerate(items):
        if resource.kind is not Kind.INSTANCE:
            continue
        key: _Key = _key(resource.provider, resource.reservation.id or "")
        if key not in held:
            key = listed.get((resource.provider, resource.id.lower())) or ("", "")
        if key in held:
            out[index] = _on_reservation(resource, items[held[key]])
            on[key].append(out[index])
    for key, index in held.items():
        out[index] = _with_use(items[index], on[key], now, (idle_hours or {}).get(key))
    free = {key: out[index].reservation.unused or 0 for key, index in held.items()}
    for index, resource in enumerate(out):
        if resource.reservation.covering is not None:  # derived here: a shard's is recomputed
            resource = out[index] = replace(
                resource, reservation=replace(resource.reservation, covering=None)
            )
        if _on_demand(resource):
            room = _covering(resource, [out[i] for i in held.values()], free)
            if room is not None:
                free[room] -= 1
                out[index] = _covered(resource, out[held[room]])
    return tuple(out)


def _key(provider: str, reservation: str) -> _Key:
    return provider, reservation.lower()


def _on_reservation(instance: Resource, reservation: Resource) -> Resource:
    price = instance.price
    rate = reservation.price.hourly_usd
    monthly = instance.monthly_cost_usd
    one = instance.gpu.count == reservation.gpu.count  # a pool (a scale set) is priced as such
    if rate is not None and rate != price.hourly_usd and one:
        price = replace(price, hourly_usd=rate, source=reservation.price.source)
        if monthly:  # billed this month: at the reservation's rate
            monthly = round(rate * HOURS_PER_MONTH, 2)
    capacity = instance.capacity
    if capacity in (None, Capacity.ON_DEMAND, Capacity.UNKNOWN):
        capacity = Capacity.RESERVED
    marked = replace(instance.reservation, id=reservation.reservation.id or reservation.id)
    return replace(
        instance, capacity=capacity, price=price, monthly_cost_usd=monthly, reservation=marked
    )


def _with_use(
    reservation: Resource, instances: list[Resource], now: datetime, idle: float | None
) -> Resource:
    held = reservation.reservation
    ids = sorted({*(held.instances or ()), *(i.id for i in instances)})
    used = held.used if held.used is not None else len(instances)
    total = held.total
    unused = held.unused
    if unused is None and total is not None:
        unused = max(0, total - used)
    workloads = {i.workload for i in instances} - {Workload.UNKNOWN}
    workload = reservation.workload
    if workload is Workload.UNKNOWN and workloads:
        workload = Workload.TRAINING if Workload.TRAINING in workloads else min(workloads)
    hours = None
    if reservation.state is State.RUNNING:
        hours = HOURS_PER_MONTH
        if held.ends_at is not None:
            left = (held.ends_at - now).total_seconds() / 3600
            hours = round(max(0.0, min(HOURS_PER_MONTH, left)), 2)
    price = reservation.price
    rate = price.hourly_usd
    if (
        rate is not None
        and rate == price.on_demand_hourly_usd
        and _ON_DEMAND not in (price.source or "")
    ):  # the API states no rate: the on-demand one, named so
        price = replace(price, source=f"{_ON_DEMAND}; {price.source or 'catalog'}")
    unused_usd = None
    if hours is not None and unused is not None and rate is not None:
        unused_usd = round(unused * hours * rate, 2)
    if used:
        idle = 0.0
    marked = replace(
        held,
        id=held.id or reservation.id,
        used=used,
        unused=unused,
        instances=tuple(ids) if ids else held.instances,
        hours_left=hours,
        unused_usd=unused_usd,
        idle_hours=idle if idle is not None else held.idle_hours,
    )
    # The instances on it count their own spend; the reservation adds what is paid and unused.
    monthly = reservation.monthly_cost_usd
    if rate is not None and unused is not None:
        monthly = round(unused * rate * HOURS_PER_MONTH, 2) if hours else 0.0
    return replace(
        reservation, workload=workload, price=price, reservation=marked, monthly_cost_usd=monthly
    )


def _on_demand(resource: Resource) -> bool:
    """Running on-demand, on no reservation its API names. One that takes any matching
    reservation without saying which (GCP `ANY_RESERVATION`: `reservation.match` `open`) may be
    on one already, counted in its used count: never said to be beside it."""
    return (
        resource.kind is Kind.INSTANCE
        and resource.capacity is Capacity.ON_DEMAND
        and resource.state is State.RUNNING
        and resource.reservation.id is None
        and resource.reservation.match != "open"
    )


def _covering(
    instance: Resource, reservations: list[Resource], free: dict[_Key, int]
) -> _Key | None:
    for reservation in reservations:
        key = _key(reservation.provider, reservation.reservation.id or reservation.id)
        held = reservation.reservation
        if (
            free[key] > 0
            and held.match == "open"
            and reservation.state is State.RUNNING
            and reservation.provider == instance.provider
            and reservation.account == instance.account
            and reservation.instance_type == instance.instance_type
            and reservation.zone == instance.zone
            and _same_platform(held.platform, instance.reservation.platform)
        ):
            return key
    return None


def _same_platform(reserved: str | None, running: str | None) -> bool:
    """Unstated on either side matches (GCP and Azure state none)."""
    return reserved is None or running is None or reserved == running


def _covered(instance: Resource, reservation: Resource) -> Resource:
    covering = reservation.reservation.id or reservation.id
    return replace(instance, reservation=replace(instance.reservation, covering=covering))
