"""Where Kubernetes GPU pods may land: GPU model, instance type and capacity from their selectors.

Kubernetes itself has no capacity default: a pod with no capacity selector or toleration runs on
whatever nodes the cluster gives it. So capacity is read only from what the pods state (node
selector labels, required node affinity `In` terms, tolerations of spot taints) and stays missing
otherwise, with its line at the pod template that leaves it out.
"""

from __future__ import annotations

from typing import Any

from gpu_audit.catalog import instance_spec
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Capacity
from gpu_audit.core.yamlsrc import LineMap, is_templated
from gpu_audit.jobs.gpus import GpuAsk, alternatives_note, cheapest, instance_ask
from gpu_audit.jobs.interface import JobDraft, billing_service

_MODEL_LABELS = (
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-tpu-accelerator",
    "nvidia.com/gpu.product",
    "karpenter.k8s.aws/instance-gpu-name",
    "eks.amazonaws.com/instance-gpu-name",
)
_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
# label → {value: capacity}; any other value of such a label is on-demand.
_CAPACITY_LABELS: dict[str, dict[str, Capacity]] = {
    "cloud.google.com/gke-spot": {"true": Capacity.SPOT, "false": Capacity.ON_DEMAND},
    "cloud.google.com/gke-preemptible": {"true": Capacity.SPOT, "false": Capacity.ON_DEMAND},
    # Karpenter v1.3+ adds `reserved` (on-demand capacity reservations).
    "karpenter.sh/capacity-type": {
        "spot": Capacity.SPOT,
        "on-demand": Capacity.ON_DEMAND,
        "reserved": Capacity.RESERVED,
    },
    # EKS managed node groups: ON_DEMAND, SPOT, CAPACITY_BLOCK.
    "eks.amazonaws.com/capacitytype": {
        "spot": Capacity.SPOT,
        "on_demand": Capacity.ON_DEMAND,
        "capacity_block": Capacity.RESERVED,
    },
    "kubernetes.azure.com/scalesetpriority": {"spot": Capacity.SPOT, "regular": Capacity.ON_DEMAND},
}
# Node-label prefixes that only one cloud's nodes carry: the cloud that bills the pods' nodes. A
# manifest with none of them (and no instance type the catalog knows) names no cloud, and is not
# priced as any cloud's (docs/pre-commit.md).
_CLOUD_PREFIXES = (
    ("cloud.google.com/", "gcp"),
    ("karpenter.k8s.aws/", "aws"),
    ("eks.amazonaws.com/", "aws"),
    ("kubernetes.azure.com/", "azure"),
)
# GKE consumes a specific reservation through these node labels.
_RESERVATION_LABELS = ("cloud.google.com/reservation-name", "cloud.google.com/reservation-affinity")


@record(frozen=False)
class Constraint:
    """One node-placement constraint of a pod, with its line."""

    key: str
    values: list[Any]
    line: int


def _map(value: Any) -> LineMap | None:
    return value if isinstance(value, LineMap) else None


def _items(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, LineMap) else []


def constraints(pod: LineMap) -> list[Constraint]:
    """Node selector labels and required node-affinity `In` expressions of a pod."""
    found: list[Constraint] = []
    selector = _map(pod.get("nodeSelector"))
    if selector is not None:
        for key, value in selector.items():
            found.append(Constraint(str(key).lower(), [value], selector.line_of(key)))
    affinity = _map(pod.get("affinity"))
    node = _map(affinity.get("nodeAffinity")) if affinity else None
    required = _map(node.get("requiredDuringSchedulingIgnoredDuringExecution")) if node else None
    for term in _items(required.get("nodeSelectorTerms") if required else None):
        for expression in _items(term.get("matchExpressions") if isinstance(term, dict) else None):
            if isinstance(expression, LineMap) and expression.get("operator") == "In":
                values = expression.get("values")
                values = list(values) if isinstance(values, list) else [values]
                key = str(expression.get("key", "")).lower()
                found.append(Constraint(key, values, expression.line_of("values")))
    return found


