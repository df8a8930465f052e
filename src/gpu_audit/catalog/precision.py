"""What a GPU runs: its CUDA compute capability, the training precisions it supports and whether it
has tensor cores; the hardware facts the knob rules compare a job's precision with."""

from __future__ import annotations

from gpu_audit.catalog.gpus import canonical_gpu

# CUDA compute capability by GPU class, from NVIDIA's CUDA GPUs table
# (developer.nvidia.com/cuda-gpus, read 2026-12-04). Accelerators off the NVIDIA ladder (TPU,
# Trainium, Gaudi, AMD) are absent: their precisions are not judged.
# a table: one GPU generation a line, as ruff format would not keep it
# fmt: off
COMPUTE_CAPABILITY: dict[str, float] = {
    "K80": 3.7, "M60": 5.2, "P4": 6.1, "P100": 6.0,
    "V100": 7.0, "V100-32GB": 7.0, "T4": 7.5, "T4G": 7.5,
    "A100-40GB": 8.0, "A100-80GB": 8.0, "A10G": 8.6, "A10": 8.6, "A40": 8.6,
    "L4": 8.9, "L40": 8.9, "L40S": 8.9, "RTX-4090": 8.9,
    "H100": 9.0, "H100-NVL": 9.0, "H200": 9.0, "GH200": 9.0,
    "B200": 10.0, "GB200": 10.0, "B300": 10.3, "RTX-PRO-6000": 12.0,
}
# fmt: on

# The compute capability from which a precision runs (docs/knobs.md):
# fp16 with tensor cores from Volta (7.0) and as CUDA arithmetic from Pascal (6.0); bf16 and TF32
# from Ampere (8.0: HF Trainer refuses `--bf16` and `--tf32` below it); fp8 tensor cores from Ada
# (8.9) and Hopper (9.0), what Transformer Engine requires.
SINCE: dict[str, float] = {
    "fp64": 0.0,
    "fp32": 0.0,
    "fp16": 6.0,
    "tf32": 8.0,
    "bf16": 8.0,
    "fp8": 8.9,
}
TENSOR_CORES_SINCE = 7.0


def compute_capability(model: str | None) -> float | None:
    """The CUDA compute capability of a GPU model (8.0 for A100), None for a model the catalog does
    not know."""
    name = canonical_gpu(model)
    return COMPUTE_CAPABILITY.get(name) if name else None


def precisions(model: str | None) -> tuple[str, ...] | None:
    """The precisions a GPU class runs, in `SINCE` order; None for a GPU whose capability is
    not in the table."""
    capability = compute_capability(model)
    if capability is None:
        return None
    return tuple(name for name, since in SINCE.items() if capability >= since)


def tensor_cores(model: str | None) -> bool | None:
    """True when the GPU has tensor cores (compute capability 7.0 or later), None for an unknown
    model."""
    capability = compute_capability(model)
    return None if capability is None else capability >= TENSOR_CORES_SINCE
