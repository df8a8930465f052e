"""A GPU pod's knobs (its containers' command and args) and its GPUs' profiling activity: what the
knob rules join, per pod (docs/knobs.md). No file the command names is read: it is the image's."""

from __future__ import annotations

from typing import Any

from gpu_audit.collectors.kubernetes.dcgm import DcgmUtilization, PodKey
from gpu_audit.core.knobs.text import read_flags
from gpu_audit.core.resource import Activity, Training, Utilization

_KNOBS = ("precision", "tf32", "batch_size", "grad_accum", "checkpointing", "workers", "compile")
_TRAINER = "per_device_train_batch_size"  # an HF Trainer command: its workers default to 0


def pod_training(raw: Any) -> Training:
    """The knobs the pod's containers state in their command and args (the first one wins)."""
    spec = (raw or {}).get("spec") or {}
    texts = []
    for container in spec.get("containers") or []:
        for key in ("command", "args"):
            value = container.get(key) if isinstance(container, dict) else None
            if isinstance(value, list):
                texts.append(" ".join(str(v) for v in value if isinstance(v, str | int | float)))
            elif isinstance(value, str):
                texts.append(value)
    text = " ".join(texts)
    found: dict[str, Any] = {}
    for knob in read_flags(text, "pod", None):
        if knob.value is not None and knob.name in _KNOBS:
            found.setdefault(knob.name, knob.value)
    if "workers" not in found and _TRAINER in text:
        found["workers"] = 0
    return Training(**found) if found else Training()


def pod_activity(
    utilization: DcgmUtilization | None, key: PodKey, measured: Utilization
) -> tuple[Activity, str | None]:
    """The pod's profiling activity, or its `DCGM_FI_DEV_GPU_UTIL` average where Prometheus has
    no profiling series for it (and a note saying so); empty without figures."""
    if utilization is None:
        return Activity(), None
    profiling = utilization.profiling.get(key) or {}
    window = measured.window_hours
    if "engine" in profiling:
        activity = Activity(
            engine_pct=profiling.get("engine"),
            tensor_pct=profiling.get("tensor"),
            dram_pct=profiling.get("dram"),
            measured_by="profiling",
            window_hours=window,
        )
        return activity, _said(activity)
    if measured.gpu_avg is None:
        return Activity(), None
    activity = Activity(engine_pct=measured.gpu_avg, measured_by="gpu-util", window_hours=window)
    return activity, (
        f"activity: DCGM_FI_DEV_GPU_UTIL {measured.gpu_avg:g}% over {window:g}h "
        "(no profiling metrics: tensor and memory activity not measured)"
    )


def _said(activity: Activity) -> str:
    parts = [f"engine {activity.engine_pct:g}%"]
    if activity.tensor_pct is not None:
        parts.append(f"tensor pipes {activity.tensor_pct:g}%")
    if activity.dram_pct is not None:
        parts.append(f"memory {activity.dram_pct:g}%")
    window = f" over {activity.window_hours:g}h" if activity.window_hours else ""
    return f"activity{window} (DCGM profiling): " + ", ".join(parts)
