"""The cell texts of a diff that the terminal table and the Markdown comment share."""

from __future__ import annotations

from collections.abc import Callable

from gpu_audit.diff.git import abbreviated
from gpu_audit.diff.model import Cost, DiffResult, JobChange, Total
from gpu_audit.report.values import MINUS, money


def gpus(cost: Cost) -> str:
    """A side's GPUs as `A100 × 8`, saying when the model or the count is not stated."""
    if cost.gpu_count is None:
        return "unknown GPUs"
    if cost.gpu_model is None:  # the file states how many, not which (Hydra, Determined)
        return f"{cost.gpu_count} GPUs, model unstated"
    return f"{cost.gpu_model} × {cost.gpu_count}"


def gpu_hours(value: float | None) -> str:
    """GPU-hours to six significant digits (whole hours from a million), with the unit."""
    return f"{value:,.6g} GPU-h" if value is not None and value < 1e6 else f"{value:,.0f} GPU-h"


def capacity(cost: Cost) -> str:
    """The capacity as stated, with the capacity it was priced as when they differ."""
    stated = cost.capacity or "unstated"
    return stated if stated == cost.priced_as else f"{stated} (priced {cost.priced_as})"


def cap(cost: Cost) -> str:
    """The runtime cap (`12 h`, `none`); for a sweep, its trial cap times the cap per trial."""
    hours = "none" if cost.runtime_cap_hours is None else f"{cost.runtime_cap_hours:g} h"
    if not cost.sweep:
        return hours
    trials = "no trial cap" if cost.trials is None else f"{cost.trials} trials"
    return f"{trials} × {hours} per trial"


def run(cost: Cost) -> str:
    """One run: dollars; a priced job with no cap shows its hourly rate and says it is unbounded."""
    if cost.hourly_usd is None:  # what the file states of its size, then: its GPU-hours
        return "unpriced" if cost.gpu_hours is None else gpu_hours(cost.gpu_hours)
    if cost.run_usd is None:
        return f"{money(cost.hourly_usd, per='/h')}, unbounded"
    if cost.sweep:
        return f"{money(cost.run_usd)} sweep ceiling"
    return money(cost.run_usd)


def across(job: JobChange, show: Callable[[Cost], str]) -> str:
    """`before → after` where they differ; one value where they agree or one side is absent."""
    values = [show(c) for c in (job.before, job.after) if c is not None]
    return values[0] if len(set(values)) == 1 else " → ".join(values)


_SUFFIXES = (" sweep ceiling", ", unbounded", " GPU-h")


def across_run(job: JobChange) -> str:
    """`across(job, run)` with a suffix both sides share said once: `$11,750.40 → $2,252.16
    sweep ceiling`, `$5.09/h → $5.77/h, unbounded` (so the cost column fits 80 columns)."""
    values = [run(c) for c in (job.before, job.after) if c is not None]
    if len(set(values)) == 1:
        return values[0]
    for suffix in _SUFFIXES:
        if all(v.endswith(suffix) for v in values):
            return " → ".join(v.removesuffix(suffix) for v in values) + suffix
    return " → ".join(values)


def delta(job: JobChange) -> str:
    """A job's change per run in dollars with its percentage; in GPU-hours when unpriced; in dollars
    an hour when unbounded."""
    if job.delta_usd is not None:
        percent = "" if job.delta_percent is None else f" ({_percent(job.delta_percent)})"
        return money(job.delta_usd, signed=True) + percent
    if job.unpriced:
        change = _gpu_hours_delta(job)
        return "unpriced" if change is None else f"{_signed_hours(change)} GPU-h, unpriced"
    hourly_delta = job.delta_hourly_usd or 0.0
    return f"{money(hourly_delta, signed=True)}/h, unbounded"


def _gpu_hours_delta(job: JobChange) -> float | None:
    """How many more GPU-hours one run (a sweep: its ceiling) takes, where both sides say."""
    sides = [c.gpu_hours if c is not None else 0.0 for c in (job.before, job.after)]
    if any(value is None for value in sides):
        return None
    before, after = (float(v or 0.0) for v in sides)
    return round(after - before, 4)


def _signed_hours(value: float) -> str:
    return f"{'+' if value >= 0 else MINUS}{abs(value):,.6g}"


def unpriced_gpu_hours(result: DiffResult) -> tuple[float, float] | None:
    """Before and after GPU-hours of the changed unpriced jobs whose files state them: what a
    diff says of a change no price covers (a sweep from 480 to 1,200 GPU-hours)."""
    jobs = [j for j in result.changed if j.unpriced and _gpu_hours_delta(j) is not None]
    if not jobs:
        return None
    before = sum((j.before.gpu_hours or 0.0) if j.before else 0.0 for j in jobs)
    after = sum((j.after.gpu_hours or 0.0) if j.after else 0.0 for j in jobs)
    return round(before, 4), round(after, 4)


def _percent(value: float) -> str:
    return f"{value:+,.1f}%".replace("-", MINUS)


def headline(result: DiffResult) -> str:
    """The total delta per run, in a few words (the title of a pull-request comment)."""
    total = result.total
    if not total.changed_jobs:
        return "no change to any GPU job"
    percent = "" if total.delta_percent is None else f" ({_percent(total.delta_percent)})"
    text = f"{money(total.delta_usd, signed=True)} per run{percent}"
    if total.unbounded_hourly_delta_usd:
        text += f", {money(total.unbounded_hourly_delta_usd, signed=True)}/h with no runtime cap"
    hours = unpriced_gpu_hours(result)
    if hours is not None and hours[0] != hours[1]:
        grew = (
            f"{_signed_hours(hours[1] - hours[0])} GPU-hours per run "
            f"({hours[0]:,.6g} → {hours[1]:,.6g} GPU-hours, unpriced)"
        )
        priced = total.changed_jobs > total.unpriced_jobs
        return f"{text}, {grew}" if priced else grew
    return text


def summary(result: DiffResult) -> str:
    """The totals in a sentence: before and after, jobs changed, what no per-run sum holds."""
    total = result.total
    base, head = abbreviated(result.base), abbreviated(result.head)
    head = head if result.head_commit else f"the {head}"
    if not total.changed_jobs:
        return f"No GPU job changed between {base} and {head}."
    noun = "job" if total.changed_jobs == 1 else "jobs"
    text = (
        f"{total.changed_jobs} changed GPU {noun} between {base} and {head}: "
        f"{money(total.before_run_usd)} → {money(total.after_run_usd)} per run"
    )
    return text + "".join(f"; {part}" for part in left_out(total)) + "."


def left_out(total: Total) -> list[str]:
    """The total's caveats: the hourly change on jobs with no runtime cap and the unpriced jobs it
    leaves out."""
    parts = []
    if total.unbounded_jobs:
        parts.append(
            f"{money(total.unbounded_hourly_delta_usd, signed=True)}/h on "
            f"{total.unbounded_jobs} job(s) with no runtime cap (unbounded, not in the per-run "
            "total)"
        )
    if total.unpriced_jobs:
        parts.append(f"{total.unpriced_jobs} unpriced job(s) not in the total")
    return parts
