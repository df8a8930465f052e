"""One context's nodes and pods → Resources: GPU nodes with their allocation, GPU pods."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_audit.collectors.kubernetes.dcgm import DcgmUtilization
from gpu_audit.collectors.kubernetes.nodes import (
    account_of,
    capacity_of,
    gpu_model_of,
    gpu_quantity,
    instance_type_of,
    region_zone,
    service_of,
    timestamp,
)
from gpu_audit.collectors.kubernetes.pods import STATES, gpus_requested, owner_of, workload_of
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Gpu, Kind, Resource, SourceRef, State, Utilization, Workload

Json = dict[str, Any]
_WORKLOADS = frozenset(w.value for w in Workload)


@record
class GpuPod:
    raw: Json
    gpus: int
    owner: tuple[str, str] | None
    workload: Workload


@record
class ClusterView:
    """What one context holds: its GPU nodes (by name), its GPU pods and GPUs allocated per node."""

    context: str
    settings: KubernetesSettings
    nodes: Mapping[str, Json]  # every node by name: a GPU pod's node, GPU or not
    gpu_nodes: tuple[Json, ...]
    gpu_pods: tuple[GpuPod, ...]
    allocated: Mapping[str, int]

    @classmethod
    def build(
        cls, context: str, nodes: list[Json], pods: list[Json], settings: KubernetesSettings
    ) -> ClusterView:
        names = settings.gpu_resources
        by_name = {_meta(n).get("name", ""): n for n in nodes}
        gpu_nodes = tuple(
            n for n in nodes if gpu_quantity((n.get("status") or {}).get("capacity"), names) > 0
        )
        gpu_pods: list[GpuPod] = []
        allocated: dict[str, int] = {}
        for pod in pods:
            spec = pod.get("spec") or {}
            if (pod.get("status") or {}).get("phase") not in STATES:
                continue
            gpus = gpus_requested(spec, names)
            if gpus <= 0:
                continue
            owner = owner_of(_meta(pod))
            labels = _meta(pod).get("labels") or {}
            workload = workload_of(labels, owner, spec, settings.workload_label)
            gpu_pods.append(GpuPod(pod, gpus, owner, workload))
            node = spec.get("nodeName")
            if node:
                allocated[node] = allocated.get(node, 0) + gpus
        return cls(context, settings, by_name, gpu_nodes, tuple(gpu_pods), allocated)


def _meta(item: Json) -> Json:
    return item.get("metadata") or {}


def _labels(item: Json) -> dict[str, str]:
    return {str(k): str(v) for k, v in (_meta(item).get("labels") or {}).items()}


def node_resource(
    view: ClusterView, node: Json, utilization: DcgmUtilization | None, note: str | None
) -> Resource:
    labels = _labels(node)
    name = str(_meta(node).get("name", ""))
    provider_id = (node.get("spec") or {}).get("providerID") or None
    instance_type = instance_type_of(labels)
    region, zone = region_zone(labels)
    count = gpu_quantity((node.get("status") or {}).get("capacity"), view.settings.gpu_resources)
    # A node's workload is its label's, never guessed from its pods: a node outlives them, and
    # the pods are judged themselves.
    stated = labels.get(view.settings.workload_label, "").strip().lower()
    workload = Workload(stated) if stated in _WORKLOADS else Workload.UNKNOWN
    return Resource(
        kind=Kind.INSTANCE,
        provider="kubernetes",
        id=str(provider_id or f"{view.context}/{name}"),
        service=service_of(labels),
        name=name,
        account=account_of(provider_id),
        cluster=view.context,
        region=region,
        zone=zone,
        instance_type=instance_type,
        state=State.RUNNING,
        capacity=capacity_of(labels),
        gpu=Gpu(
            model=gpu_model_of(labels, instance_type),
            count=count,
            allocated=view.allocated.get(name, 0),
        ),
        tags=labels,
        workload=workload,
        launched_at=timestamp(_meta(node).get("creationTimestamp")),
        utilization=_measured(utilization, lambda u: u.nodes.get(name)),
        source=SourceRef(note=note) if note else SourceRef(),
    )


def pod_resource(
    view: ClusterView, pod: GpuPod, utilization: DcgmUtilization | None, note: str | None
) -> Resource:
    """A GPU pod with its node's GPU class, capacity and place; no instance type, so it is
    priced by its GPUs' hourly rate, never as a second copy of its node."""
    meta, spec, status = _meta(pod.raw), pod.raw.get("spec") or {}, pod.raw.get("status") or {}
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    node_name = spec.get("nodeName")
    node = view.nodes.get(node_name) if node_name else None
    # A pending pod has no node yet: its nodeSelector says where it will land.
    placement = _labels(node) if node is not None else dict(spec.get("nodeSelector") or {})
    region, zone = region_zone(placement)
    capacity = capacity_of(placement)
    state = STATES[status["phase"]]
    started = status.get("startTime") if state is State.RUNNING else None
    parts = [f"owner {pod.owner[0]}/{pod.owner[1]}" if pod.owner else "no owner (bare pod)"]
    parts.append(f"node {node_name}" if node_name else "not scheduled")
    if note:
        parts.append(note)
    return Resource(
        kind=Kind.POD,
        provider="kubernetes",
        id=f"{view.context}/{namespace}/{name}",
        service=service_of(placement) if node is not None else "kubernetes",
        name=name,
        account=account_of((node or {}).get("spec", {}).get("providerID")),
        cluster=view.context,
        region=region,
        zone=zone,
        state=state,
        capacity=capacity,
        gpu=Gpu(model=gpu_model_of(placement, instance_type_of(placement)), count=pod.gpus),
        tags=_labels(pod.raw),
        workload=pod.workload,
        launched_at=timestamp(started or meta.get("creationTimestamp")),
        utilization=_measured(utilization, lambda u: u.pods.get((namespace, name))),
        source=SourceRef(note="; ".join(parts)),
    )


def _measured(utilization: DcgmUtilization | None, pick: Any) -> Utilization:
    """The DCGM figures when Prometheus answered and has series for it; missing otherwise."""
    if utilization is None:
        return Utilization()
    return pick(utilization) or Utilization()
