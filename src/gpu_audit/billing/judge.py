"""Billed GPU usage as resources (`kind: billed`), judged by the same engine and pack as a scan.

Each resource is one billed thing over the period: an instance, a managed job or endpoint, a GCP
instance's GPUs (by its resource id), or a reservation or commitment's unused capacity. Its
`billing.*` fields carry the hours and dollars as billed; its tags are the latest the bill shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.summary import USD, cents, gpu_label
from gpu_audit.catalog.gpus import canonical_gpu
from gpu_audit.core.resource import (
    Billing,
    Capacity,
    Gpu,
    Kind,
    Price,
    Resource,
    SourceRef,
    Workload,
)

SOURCE = "billing export"
# The usage type's kind (AWS) → what the capacity ran: SageMaker training, endpoints, notebooks.
_WORKLOADS = {
    "Train": Workload.TRAINING,
    "Host": Workload.INFERENCE,
    "Notebk": Workload.NOTEBOOK,
    "Studio": Workload.NOTEBOOK,
}
_TAGGED = frozenset(w.value for w in Workload if w is not Workload.UNKNOWN)
_SERVICES = {
    "amazon elastic compute cloud": "ec2",
    "amazon sagemaker": "sagemaker",
    "compute engine": "gce",
    "vertex ai": "vertex",
    "virtual machines": "azure-vm",
    "azure machine learning": "azureml",
}
_CAPACITY = {
    "spot": Capacity.SPOT,
    "on-demand": Capacity.ON_DEMAND,
    "committed": Capacity.RESERVED,
    "reserved": Capacity.RESERVED,
}


def resource_key(group: BilledGroup) -> tuple[str, str]:
    """The (cloud, id) a billed group is judged and remembered under: its resource id (an Azure ARM
    id lower-cased), its reservation, or an `unused:`/`unattributed:` id built from account, region
    and GPU."""
    if group.kind == "unused":  # the reservation or commitment itself, where the bill names it
        if group.reservation_id:
            return group.cloud, group.reservation_id
        where = f"{group.account or '-'}/{group.region or '-'}/{gpu_label(group) or 'GPU'}"
        return group.cloud, f"unused:{where}"
    if group.resource_id:  # an ARM id is case-insensitive, and exports write it both ways
        rid = group.resource_id.lower() if group.cloud == "azure" else group.resource_id
        return group.cloud, rid
    label = gpu_label(group) or group.service or "gpu"
    return group.cloud, f"unattributed:{group.account or '-'}/{group.region or '-'}/{label}"


def billed_resources(groups: Iterable[BilledGroup], period: Period) -> list[Resource]:
    """One resource per billed thing (USD rows in the period; other currencies are reported,
    not judged in dollars)."""
    merged: dict[tuple[str, str], list[BilledGroup]] = {}
    moved: dict[tuple[str, str], Decimal] = {}  # the resource's data transfer, beside it
    ends = [period.start]
    for group in groups:
        if not group.in_period or group.currency != USD:
            continue
        if group.kind == "transfer":
            key = resource_key(group)
            moved[key] = moved.get(key, Decimal(0)) + group.effective
        elif group.kind not in ("other", "team-transfer"):  # a team's transfer: no resource
            merged.setdefault(resource_key(group), []).append(group)
            ends.extend([group.last_charge] if group.last_charge else [])
    # The bill's last charge, not the period's end: a quarter read in its second month has
    # nothing after today, and what still runs must not look stopped.
    data_end = min(max(ends), period.end)
    return [
        _resource(key, parts, period, data_end, moved.get(key))
        for key, parts in sorted(merged.items())
    ]


def _resource(
    key: tuple[str, str],
    parts: Sequence[BilledGroup],
    period: Period,
    data_end: datetime,
    transfer: Decimal | None = None,
) -> Resource:
    cloud, rid = key
    usage = [g for g in parts if g.kind in ("gpu", "unused")] or list(parts)
    main = max(usage, key=lambda g: (g.quantity, g.last_charge or period.start))
    latest = max(parts, key=lambda g: g.last_charge or period.start)
    effective = sum((g.effective for g in parts), Decimal(0))
    billed = sum((g.billed for g in parts), Decimal(0))
    gpu_hours = sum((g.gpu_hours for g in parts), Decimal(0))
    hours = sum((g.quantity for g in parts if g.kind in ("gpu", "unused")), Decimal(0))
    unused = max(effective, Decimal(0)) if main.kind == "unused" else Decimal(0)
    firsts = [g.first_charge for g in parts if g.first_charge]
    lasts = [g.last_charge for g in parts if g.last_charge]
    last = max(lasts) if lasts else None
    model = main.gpu_model or (canonical_gpu(main.gcp_gpu) if main.gcp_gpu else None)
    per_instance = main.gpus if main.gpus else None
    rate = float(cents(effective) / hours) if hours else None
    workload = _WORKLOADS.get(main.usage_kind or "", Workload.UNKNOWN)
    tagged = latest.tags.get("workload", "").strip().lower()
    if workload is Workload.UNKNOWN and tagged in _TAGGED:
        workload = Workload(tagged)
    return Resource(
        kind=Kind.BILLED,
        provider=cloud,
        id=rid,
        service=_SERVICES.get((main.service or "").lower()),
        account=main.account,
        region=main.region,
        instance_type=main.instance_type,
        capacity=_CAPACITY.get(main.capacity or "", Capacity.UNKNOWN),
        gpu=Gpu(model=model, count=per_instance),
        tags=dict(latest.tags),
        workload=workload,
        billing=Billing(
            period=period.name,
            hours=float(round(hours, 2)),
            gpu_hours=float(round(gpu_hours, 2)),
            effective_usd=float(cents(effective)),
            billed_usd=float(cents(billed)),
            unused_usd=float(cents(unused)),
            first_charge=min(firsts) if firsts else None,
            last_charge=last,
            ended=None if last is None else last < data_end - timedelta(days=1),
            transfer_usd=float(cents(transfer or Decimal(0))),
            transfer_share=(
                float(round(max(transfer or Decimal(0), Decimal(0)) / effective, 4))
                if effective > 0
                else None
            ),
        ),
        price=Price(
            hourly_usd=rate,
            as_of=period.name,
            source=f"{SOURCE} ({gpu_label(main) or 'GPU'}, effective cost ÷ hours)",
        ),
        source=SourceRef(note=f"billed {period.name}: {main.kind} rows of {cloud}"),
    )
