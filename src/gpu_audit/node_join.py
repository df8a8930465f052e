"""One resource per machine: a Kubernetes node that a cloud scan also listed joins its instance.

Nodes carry their provider id as `id` (`aws:///us-east-1a/i-0abc…`, `gce://project/zone/name`),
the cloud collectors their own (`i-0abc…`, `projects/P/zones/Z/instances/NAME`). The joined
resource is the cloud's (its account, tags, capacity and price are the billing truth) with the
cluster's view added: `cluster`, `gpu.allocated`, and whatever the cloud left missing (DCGM
utilization when no cloud agent reports, the node's labels under tags the cloud does not set).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from gpu_audit.core.resource import Capacity, Kind, Resource, Utilization, Workload


def cloud_id(provider_id: str) -> tuple[str, str] | None:
    """(provider, id) the cloud collector gives the machine behind a node's provider id."""
    if provider_id.startswith("aws://"):
        instance = provider_id.rsplit("/", 1)[-1]
        return ("aws", instance) if instance.startswith("i-") else None
    if provider_id.startswith("gce://"):
        parts = provider_id.removeprefix("gce://").split("/")
        if len(parts) == 3 and all(parts):
            project, zone, name = parts
            return "gcp", f"projects/{project}/zones/{zone}/instances/{name}"
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
    for index, node in enumerate(items):
        if node.kind is not Kind.INSTANCE or node.provider != "kubernetes":
            continue
        key = cloud_id(node.id)
        target = clouds.get(key) if key else None
        if target is None:
            continue
        joined[target] = merge(joined[target], node)
        del joined[index]
    return [joined[i] for i in sorted(joined)]


def merge(instance: Resource, node: Resource) -> Resource:
    """The cloud instance, completed by what its Kubernetes node says."""
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
        allocated=node.gpu.allocated,
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
        tags={**node.tags, **instance.tags},
        source=replace(instance.source, note="; ".join(notes)),
    )
