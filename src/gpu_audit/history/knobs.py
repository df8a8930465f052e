"""Knob changes between two audits: a knob a resource states that changed, with the GPUs'
utilization in each (the activity DCGM measured, else the utilization average), so the next audit
shows a change beside what it did (docs/knobs.md). Both sides are full resources, as the history
stores them (`history/documents.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from gpu_audit.core.comparison import KnobChange
from gpu_audit.core.fingerprint import resource_key
from gpu_audit.core.knobs.names import KNOBS
from gpu_audit.core.resource import Resource


def busy(resource: Resource) -> float | None:
    """DCGM's engine activity where measured, else the utilization average."""
    engine = resource.activity.engine_pct
    return engine if engine is not None else resource.utilization.gpu_avg


def knob_changes(before: Sequence[Resource], after: Sequence[Resource]) -> list[KnobChange]:
    """Every knob that differs for a resource in both audits (by its stable key), in `after`'s
    order."""
    earlier = {resource_key(r): r for r in before}
    changes = []
    for resource in after:
        was = earlier.get(resource_key(resource))
        if was is None:
            continue
        for name, label in KNOBS:
            old, new = getattr(was.training, name), getattr(resource.training, name)
            if old != new:
                changes.append(
                    KnobChange(
                        resource.location, label, _text(old), _text(new), busy(was), busy(resource)
                    )
                )
    return changes


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def states_knobs(resources: Sequence[Resource]) -> bool:
    """Does any resource state a knob? Only then is the previous audit's full record read."""
    return any(r.training.located or r.training.workers is not None for r in resources)
