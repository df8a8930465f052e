"""Resource Graph rows and ARM objects (the same REST shape) read into Resources.

A row is a dict as ARM returns it: `id`, `name`, `type`, `location`, `zones`, `tags`, `sku`,
`properties`. Resource Graph adds `subscriptionId`, lower-cases `type` and puts the power state
in `properties.extended.instanceView.powerState.code`; ARM's `statusOnly=true` listing puts it in
`properties.instanceView.statuses`. Ids are lower-cased: ARM ids are case-insensitive, and the
two sources (and AKS provider ids) spell resource groups differently. A value of a shape ARM never
gives (a count that is text, a list where an object belongs) raises RowProblem, which the collector
turns into a coverage gap naming the row and the key: never another exception, never a silent skip.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog import instance_spec
from gpu_audit.collectors.azure.values import (
    RowProblem,
    listing,
    mapping,
    node_count,
    percent,
    size_name,
)
from gpu_audit.core.resource import (
    Capacity,
    Gpu,
    Kind,
    Reservation,
    Resource,
    SourceRef,
    State,
    Workload,
)
from gpu_audit.core.results import CoverageGap
from gpu_audit.core.yamlguard import printable

VM = "microsoft.compute/virtualmachines"
SCALE_SET = "microsoft.compute/virtualmachinescalesets"
WORKSPACE = "microsoft.machinelearningservices/workspaces"
TYPES = (VM, SCALE_SET, WORKSPACE)

# Power states: deallocating and deallocated VMs hold no hardware and are not billed for it.
POWER = {
    "running": State.RUNNING,
    "starting": State.PENDING,
    "stopping": State.STOPPED,
    "stopped": State.STOPPED,  # still allocated: billed in full
}
RELEASED = frozenset({"deallocating", "deallocated"})
_GPU_SERIES = re.compile(r"(?i)^standard_n")  # the N-series: NC, ND, NG, NV


def get(row: Mapping[str, Any], *path: str) -> Any:  # Any: the Azure SDK's objects, untyped here
    """The value at `path` in nested mappings, None where a key is missing or a step is not a
    mapping."""
    value: Any = row
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def arm_id(row: Mapping[str, Any]) -> str:
    """The row's ARM id, lower-cased (ARM ids are case-insensitive); empty without one."""
    return str(row.get("id") or "").lower()


def subscription_of(resource_id: str) -> str:
    """The subscription id in an ARM id, empty when it names none."""
    parts = resource_id.strip("/").split("/")
    return parts[1] if len(parts) > 1 and parts[0].lower() == "subscriptions" else ""


def resource_group_of(resource_id: str) -> str:
    """The resource group in an ARM id (its spelling kept), empty when it names none."""
    parts = resource_id.strip("/").split("/")
    lowered = [p.lower() for p in parts]
    return parts[lowered.index("resourcegroups") + 1] if "resourcegroups" in lowered else ""


def is_gpu_size(size: str | None) -> bool:
    """True for a VM size the catalog knows or whose name is of a GPU series (NC, ND, NV…)."""
    return bool(size) and (instance_spec(size) is not None or bool(_GPU_SERIES.match(size or "")))


def power_state(row: Mapping[str, Any]) -> str | None:
    """`running`, `stopped`, `deallocated`, …: from Resource Graph's extended view or ARM's."""
    code = get(row, "properties", "extended", "instanceView", "powerState", "code")
    if not code:
        statuses = listing(get(row, "properties", "instanceView", "statuses"), "statuses")
        codes = [s.get("code", "") for s in statuses if isinstance(s, Mapping)]
        code = next((c for c in codes if str(c).startswith("PowerState/")), None)
    return str(code).split("/", 1)[-1].lower() if code else None


def capacity_of(priority: Any) -> Capacity:
    """SPOT for a Spot or low-priority VM (priority `Spot`, `Low`, `LowPriority`), else
    ON_DEMAND."""
    text = str(priority or "regular").lower()
    return (
        Capacity.SPOT if text in ("spot", "low", "lowpriority", "spotplus") else Capacity.ON_DEMAND
    )


def _gpu(size: str | None, nodes: int = 1) -> Gpu:
    spec = instance_spec(size)
    if spec is None:
        return Gpu()
    return Gpu(spec.gpu_model, spec.gpu_count * nodes, spec.gpu_memory_gib)


