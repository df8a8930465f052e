"""What changing a knob saves an hour, on the resource's own price (docs/knobs.md): estimates,
each with its basis, never more than the resource pays."""

from __future__ import annotations

from gpu_audit.core.resource import Resource

# Mixed precision on tensor cores: a step-time speedup of at least 1.5× is taken (the low end of
# published AMP results on V100 and A100; float16 matmul peaks at 16× float32's on A100, PyTorch's
# "What Every User Should Know About Mixed Precision Training"). The same work in 1/1.5 of the
# time saves a third of the GPU-hours.
MIXED_PRECISION_SPEEDUP = 1.5
# A GPU its input pipeline keeps fed is taken to be 90% busy: the same work at that rate takes
# busy ÷ 90 of the hours, so the saving is `1 − busy ÷ 90` of them (an upper bound: a pipeline
# may not be the only thing the GPU waits for).
FED_BUSY_PCT = 90.0
KNOB_SAVINGS = ("mixed-precision", "smaller-shape", "input-pipeline")


def knob_hourly_saving(kind: str, resource: Resource) -> float | None:
    """The hourly saving of the knob change a finding asks for; None where it cannot be priced."""
    hourly = resource.price.hourly_usd
    if hourly is None:
        return None
    if kind == "mixed-precision":
        return round(hourly * (1 - 1 / MIXED_PRECISION_SPEEDUP), 5)
    if kind == "smaller-shape":
        target = resource.training.fits_hourly_usd
        return None if target is None else round(max(0.0, hourly - target), 5)
    if kind == "input-pipeline":
        busy = resource.activity.engine_pct
        if busy is None:
            return None
        return round(hourly * max(0.0, 1 - busy / FED_BUSY_PCT), 5)
    return None
