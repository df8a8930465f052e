"""Oracle Cloud's GPU shapes as the bill names them (`BM.GPU.H100.8`): the GPU and how many.

OCI's shapes are not instance types of the catalog; a FOCUS row of OCI names its shape in the
description. Source: OCI documentation, "Compute Shapes" (GPU shapes: bare metal and VM), read
2026-12; the shape's last number is its GPU count.
"""

from __future__ import annotations

# shape (lower-case) → (GPU model as the catalog spells it, GPUs)
GPU_SHAPES: dict[str, tuple[str, int]] = {
    "vm.gpu2.1": ("P100", 1),
    "bm.gpu2.2": ("P100", 2),
    "vm.gpu3.1": ("V100", 1),
    "vm.gpu3.2": ("V100", 2),
    "vm.gpu3.4": ("V100", 4),
    "bm.gpu3.8": ("V100", 8),
    "bm.gpu4.8": ("A100-40GB", 8),
    "bm.gpu.a100-v2.8": ("A100-80GB", 8),
    "vm.gpu.a10.1": ("A10", 1),
    "vm.gpu.a10.2": ("A10", 2),
    "bm.gpu.a10.4": ("A10", 4),
    "bm.gpu.l40s.4": ("L40S", 4),
    "bm.gpu.h100.8": ("H100", 8),
    "bm.gpu.h200.8": ("H200", 8),
    "bm.gpu.mi300x.8": ("MI300X", 8),
    "bm.gpu.b200.8": ("B200", 8),
    "bm.gpu.gb200.4": ("GB200", 4),
}


def gpu_types() -> list[tuple[str, str, str, int]]:
    """The shapes as the billing query's catalog rows (cloud, type, GPU model, GPUs)."""
    return [("oci", shape, model, count) for shape, (model, count) in GPU_SHAPES.items()]
