"""A resource's knobs as every format shows them: the training settings it states, each with
where it was read, and what its GPUs measured (docs/knobs.md)."""

from __future__ import annotations

from gpu_audit.core.knobs.names import KNOBS
from gpu_audit.core.resource import Resource


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def knob_items(resource: Resource) -> list[tuple[str, str, str | None]]:
    """(label, value, where it was read) for each knob the resource states."""
    training = resource.training
    located = training.located
    items = []
    for name, label in KNOBS:
        value = getattr(training, name)
        if value is None:
            continue
        text = _shown(value)
        if name == "model" and training.params_b:
            text += f" ({training.params_b:g}B)"
        items.append((label, text, located.get(name)))
    return items


def measured(resource: Resource) -> str | None:
    """`engine 85%, tensor 2%, memory 40% (profiling, 24h)`; None when nothing was measured."""
    activity = resource.activity
    if activity.engine_pct is None:
        return None
    parts = [f"engine {activity.engine_pct:g}%"]
    if activity.tensor_pct is not None:
        parts.append(f"tensor {activity.tensor_pct:g}%")
    if activity.dram_pct is not None:
        parts.append(f"memory {activity.dram_pct:g}%")
    window = f", {activity.window_hours:g}h" if activity.window_hours else ""
    return ", ".join(parts) + f" ({activity.measured_by or 'measured'}{window})"


def knobs_text(resource: Resource) -> str:
    """One line: `precision=bf16; batch=4; workers=0 (default)`; empty when none is stated."""
    parts = []
    for label, value, where in knob_items(resource):
        parts.append(
            f"{label}={value}" + (" (default)" if where and where.endswith("(default)") else "")
        )
    said = measured(resource)
    if said:
        parts.append(f"measured={said}")
    return "; ".join(parts)
