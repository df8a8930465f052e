"""Which Cloud Billing Catalog SKUs price which catalog items: an exact description allowlist.

SKU descriptions as the Compute Engine service (6F81-5844-456A) lists them, with " running in
<Americas|EMEA|APAC>" removed; spot SKUs carry the prefix "Spot Preemptible " and usageType
Preemptible. Anything not named here (commitments, DWS/Flex-start/Calendar, reserved, sole
tenancy, custom, premium) is never read. Descriptions from public SKU captures (Nov 2026).
"""

from __future__ import annotations

from gpu_audit.catalog import InstanceSpec

# family (the type's name before its last `-`) → (core SKU, RAM SKU, GPU SKU); None: no separate
# core and RAM SKU (A4's GPU slice SKU is the whole VM's price)
FAMILIES: dict[str, tuple[str | None, str | None, str]] = {
    "a2-highgpu": ("A2 Instance Core", "A2 Instance Ram", "Nvidia Tesla A100 GPU"),
    "a2-megagpu": ("A2 Instance Core", "A2 Instance Ram", "Nvidia Tesla A100 GPU"),
    "a2-ultragpu": ("A2 Instance Core", "A2 Instance Ram", "Nvidia Tesla A100 80GB GPU"),
    "a3-highgpu": ("A3 Instance Core", "A3 Instance Ram", "Nvidia H100 80GB GPU"),
    "a3-megagpu": ("A3 Instance Core", "A3 Instance Ram", "Nvidia H100 80GB Plus GPU"),
    "g2-standard": ("G2 Instance Core", "G2 Instance Ram", "Nvidia L4 GPU"),
    "a4-highgpu": (None, None, "A4 Nvidia B200 (1 gpu slice)"),
}
# attached GPUs of N1 hosts, billed per GPU (`gpu:<MODEL>` items)
ATTACHED = {
    "T4": "Nvidia Tesla T4 GPU",
    "V100": "Nvidia Tesla V100 GPU",
    "P100": "Nvidia Tesla P100 GPU",
    "P4": "Nvidia Tesla P4 GPU",
    "K80": "Nvidia Tesla K80 GPU",
}
N1 = ("N1 Predefined Instance Core", "N1 Predefined Instance Ram")
N1_GIB_PER_VCPU = {"standard": 3.75, "highmem": 6.5, "highcpu": 0.9}
SPOT_PREFIX = "Spot Preemptible "
SPOT_SUFFIX = " attached to Spot Preemptible VMs"
USAGE = {"OnDemand": "on-demand", "Preemptible": "spot"}
# never list prices, whatever else the description says (the wave-2 H100 anomaly was a DWS rate)
REFUSED = (
    "DWS",
    "Dynamic Workload",
    "Flex",
    "Calendar",
    "Commit",
    "Reserved",
    "Sole Tenancy",
    "Custom",
    "Premium",
    "Extended",
)


def base_description(description: str) -> str | None:
    """`Spot Preemptible Nvidia L4 GPU running in Americas` → `Nvidia L4 GPU`; None for a SKU
    that is never a list price."""
    if any(word in description for word in REFUSED):
        return None
    text = description.removeprefix(SPOT_PREFIX)
    head, separator, _geo = text.rpartition(" running in ")
    return (head if separator else text).removesuffix(SPOT_SUFFIX)


def is_spot(description: str) -> bool:
    """True for a spot (preemptible) SKU description."""
    return description.startswith(SPOT_PREFIX) or SPOT_SUFFIX in description


def wanted_descriptions() -> frozenset[str]:
    """Every SKU description a Compute Engine price is composed from: attached GPUs, N1 hosts and
    each machine family's parts."""
    names: set[str] = set(ATTACHED.values()) | set(N1)
    for parts in FAMILIES.values():
        names.update(p for p in parts if p)
    return frozenset(names)


def family(spec: InstanceSpec) -> str:
    """A machine type's family (`a2-highgpu-1g` → `a2-highgpu`)."""
    return spec.instance_type.rpartition("-")[0]


def n1_shape(name: str) -> tuple[int, float] | None:
    """vCPUs and GiB of an N1 predefined host: `n1-highmem-8` → (8, 52.0)."""
    parts = name.split("-")
    if len(parts) != 3 or parts[0] != "n1" or parts[1] not in N1_GIB_PER_VCPU:
        return None
    try:
        vcpus = int(parts[2])
    except ValueError:
        return None
    return vcpus, vcpus * N1_GIB_PER_VCPU[parts[1]]
