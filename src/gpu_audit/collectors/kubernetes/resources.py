"""One context's nodes and pods → Resources: GPU nodes with their allocation, GPU pods."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from gpu_audit.collectors.kubernetes.dcgm import DcgmUtilization
from gpu_audit.collectors.kubernetes.knobs import pod_activity, pod_training
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
from gpu_audit.collectors.kubernetes.sharing import (
    MIG,
    NodeShares,
    PodShare,
    hami_request,
    node_shares,
    pod_share,
)
from gpu_audit.collectors.kubernetes.starts import pod_starts
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import (
    Gpu,
    Kind,
    Resource,
    Share,
    SourceRef,
    State,
    Utilization,
    Workload,
)

Json = dict[str, Any]
_WORKLOADS = frozenset(w.value for w in Workload)


@record
class GpuPod:
    raw: Json
    gpus: int
    owner: tuple[str, str] | None
    workload: Workload
    share: PodShare | None = None


@record
class ClusterView:
    """What one context holds: its GPU nodes (by name), its GPU pods and GPUs allocated per node."""

    context: str
    settings: KubernetesSettings
    nodes: Mapping[str, Json]  # every node by name: a GPU pod's node, GPU or not
    gpu_nodes: tuple[Json, ...]
    gpu_pods: tuple[GpuPod, ...]
    allocated: Mapping[str, int]
    shares: Mapping[str, NodeShares]  # shared GPU nodes by name (docs/shared-gpus.md)
    held: Mapping[str, Fraction]  # shares their pods hold, in the node's units

    @classmethod
    def build(
        cls, context: str, nodes: list[Json], pods: list[Json], settings: KubernetesSettings
    ) -> ClusterView:
        """A context's view: its nodes by name, live pods, each GPU node's shares (MIG,
        time-slicing, MPS, HAMi) and the GPUs its pods hold."""
        names = settings.gpu_resources
        by_name = {_meta(n).get("name", ""): n for n in nodes}
        live = [p for p in pods if (p.get("status") or {}).get("phase") in STATES]
        hami = {
            (p.get("spec") or {}).get("nodeName") for p in live if hami_request(p.get("spec") or {})
        }
        shares: dict[str, NodeShares] = {}
        for name, node in by_name.items():
            labels = _labels(node)
            found = node_shares(
                labels,
                (node.get("status") or {}).get("capacity"),
                _meta(node).get("annotations") or {},
                gpu_model_of(labels, instance_type_of(labels)),
                hami_pods=name in hami,
            )
            if found is not None:
                shares[name] = found
        gpu_nodes = tuple(
            n
            for n in nodes
            if _meta(n).get("name", "") in shares
            or gpu_quantity((n.get("status") or {}).get("capacity"), names) > 0
        )
        gpu_pods: list[GpuPod] = []
        allocated: dict[str, int] = {}
        held: dict[str, Fraction] = {}
        for pod in live:
            spec = pod.get("spec") or {}
            where = str(spec.get("nodeName") or "")
            share = _share(spec, shares.get(where), by_name.get(where))
            gpus = gpus_requested(spec, names)
            if share is not None:
                gpus = max(1, math.ceil(share.gpus))
            if gpus <= 0:
                continue
            owner = owner_of(_meta(pod))
            labels = _meta(pod).get("labels") or {}
            workload = workload_of(labels, owner, spec, settings.workload_label)
            gpu_pods.append(GpuPod(pod, gpus, owner, workload, share))
            if share is not None and where in shares:
                held[where] = held.get(where, Fraction(0)) + share.units
            elif where:
                allocated[where] = allocated.get(where, 0) + gpus
        return cls(context, settings, by_name, gpu_nodes, tuple(gpu_pods), allocated, shares, held)


def _share(spec: Json, node: NodeShares | None, raw: Json | None) -> PodShare | None:
    """The pod's share of its node's GPUs; a pending pod's MIG slices on its selector's GPU."""
    placement = _labels(raw) if raw is not None else dict(spec.get("nodeSelector") or {})
    if raw is not None and node is None:
        return None  # a node of whole GPUs
    return pod_share(spec, node, gpu_model_of(placement, instance_type_of(placement)))


def node_id(view: ClusterView, node: Json) -> str:
    """A node's resource id: its provider id, else `context/name`."""
    provider_id = (node.get("spec") or {}).get("providerID") or None
    return str(provider_id or f"{view.context}/{_meta(node).get('name', '')}")


