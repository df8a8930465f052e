"""The expected share of a full trial a pruned trial runs, from the schedule a sweep file states.

Successive halving (ASHA, Hyperband's brackets, Determined's `adaptive_asha`) checks trials at
rungs r, r·η, r·η², … up to the full length R, and lets 1/η of them go on at each rung. If the
trials a rung stops are spread as the schedule says, 1/ηᵏ of all trials reach rung k, so an
average trial runs

    Σₖ (rₖ − rₖ₋₁) / ηᵏ   of R   (r₋₁ = 0, the last rung R)

This is an estimate of cost, never a bound: a pruner may stop fewer trials than its schedule
allows (docs/sweeps.md says how to read it).
"""

from __future__ import annotations

from gpu_audit.jobs.values import as_number


def halving_share(minimum: object, maximum: object, eta: object) -> float | None:
    """The share of a full trial an average trial runs under successive halving from
    `minimum` to `maximum` by `eta`; None when the schedule is not stated in numbers."""
    low, high, factor = as_number(minimum), as_number(maximum), as_number(eta)
    if low is None or high is None or factor is None or not (0 < low <= high) or factor <= 1:
        return None
    rungs: list[float] = []
    rung = low
    while rung < high * (1 - 1e-9) and len(rungs) < 64:
        rungs.append(rung)
        rung *= factor
    rungs.append(high)
    run = previous = 0.0
    for index, reach in enumerate(rungs):
        run += (reach - previous) / factor**index
        previous = reach
    return round(run / high, 6)