def _tolerated_spot(pod: LineMap) -> int | None:
    """The line of a toleration that lets the pod onto spot nodes, if any."""
    for toleration in _items(pod.get("tolerations")):
        if not isinstance(toleration, LineMap):
            continue
        key = str(toleration.get("key", "")).lower()
        if key not in _CAPACITY_LABELS:
            continue
        value = _CAPACITY_LABELS[key].get(str(toleration.get("value", "")).lower())
        if toleration.get("operator") == "Exists" or value is Capacity.SPOT:
            return toleration.line_of("key")
    return None


Stated = tuple[Capacity | None, int | None]  # a capacity (None: templated) and its line


def _capacity_of(constraint: Constraint, values: list[Any]) -> Stated | None:
    if any(is_templated(v) for v in values):
        return None, constraint.line
    if constraint.key in _RESERVATION_LABELS:
        return Capacity.RESERVED, constraint.line
    table = _CAPACITY_LABELS[constraint.key]
    found = {table.get(str(v).lower(), Capacity.ON_DEMAND) for v in values}
    if not found:
        return None
    for capacity in (Capacity.ON_DEMAND, Capacity.RESERVED, Capacity.SPOT):
        if capacity in found:  # the costliest value the pod may land on
            return capacity, constraint.line
    return None


def placement(draft: JobDraft, pods: list[tuple[LineMap | None, int | None]]) -> None:
    """GPU model, instance type and capacity from the pods (with each pod template's line)."""
    asks: list[GpuAsk] = []
    stated: list[Stated | None] = []
    for pod, _ in pods:
        capacity: Stated | None = None
        for constraint in constraints(pod) if pod is not None else []:
            values = [v for v in constraint.values if v is not None]
            if constraint.key in (label.lower() for label in _MODEL_LABELS):
                for value in values:
                    asks.append(GpuAsk(str(value), None, constraint.line, str(value)))
            elif constraint.key in _TYPE_LABELS:
                for value in values:
                    ask = instance_ask(str(value), constraint.line)
                    asks += [ask] if ask else []
                if values and draft.get("instance_type") is None:
                    draft.set("instance_type", str(values[0]), constraint.line)
            elif constraint.key in _CAPACITY_LABELS or constraint.key in _RESERVATION_LABELS:
                capacity = _capacity_of(constraint, values) or capacity
        if capacity is None and pod is not None:
            line = _tolerated_spot(pod)
            capacity = (Capacity.SPOT, line) if line is not None else None
        stated.append(capacity)
    _set_cloud(draft, [c for pod, _ in pods if pod is not None for c in constraints(pod)])
    chosen = cheapest(asks)
    if chosen is not None:
        draft.set("gpu.model", chosen.model, chosen.line)
        draft.add_note(alternatives_note(asks, chosen))
    _set_capacity(draft, stated, [line for _, line in pods])


def _set_cloud(draft: JobDraft, found: list[Constraint]) -> None:
    """The billing service of the cloud the node labels (or an instance type) name; `kubernetes`
    (a cluster the catalog does not price) when they name none."""
    for constraint in found:
        cloud = next((c for p, c in _CLOUD_PREFIXES if constraint.key.startswith(p)), None)
        if cloud is None and constraint.key in _TYPE_LABELS:
            spec = next(
                (s for v in constraint.values if (s := instance_spec(str(v))) is not None), None
            )
            cloud = spec.cloud if spec is not None else None
        if cloud is not None:
            draft.set("service", billing_service(cloud), constraint.line)
            return
    draft.set("service", "kubernetes")


def _set_capacity(draft: JobDraft, stated: list[Stated | None], anchors: list[int | None]) -> None:
    """On-demand if any GPU pod may land on on-demand nodes; missing if any pod does not say."""
    on_demand = [s for s in stated if s is not None and s[0] is Capacity.ON_DEMAND]
    if on_demand:
        draft.set("capacity", Capacity.ON_DEMAND, on_demand[0][1])
        return
    for index, capacity in enumerate(stated):
        if capacity is None or capacity[0] is None:  # unstated, or templated
            line = capacity[1] if capacity is not None else anchors[index]
            draft.unknown("capacity", line)
            if capacity is None:
                draft.add_note(
                    "no capacity selector or toleration: capacity is whatever the cluster gives"
                )
            return
    reserved = [s for s in stated if s is not None and s[0] is Capacity.RESERVED]
    first = reserved[0] if reserved else stated[0]
    assert first is not None
    draft.set("capacity", first[0], first[1])
