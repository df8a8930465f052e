"""Shared GPUs on a node and the share a pod holds: MIG slices, time-slicing and MPS replicas,
HAMi fractions; pure functions over the API's node and pod JSON (docs/shared-gpus.md).

Shares are counted in units of one physical GPU: `per_gpu` units make a GPU. A MIG slice is `g`
of the GPU's compute slices (7 on A100 and H100, 4 on A30), a time-sliced or MPS replica one of
`replicas`, a HAMi request the percent of the GPU's memory it reserves (of 100).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from gpu_audit.core.frozen import record
from gpu_audit.core.sharing import (
    HAMI,
    HAMI_CORES,
    HAMI_MEMORY,
    HAMI_PERCENT,
    MIG,
    MPS,
    TIME_SLICING,
    compute_slices,
    mig_profile,
    profile_slices,
)

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"  # time-slicing or MPS with `renameByDefault: true`
# The MIG profile of the product label (single strategy: `…-MIG-1g.10gb`).
_MIG_PRODUCT = re.compile(r"-MIG-([1-9]\d*)g\.(\d+gb(?:\+me)?)(?:-SHARED)?$")
HAMI_REGISTER = "hami.io/node-nvidia-register"  # HAMi's device plugin registers GPUs here
_HAMI_RESOURCES = (HAMI_MEMORY, HAMI_PERCENT, HAMI_CORES)
_COUNT = "nvidia.com/gpu.count"  # GPU Operator (GFD): physical GPUs on the node
_REPLICAS = "nvidia.com/gpu.replicas"
_STRATEGY = "nvidia.com/gpu.sharing-strategy"  # none | time-slicing | mps
_MIG_STRATEGY = "nvidia.com/mig.strategy"  # none | single | mixed
_PRODUCT = "nvidia.com/gpu.product"
_MEMORY = "nvidia.com/gpu.memory"  # MiB per GPU


@record
class NodeShares:
    """How a node's GPUs are shared out."""

    mode: str
    gpus: int  # physical GPUs
    per_gpu: int  # units per GPU
    offered: Fraction  # units the node's GPUs offer in all
    profiles: Mapping[str, int]  # MIG profile → slices advertised
    memory_mib: int | None = None  # per GPU (HAMi `gpumem` in MiB)
    single: bool = False  # MIG single strategy: `nvidia.com/gpu` is one slice of the profile

    @property
    def profile_text(self) -> str | None:
        """The MIG profiles as text (`1g.10gb×7, 3g.40gb×1`), None without any."""
        if not self.profiles:
            return None
        return ", ".join(f"{p}×{n}" for p, n in sorted(self.profiles.items()))


@record
class PodShare:
    """What a pod holds of a shared GPU: units of `per_gpu` (whole GPUs on a MIG node count
    `per_gpu` each and carry no mode)."""

    mode: str | None
    profile: str | None
    units: Fraction
    per_gpu: int

    @property
    def gpus(self) -> Fraction:
        """The share in whole GPUs (units over units per GPU), exact."""
        return self.units / self.per_gpu


def quantity(resources: Mapping[str, Any] | None, name: str) -> int:
    """A whole-number extended resource (0 when absent or malformed)."""
    text = str((resources or {}).get(name, "0")).strip()
    try:
        return max(int(text), 0)
    except ValueError:
        return 0