def _when(text: Any) -> datetime | None:
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    try:
        parsed = parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except OverflowError:  # 9999-12-31T23:59:59-05:00 is past the last UTC time
        return None
    return parsed.replace(microsecond=0)  # Resource Graph truncates them; ARM does not


def _tags(row: Mapping[str, Any]) -> dict[str, str]:
    tags = row.get("tags") or {}
    return {str(k): str(v) for k, v in tags.items()} if isinstance(tags, Mapping) else {}


def _workload(tags: Mapping[str, str], key: str, default: Workload = Workload.UNKNOWN) -> Workload:
    try:
        return Workload((tags.get(key) or "").strip().lower())
    except ValueError:
        return default


def _unknown_size(size: str) -> str:
    return f"size {size} is not in the catalog: GPU model and count unknown"


def _base(row: Mapping[str, Any], service: str, size: str, tag_key: str) -> dict[str, Any]:
    rid = arm_id(row)
    tags = _tags(row)
    zones = [str(z) for z in listing(row.get("zones"), "zones")]
    return {
        "kind": Kind.INSTANCE,
        "provider": "azure",
        "service": service,
        "id": rid,
        "name": str(row.get("name") or rid.rsplit("/", 1)[-1]),
        "account": subscription_of(rid),
        "region": str(row.get("location") or "").lower() or None,
        "zone": ",".join(zones) or None,
        "instance_type": size,
        "tags": tags,
        "workload": _workload(tags, tag_key),
        "launched_at": _when(get(row, "properties", "timeCreated")),
    }


def vm_resource(row: Mapping[str, Any], tag_key: str) -> Resource | None:
    """A GPU VM, or None: a CPU size, or a deallocated VM (no hardware held, nothing billed)."""
    size = size_name(get(row, "properties", "hardwareProfile", "vmSize"), "vmSize")
    power = power_state(row)
    if not is_gpu_size(size) or power in RELEASED:
        return None
    notes = [] if instance_spec(size) else [_unknown_size(str(size))]
    priority = get(row, "properties", "priority")
    if capacity_of(priority) is Capacity.SPOT:
        eviction = get(row, "properties", "evictionPolicy") or "unknown"
        max_price = get(row, "properties", "billingProfile", "maxPrice")
        shown = "-1 (up to on-demand)" if max_price in (-1, -1.0, None) else f"{max_price}"
        notes.append(f"spot: eviction {eviction}, max price {shown}")
    if power == "stopped":
        notes.append("stopped but still allocated: billed in full until deallocated")
    group = reservation_group(get(row, "properties"))
    capacity = capacity_of(priority)
    return Resource(
        **_base(row, "vm", str(size), tag_key),
        state=POWER.get(power or ""),
        capacity=Capacity.RESERVED if group and capacity is Capacity.ON_DEMAND else capacity,
        reservation=Reservation(id=group),
        gpu=_gpu(size),
        source=SourceRef(note="; ".join(notes) or None),
    )


def scale_set_resources(row: Mapping[str, Any], tag_key: str) -> list[Resource]:
    """A Uniform scale set's instances at its size, split by priority where Spot and Regular mix.

    Flexible scale sets are left out: their instances are VMs, listed (and counted) as such.
    """
    size = size_name(get(row, "sku", "name"), "sku.name")
    count = node_count(get(row, "sku", "capacity"), "sku.capacity")
    mode = str(get(row, "properties", "orchestrationMode") or "Uniform").lower()
    if not is_gpu_size(size) or count <= 0 or mode == "flexible":
        return []
    profile = get(row, "properties", "virtualMachineProfile") or {}
    capacity = capacity_of(get(profile, "priority"))
    mix = get(row, "properties", "priorityMixPolicy")
    parts = [("", capacity, count)]
    if capacity is Capacity.SPOT and isinstance(mix, Mapping):
        regular = regular_count(count, mix)
        parts = [
            (suffix, cap, n)
            for suffix, cap, n in (
                ("#regular", Capacity.ON_DEMAND, regular),
                ("#spot", Capacity.SPOT, count - regular),
            )
            if n > 0
        ]
    base = _base(row, "vmss", str(size), tag_key)
    note = None if instance_spec(size) else _unknown_size(str(size))
    group = reservation_group(profile)
    found = []
    for suffix, cap, nodes in parts:
        shown = f"{nodes} instance{'s' if nodes != 1 else ''} of the scale set"
        found.append(
            Resource(
                **{**base, "id": base["id"] + suffix},
                state=State.RUNNING,
                capacity=Capacity.RESERVED if group and cap is Capacity.ON_DEMAND else cap,
                gpu=_gpu(size, nodes),
                reservation=Reservation(id=group),
                source=SourceRef(note="; ".join(n for n in (shown, note) if n)),
            )
        )
    return found


