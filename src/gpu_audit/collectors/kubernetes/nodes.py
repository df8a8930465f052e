"""Node JSON (as the API serves it) → the facts a GPU node Resource needs: pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from gpu_audit.catalog import instance_spec
from gpu_audit.catalog.gpus import canonical_gpu
from gpu_audit.core.resource import Capacity

# Capacity labels, the first one present decides: Karpenter, EKS managed node groups, GKE, AKS.
_KARPENTER = "karpenter.sh/capacity-type"
_EKS = "eks.amazonaws.com/capacityType"
_GKE_SPOT = "cloud.google.com/gke-spot"
_GKE_PREEMPTIBLE = "cloud.google.com/gke-preemptible"
_AKS_PRIORITY = "kubernetes.azure.com/scalesetpriority"
_CAPACITY_WORDS = {
    "spot": Capacity.SPOT,
    "on-demand": Capacity.ON_DEMAND,
    "on_demand": Capacity.ON_DEMAND,
    "reserved": Capacity.RESERVED,
    "capacity_block": Capacity.RESERVED,  # EKS CAPACITY_BLOCK: an EC2 Capacity Block, paid ahead
    "capacity-block": Capacity.RESERVED,
}
_PRODUCT_LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator")
_SERVICE_MARKS = (  # a label only that managed service sets → the service billing the node
    ("eks.amazonaws.com/", "eks"),
    ("karpenter.k8s.aws/", "eks"),  # Karpenter's AWS provider
    ("cloud.google.com/gke-", "gke"),
    ("kubernetes.azure.com/", "aks"),
)


def capacity_of(labels: Mapping[str, str]) -> Capacity:
    """Spot, on-demand or reserved as the node pool's labels state it; unknown when none does."""
    for key in (_KARPENTER, _EKS):
        if key in labels:
            return _CAPACITY_WORDS.get(labels[key].strip().lower(), Capacity.UNKNOWN)
    if "true" in (labels.get(_GKE_SPOT), labels.get(_GKE_PREEMPTIBLE)):
        return Capacity.SPOT
    if labels.get(_AKS_PRIORITY, "").lower() == "spot":
        return Capacity.SPOT
    if any(key.startswith("cloud.google.com/gke-nodepool") for key in labels):
        return Capacity.ON_DEMAND  # GKE marks spot and preemptible pools; the rest is standard
    if "kubernetes.azure.com/agentpool" in labels:
        return Capacity.ON_DEMAND  # AKS marks spot scale sets; regular ones carry no priority
    return Capacity.UNKNOWN


def service_of(labels: Mapping[str, str]) -> str:
    """`eks`, `gke` or `aks` when a label only that service sets is present, else `kubernetes`."""
    for key in labels:
        for prefix, service in _SERVICE_MARKS:
            if key.startswith(prefix):
                return service
    return "kubernetes"


def gpu_quantity(resources: Mapping[str, Any] | None, names: Iterable[str]) -> int:
    """GPUs in a capacity, limits or requests map (extended resources are whole numbers)."""
    if not resources:
        return 0
    total = 0
    for name in names:
        text = str(resources.get(name, "0")).strip()
        try:
            total += int(text)
        except ValueError:
            continue  # a malformed quantity counts nothing rather than guessing
    return total


def gpu_model_of(labels: Mapping[str, str], instance_type: str | None) -> str | None:
    """The GPU class: from the catalog by instance type, else the GPU feature discovery label."""
    spec = instance_spec(instance_type)
    if spec is not None:
        return spec.gpu_model
    for key in _PRODUCT_LABELS:
        product = labels.get(key)
        if product:
            return _product_class(product) or product
    return None


def _product_class(product: str) -> str | None:
    """`NVIDIA-H100-80GB-HBM3` → `H100`: drop trailing words until the catalog knows the name."""
    parts = product.strip().split("-")
    while parts:
        found = canonical_gpu("-".join(parts))
        if found:
            return found
        parts.pop()
    return None


def label(labels: Mapping[str, str], *keys: str) -> str | None:
    """The first non-empty value among the label `keys`, None when none is set."""
    for key in keys:
        if labels.get(key):
            return labels[key]
    return None


def region_zone(labels: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The node's (region, zone) from the topology labels (the deprecated failure-domain ones as a
    fallback)."""
    region = label(
        labels, "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"
    )
    zone = label(labels, "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
    return region, zone


def instance_type_of(labels: Mapping[str, str]) -> str | None:
    """The node's instance type label (the deprecated beta one as a fallback), None without one."""
    return label(labels, "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def account_of(provider_id: str | None) -> str | None:
    """The GCP project of a `gce://project/zone/name` provider id (AWS ids carry no account)."""
    if provider_id and provider_id.startswith("gce://"):
        return provider_id.removeprefix("gce://").split("/", 1)[0] or None
    return None


def timestamp(text: Any) -> datetime | None:
    """An API timestamp (RFC 3339) as an aware datetime; None for anything else."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
