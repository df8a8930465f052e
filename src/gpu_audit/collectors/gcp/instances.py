"""A Compute Engine instance payload read into model fields: GPUs, capacity, state, workload."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog import canonical_gpu, gpu_class, instance_spec
from gpu_audit.core.resource import Capacity, Gpu, State, Workload

# Machine families whose GPUs are built in (no guestAccelerators needed to have them).
GPU_FAMILIES = ("a2-", "a3-", "a4-", "a4x-", "g2-", "g4-")

STATES = {
    "RUNNING": State.RUNNING,
    "PROVISIONING": State.PENDING,
    "STAGING": State.PENDING,
    "STOPPING": State.STOPPED,
    "STOPPED": State.STOPPED,
    "TERMINATED": State.STOPPED,  # GCE's TERMINATED is a stopped VM, not a deleted one
    "SUSPENDING": State.STOPPED,
    "SUSPENDED": State.STOPPED,
}  # REPAIRING and anything new stay missing


def last_segment(url: str) -> str:
    """The last path segment of a Compute Engine URL (`zones/us-central1-a` → `us-central1-a`),
    empty for an empty URL."""
    return url.rstrip("/").rsplit("/", 1)[-1] if url else ""


def has_gpus(instance: Any) -> bool:
    """True when the instance has accelerators attached or its machine type carries GPUs (A2, A3,
    G2…)."""
    if any(a.accelerator_count for a in instance.guest_accelerators):
        return True
    machine_type = last_segment(instance.machine_type)
    return instance_spec(machine_type) is not None or machine_type.startswith(GPU_FAMILIES)


def gpu_of(instance: Any, machine_type: str | None) -> Gpu:
    """GPUs the API lists (attached or built in), else the machine type's from the catalog."""
    counts: dict[str, int] = {}
    for accelerator in instance.guest_accelerators:
        name = last_segment(accelerator.accelerator_type)
        model = canonical_gpu(name) or name
        counts[model] = counts.get(model, 0) + int(accelerator.accelerator_count)
    spec = instance_spec(machine_type)
    if counts:
        model, count = max(counts.items(), key=lambda item: item[1])
        known = gpu_class(model)
        memory = spec.gpu_memory_gib if spec and spec.gpu_model == model else None
        return Gpu(model, count, memory or (known.memory_gib if known else None))
    if spec is not None:
        return Gpu(spec.gpu_model, spec.gpu_count, spec.gpu_memory_gib)
    return Gpu()


def capacity_of(instance: Any) -> Capacity:
    """SPOT for a Spot or preemptible instance, RESERVED for a reservation-bound one, else
    ON_DEMAND."""
    scheduling = instance.scheduling
    model = scheduling.provisioning_model if "provisioning_model" in scheduling else ""
    if model == "SPOT" or scheduling.preemptible:
        return Capacity.SPOT
    if model == "RESERVATION_BOUND":
        return Capacity.RESERVED
    return Capacity.ON_DEMAND


def workload_of(label: str | None) -> Workload:
    """The workload a label names (`training`, `inference`…), UNKNOWN for none or another word."""
    try:
        return Workload((label or "").strip().lower())
    except ValueError:
        return Workload.UNKNOWN


def launched_at(instance: Any) -> datetime | None:
    """When the instance last started (else was created), in UTC; None when neither stamp reads."""
    for stamp in (instance.last_start_timestamp, instance.creation_timestamp):
        if stamp:
            try:
                parsed = datetime.fromisoformat(stamp)
            except ValueError:
                continue
            return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None