def reservation_group(properties: Any) -> str | None:
    """The capacity reservation group a VM (or a scale set's profile) is placed in, lower-cased
    as the collector gives ARM ids."""
    if not isinstance(properties, Mapping):
        return None
    group = get(properties, "capacityReservation", "capacityReservationGroup", "id")
    return str(group).lower() if isinstance(group, str) and group else None


def regular_count(count: int, mix: Mapping[str, Any]) -> int:
    """Regular instances of a Spot Priority Mix: the base, then a share of the rest (rounded up)."""
    base = min(count, node_count(mix.get("baseRegularPriorityCount"), "baseRegularPriorityCount"))
    key = "regularPriorityPercentageAboveBase"
    share = percent(mix.get(key), key)
    return min(count, base + math.ceil((count - base) * share / 100))


def compute_resource(row: Mapping[str, Any], tag_key: str) -> Resource | None:
    """An Azure ML compute: an AmlCompute cluster's current nodes, or a GPU compute instance."""
    props = mapping(get(row, "properties"), "properties")
    kind = str(props.get("computeType") or "")
    inner = mapping(props.get("properties"), "properties.properties")
    size = size_name(inner.get("vmSize"), "vmSize")
    if not is_gpu_size(size):
        return None
    note = None if instance_spec(size) else _unknown_size(str(size))
    base = _base(row, "azureml", str(size), tag_key)
    base["launched_at"] = _when(props.get("createdOn"))
    if kind == "ComputeInstance":
        state = str(inner.get("state") or "").lower()
        if state not in ("running", "starting", "creating", "restarting"):
            return None  # a stopped compute instance is deallocated
        return Resource(
            **{**base, "workload": _workload(base["tags"], tag_key, Workload.NOTEBOOK)},
            state=State.RUNNING if state == "running" else State.PENDING,
            capacity=Capacity.ON_DEMAND,
            gpu=_gpu(size),
            source=SourceRef(note=note),
        )
    if kind != "AmlCompute":
        return None
    nodes = node_count(inner.get("currentNodeCount"), "currentNodeCount")
    minimum = get(inner, "scaleSettings", "minNodeCount")
    minimum = None if minimum is None else node_count(minimum, "scaleSettings.minNodeCount")
    if nodes <= 0:
        return None  # scaled to zero: nothing held
    shown = f"{nodes} node{'s' if nodes != 1 else ''} now, minimum {minimum}"
    return Resource(
        **base,
        state=State.RUNNING,
        capacity=capacity_of(inner.get("vmPriority") or "Dedicated"),
        gpu=_gpu(size, nodes),
        min_nodes=minimum,
        source=SourceRef(note="; ".join(n for n in (shown, note) if n)),
    )


Reader = Callable[[Mapping[str, Any], str], "Resource | list[Resource] | None"]


def read_row(read: Reader, row: Any, tag_key: str) -> list[Resource] | CoverageGap:
    """The Resources `read` makes of one row; a row of a shape ARM does not give is a gap."""
    if not isinstance(row, Mapping):
        return _malformed("", f"a row is not an object: {printable(repr(row))}")
    try:
        found = read(row, tag_key)
    except RowProblem as exc:
        return _malformed(arm_id(row), str(exc))
    if found is None:
        return []
    return found if isinstance(found, list) else [found]


def _malformed(rid: str, problem: str) -> CoverageGap:
    subscription = subscription_of(rid)
    return CoverageGap(
        provider="azure",
        scope=f"subscription {subscription}" if subscription else "inventory",
        error="MalformedRow",
        message=f"azure: {printable(rid or 'a row', 200)}: {problem}; not judged",
        account=subscription or None,
    )
