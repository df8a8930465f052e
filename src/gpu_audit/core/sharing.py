"""Shared-GPU vocabulary both the Kubernetes collector and job parser read: sharing modes, MIG
profiles and compute slices, HAMi's resource names (docs/shared-gpus.md)."""

from __future__ import annotations

import re

MIG, TIME_SLICING, MPS, HAMI = "mig", "time-slicing", "mps", "hami"
# The MIG profile of an extended resource (the device plugin's "mixed" strategy).
_MIG_RESOURCE = re.compile(r"^nvidia\.com/mig-([1-9]\d*)g\.(\d+gb(?:\+me)?)$")
# HAMi's resource names (its device plugin's defaults: `resource-mem`, `resource-mem-percentage`,
# `resource-cores`).
HAMI_MEMORY = "nvidia.com/gpumem"  # MiB per vGPU
HAMI_PERCENT = "nvidia.com/gpumem-percentage"  # percent of the GPU's memory per vGPU
HAMI_CORES = "nvidia.com/gpucores"  # percent of the GPU's SMs per vGPU (a soft limit)
# Compute slices per GPU: seven on A100 and H100 (and H200, B200), four on A30 (NVIDIA MIG
# user guide, "Supported GPUs" and its profile tables).
COMPUTE_SLICES = 7
_COMPUTE_SLICES = {"A30": 4}


def compute_slices(model: str | None) -> int:
    """The compute slices a MIG-capable GPU model divides into: 4 for A30, 7 for any other."""
    return _COMPUTE_SLICES.get(model or "", COMPUTE_SLICES)


def mig_profile(resource: str) -> str | None:
    """`nvidia.com/mig-3g.40gb` → `3g.40gb`."""
    found = _MIG_RESOURCE.match(resource)
    return f"{found[1]}g.{found[2]}" if found else None


def profile_slices(profile: str) -> int:
    """`3g.40gb` → 3 compute slices."""
    return int(profile.split("g.", 1)[0])
