"""A tuning sweep's bound from its file: the most capacity-hours it can bill, and its wall clock.

Pure arithmetic over the fields a parser read (docs/sweeps.md has the formulas and why):

- the trials bound: max trials × attempts per trial × trial hours (attempts only where each
  retry gets a fresh cap, a Katib trial's pod deadline; SageMaker's cap covers every attempt);
- the timeout bound: min(parallel trials, runs) × the sweep timeout, where the file has one:
  no more trials than the parallel ones can be billing at any moment until the timeout ends it;
- the bound is the smaller of the two that exist; a rate times it is the ceiling.
"""

from __future__ import annotations

import math

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Hpo, Limits

# A trial with no runtime cap runs to the platform's own documented one (none documented: none).
DEFAULT_TRIAL_HOURS = {"vertex": 168.0}  # Vertex AI `scheduling.timeout` unset: 7 days
DEFAULT_TRIAL_NOTE = {
    "vertex": "no `trialJobSpec.scheduling.timeout`: Vertex AI's default of 7 days per trial",
}


@record
class SweepBound:
    """What a sweep can bill, in hours of one trial's capacity (a rate × `run_hours` is its
    ceiling), and how the bound was reached."""

    trial_hours: float | None  # one trial's cap, stated or the platform's default
    trial_hours_default: bool  # the platform's default, the file states none
    runs: int | None  # max trials × attempts
    run_hours: float | None  # the bound: None when neither trials nor a timeout bound it
    binds: str | None  # `trials` or `timeout`: which bound is the smaller
    sweep_hours: float | None  # wall clock
    expected_hours: float | None  # run hours under the pruner schedule (an estimate)


def is_sweep(hpo: Hpo) -> bool:
    """A tuning sweep: the file states a trial cap, early stopping or sweep-wide settings."""
    return any(
        value is not None
        for value in (hpo.max_trials, hpo.early_stopping, hpo.parallel_trials, hpo.timeout_hours)
    )


def bound(hpo: Hpo, limits: Limits, provider: str) -> SweepBound:
    """The sweep's bound: its runs (trials × attempts) times the trial hours (a provider's default
    when the file sets none), or parallel trials × timeout, whichever binds first, with the wall
    clock and the expected hours after pruning."""
    hours, defaulted = limits.max_runtime_hours, False
    if hours is None and provider in DEFAULT_TRIAL_HOURS:
        hours, defaulted = DEFAULT_TRIAL_HOURS[provider], True
    runs = None if hpo.max_trials is None else hpo.max_trials * (hpo.attempts or 1)
    by_trials = None if runs is None or hours is None else runs * hours
    parallel, timeout = hpo.parallel_trials, hpo.timeout_hours
    by_timeout = None
    if parallel is not None and timeout is not None:
        at_once = parallel if runs is None else min(parallel, runs)
        by_timeout = at_once * timeout
    bounds = ((by_trials, "trials"), (by_timeout, "timeout"))
    known = [(value, name) for value, name in bounds if value is not None]
    run_hours, binds = min(known, key=lambda pair: pair[0]) if known else (None, None)
    return SweepBound(
        trial_hours=hours,
        trial_hours_default=defaulted,
        runs=runs,
        run_hours=None if run_hours is None else round(run_hours, 6),
        binds=binds,
        sweep_hours=_wall_clock(runs, hours, parallel, timeout),
        expected_hours=_expected(by_trials, by_timeout, hpo.pruned_share),
    )


def sweep_gpu_hours(found: SweepBound, gpus: int | None) -> float | None:
    """The sweep's GPU-hours bound: its run hours × the GPUs each trial holds (`estimate`'s
    "N GPU-hours at most", and what `check --history` records); None when either is unknown."""
    if found.run_hours is None or not gpus:
        return None
    return round(found.run_hours * gpus, 4)


def _wall_clock(
    runs: int | None, hours: float | None, parallel: int | None, timeout: float | None
) -> float | None:
    """⌈runs ÷ parallel⌉ × trial hours, at most the sweep timeout; the timeout alone otherwise."""
    wall = None
    if runs is not None and hours is not None and parallel is not None:
        wall = math.ceil(runs / parallel) * hours if runs else 0.0
    if timeout is not None:
        wall = timeout if wall is None else min(wall, timeout)
    return None if wall is None else round(wall, 6)


def _expected(
    by_trials: float | None, by_timeout: float | None, share: float | None
) -> float | None:
    """Every run for the pruned share of its cap, never past the timeout bound."""
    if share is None or by_trials is None:
        return None
    expected = by_trials * share
    if by_timeout is not None:
        expected = min(expected, by_timeout)
    return round(expected, 6)
