"""One resource per machine: a Kubernetes node that a cloud scan also listed joins its instance.

Nodes carry their provider id as `id` (`aws:///us-east-1a/i-0abc…`, `gce://project/zone/name`,
`azure:///subscriptions/…/virtualMachineScaleSets/S/virtualMachines/N`), the cloud collectors
their own (`i-0abc…`, `projects/P/zones/Z/instances/NAME`, the lower-cased ARM id of the VM or
scale set). The joined
resource is the cloud's (its account, tags, capacity and price are the billing truth) with the
cluster's view added: `cluster`, `gpu.allocated`, and whatever the cloud left missing (DCGM
utilization when no cloud agent reports, the node's labels under tags the cloud does not set).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from gpu_audit.core.resource import Capacity, Kind, Resource, Share, Utilization, Workload


def cloud_id(provider_id: str) -> tuple[str, str] | None:
    """(provider, id) the cloud collector gives the machine behind a node's provider id."""
    if provider_id.startswith("aws://"):
        instance = provider_id.rsplit("/", 1)[-1]
        return ("aws", instance) if instance.startswith("i-") else None
    if provider_id.startswith("azure://"):
        return _azure_id(provider_id.removeprefix("azure://"))
    if provider_id.startswith("gce://"):
        parts = provider_id.removeprefix("gce://").split("/")
        if len(parts) == 3 and all(parts):
            project, zone, name = parts
            return "gcp", f"projects/{project}/zones/{zone}/instances/{name}"
    return None


def _azure_id(path: str) -> tuple[str, str] | None:
    """An AKS node is a scale-set instance (`.../virtualMachineScaleSets/S/virtualMachines/N`),
    joined to its scale set; a node on a plain VM joins the VM. Ids are lower-cased, as the
    Azure collector gives them (ARM ids are case-insensitive)."""
    parts = path.strip("/").lower().split("/")
    # subscriptions/S/resourcegroups/G/providers/microsoft.compute/TYPE/NAME[/virtualmachines/N]
    if len(parts) not in (8, 10) or not all(parts) or parts[0] != "subscriptions":
        return None
    if parts[2] != "resourcegroups" or parts[4:6] != ["providers", "microsoft.compute"]:
        return None
    if len(parts) == 10 and parts[6] == "virtualmachinescalesets" and parts[8] == "virtualmachines":
        return "azure", "/" + "/".join(parts[:8])
    if len(parts) == 8 and parts[6] == "virtualmachines":
        return "azure", "/" + "/".join(parts)
    return None


def join_nodes(resources: Iterable[Resource]) -> list[Resource]:
    """The resources with each node that matches a cloud instance merged into it, in order."""
    items = list(resources)
    if not any(r.provider == "kubernetes" for r in items):
        return items  # no nodes to join (every scan without --provider kubernetes)
    clouds = {
        (r.provider, r.id): index
        for index, r in enumerate(items)
        if r.kind is Kind.INSTANCE and r.provider != "kubernetes"
    }
    joined = dict(enumerate(items))
    merged: set[int] = set()  # targets already joined by a node (an Azure scale set has many)
    for index, node in enumerate(items):
        if node.kind is not Kind.INSTANCE or node.provider != "kubernetes":
            continue
        key = cloud_id(node.id)
        target = clouds.get(key) if key else None
        if target is None:
            continue
        pooled = target in merged
        joined[target] = merge(joined[target], node, pooled=pooled)
        if pooled and joined[target].share != Share():
            # a scale set's shared nodes: its cost is not one node's to split (its pods keep
            # their GPU class's price times their share)
            joined[target] = replace(joined[target], share=Share())
        merged.add(target)
        del joined[index]
    return [joined[i] for i in sorted(joined)]


def merge(instance: Resource, node: Resource, pooled: bool = False) -> Resource:
    """The cloud instance, completed by what its Kubernetes node says; `pooled` when another
    node of the same scale set was merged before (their allocated GPUs add up)."""
    capacity = instance.capacity
    if capacity in (None, Capacity.UNKNOWN):
        capacity = node.capacity
    workload = instance.workload
    if workload is Workload.UNKNOWN:
        workload = node.workload
    utilization = instance.utilization
    if utilization == Utilization():
        utilization = node.utilization
    gpu = replace(
        instance.gpu,
        model=instance.gpu.model or node.gpu.model,
        count=instance.gpu.count if instance.gpu.count is not None else node.gpu.count,
        allocated=_allocated(instance.gpu.allocated, node.gpu.allocated, pooled),
    )
    seen = f"Kubernetes node {node.name} in {node.cluster}"
    notes = [n for n in (instance.source.note, seen, node.source.note) if n]
    return replace(
        instance,
        cluster=node.cluster,
        region=instance.region or node.region,
        zone=instance.zone or node.zone,
        capacity=capacity,
        workload=workload,
        gpu=gpu,
        utilization=utilization,
        share=instance.share if pooled else node.share,
        tags={**node.tags, **instance.tags},
        source=replace(instance.source, note="; ".join(notes)),
    )


def _allocated(before: int | None, node: int | None, pooled: bool) -> int | None:
    if not pooled:
        return node
    return None if before is None or node is None else before + node