def _meta(item: Json) -> Json:
    return item.get("metadata") or {}


def _labels(item: Json) -> dict[str, str]:
    return {str(k): str(v) for k, v in (_meta(item).get("labels") or {}).items()}


def node_resource(
    view: ClusterView, node: Json, utilization: DcgmUtilization | None, note: str | None
) -> Resource:
    """A GPU node as a Resource: its capacity, allocation and shares, region and instance type from
    its labels, DCGM utilization when measured."""
    labels = _labels(node)
    name = str(_meta(node).get("name", ""))
    provider_id = (node.get("spec") or {}).get("providerID") or None
    instance_type = instance_type_of(labels)
    region, zone = region_zone(labels)
    count = gpu_quantity((node.get("status") or {}).get("capacity"), view.settings.gpu_resources)
    shares = view.shares.get(name)
    allocated: int | None = view.allocated.get(name, 0)
    share = Share()
    measured = _measured(utilization, lambda u: u.nodes.get(name))
    if shares is not None:
        share = _node_share(shares, view.held.get(name), node_id(view, node))
        count, allocated = shares.gpus, None
        if shares.mode == MIG and measured == Utilization() and utilization is not None:
            measured = utilization.mig_nodes.get(name) or Utilization()
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
            allocated=allocated,
        ),
        tags=labels,
        workload=workload,
        launched_at=timestamp(_meta(node).get("creationTimestamp")),
        utilization=measured,
        share=share,
        source=SourceRef(note=note) if note else SourceRef(),
    )


def _node_share(shares: NodeShares, held: Fraction | None, node: str) -> Share:
    held = held or Fraction(0)
    return Share(
        node=node,
        mode=shares.mode,
        profile=shares.profile_text,
        per_gpu=shares.per_gpu,
        units=_number(shares.offered),
        allocated=_number(held),
        free=_number(max(Fraction(0), shares.offered - held)),
        gpus=_number(held / shares.per_gpu),
    )


def _pod_share(view: ClusterView, pod: GpuPod, node: Json | None) -> Share:
    share = pod.share
    if share is None:
        return Share()
    shares = view.shares.get(str(_meta(node).get("name", ""))) if node is not None else None
    slice_pct = None
    if share.mode is None and shares is not None and shares.profiles:
        largest = max(int(p.split("g.", 1)[0]) for p in shares.profiles)
        slice_pct = round(100 * largest / shares.per_gpu, 2)
    return Share(
        mode=share.mode,
        profile=share.profile,
        per_gpu=share.per_gpu,
        units=_number(share.units),
        gpus=_number(share.gpus),
        node=node_id(view, node) if node is not None else None,
        slice_pct=slice_pct,
    )


def _number(value: Fraction) -> float:
    """Shares as the report shows them: whole when whole, else to four decimals."""
    return float(value) if value.denominator == 1 else round(float(value), 4)


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
    measured = _measured(utilization, lambda u: u.pods.get((namespace, name)))
    mode = pod.share.mode if pod.share is not None else None
    if utilization is not None and mode == MIG:  # the slice's own activity
        measured = utilization.mig_pods.get((namespace, name)) or Utilization()
    elif utilization is not None and mode is not None and node_name:
        # time-slicing, MPS, HAMi: DCGM sees the whole GPU; its shares cannot be told apart
        measured = utilization.nodes.get(node_name) or Utilization()
        parts.append(f"{mode}: utilization is the whole GPU's, shared with the node's other pods")
    activity, said = pod_activity(utilization, (namespace, name), measured)
    if said:
        parts.append(said)
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
        utilization=measured,
        share=_pod_share(view, pod, node),
        training=pod_training(pod.raw),
        activity=activity,
        run=pod_starts(status),
        source=SourceRef(note="; ".join(parts)),
    )


def _measured(utilization: DcgmUtilization | None, pick: Any) -> Utilization:
    """The DCGM figures when Prometheus answered and has series for it; missing otherwise."""
    if utilization is None:
        return Utilization()
    return pick(utilization) or Utilization()