def node_shares(
    labels: Mapping[str, str],
    capacity: Mapping[str, Any] | None,
    annotations: Mapping[str, Any],
    model: str | None,
    hami_pods: bool = False,
) -> NodeShares | None:
    """How the node shares its GPUs, or None when it offers whole GPUs only."""
    capacity = capacity or {}
    physical = _int(labels.get(_COUNT))
    slices = compute_slices(model)
    mixed = {
        p: quantity(capacity, name)
        for name in capacity
        if (p := mig_profile(str(name))) and quantity(capacity, name) > 0
    }
    if mixed:  # MIG mixed strategy; GPUs with MIG off still count as `nvidia.com/gpu`
        whole = quantity(capacity, GPU)
        carved = sum(profile_slices(p) * n for p, n in mixed.items())
        gpus = physical or whole + math.ceil(carved / slices)
        return NodeShares(MIG, gpus, slices, Fraction(gpus * slices), mixed)
    single = _MIG_PRODUCT.search(labels.get(_PRODUCT, ""))
    if single and labels.get(_MIG_STRATEGY, "single") == "single" and quantity(capacity, GPU):
        profile = f"{single[1]}g.{single[2]}"
        devices = quantity(capacity, GPU)
        gpus = math.ceil(devices / max(1, slices // profile_slices(profile)))
        offered = Fraction(gpus * slices)
        return NodeShares(MIG, gpus, slices, offered, {profile: devices}, single=True)
    replicas = _int(labels.get(_REPLICAS)) or 0
    strategy = labels.get(_STRATEGY, "").strip().lower()
    advertised = quantity(capacity, SHARED) or quantity(capacity, GPU)
    shared = replicas > 1 or strategy in (TIME_SLICING, MPS) or quantity(capacity, SHARED) > 0
    if advertised and shared:
        replicas = replicas or max(1, advertised // (physical or 1))
        gpus = physical or max(1, math.ceil(advertised / replicas))
        mode = MPS if strategy == MPS else TIME_SLICING
        return NodeShares(mode, gpus, replicas, Fraction(gpus * replicas), {})
    if HAMI_REGISTER in annotations or hami_pods:
        gpus = physical or _registered(annotations.get(HAMI_REGISTER)) or quantity(capacity, GPU)
        if gpus:
            memory = _int(labels.get(_MEMORY))
            return NodeShares(HAMI, gpus, 100, Fraction(gpus * 100), {}, memory)
    return None


def hami_request(spec: Mapping[str, Any]) -> bool:
    """The pod asks HAMi for a memory or core fraction."""
    return any(
        quantity(_held(c), name) > 0
        for c in spec.get("containers") or ()
        for name in _HAMI_RESOURCES
    )


def pod_share(
    spec: Mapping[str, Any], node: NodeShares | None, model: str | None
) -> PodShare | None:
    """The share the pod holds, on its node's terms; a pending pod's MIG slices on the GPU
    class its selector names (None when it holds no shared GPU)."""
    held = [_held(c) for c in spec.get("containers") or ()]
    if node is None or node.mode == MIG:
        return _mig_share(held, node, model)
    if node.mode == HAMI:
        units = sum((_hami_units(h, node) for h in held), Fraction(0))
        return PodShare(HAMI, None, units, 100) if units else None
    units = Fraction(sum(quantity(h, SHARED) or quantity(h, GPU) for h in held))
    return PodShare(node.mode, None, units, node.per_gpu) if units else None


def _mig_share(
    held: Sequence[Mapping[str, Any]], node: NodeShares | None, model: str | None
) -> PodShare | None:
    slices = node.per_gpu if node is not None else compute_slices(model)
    units, profiles = Fraction(0), []
    for resources in held:
        for name in resources:
            profile = mig_profile(str(name))
            count = quantity(resources, name) if profile else 0
            if profile and count:
                units += profile_slices(profile) * count
                profiles.append(profile)
    whole = sum(quantity(h, GPU) for h in held)
    if node is not None and node.single and whole:
        (profile,) = node.profiles
        return PodShare(MIG, profile, Fraction(profile_slices(profile) * whole), slices)
    if not units:
        # whole GPUs on a node that offers slices: `per_gpu` units each, no mode
        return PodShare(None, None, Fraction(whole * slices), slices) if whole and node else None
    units += whole * slices
    return PodShare(MIG, ", ".join(dict.fromkeys(profiles)), units, slices)


def _hami_units(resources: Mapping[str, Any], node: NodeShares) -> Fraction:
    vgpus = quantity(resources, GPU)
    percent = quantity(resources, HAMI_PERCENT)
    memory = quantity(resources, HAMI_MEMORY)
    if not vgpus and not (percent or memory or quantity(resources, HAMI_CORES)):
        return Fraction(0)
    vgpus = vgpus or 1
    if percent:
        share = Fraction(min(percent, 100))
    elif memory and node.memory_mib:
        share = min(Fraction(memory * 100, node.memory_mib), Fraction(100))
    else:  # no memory stated: HAMi gives the container the whole GPU's memory
        share = Fraction(100)
    return vgpus * share


def _held(container: Any) -> dict[str, Any]:
    """A container's extended resources: its limits, else its requests, per name."""
    if not isinstance(container, Mapping):
        return {}
    resources = container.get("resources") or {}
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    names: Iterable[str] = {*limits, *requests}
    return {n: limits.get(n, requests.get(n)) for n in names}


def _int(text: Any) -> int | None:
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def _registered(text: Any) -> int | None:
    """GPUs HAMi registered on the node: its annotation lists one device per `:`-separated
    entry (`GPU-uuid,10,15360,100,NVIDIA-Tesla T4,0,true:…`)."""
    if not isinstance(text, str):
        return None
    return len([e for e in text.split(":") if e.strip().startswith("GPU-")]) or None
