"""A diff as a terminal table or versioned JSON, and the cell texts Markdown shares too."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from gpu_audit.diff.git import abbreviated
from gpu_audit.diff.model import Cost, DiffResult, JobChange, Total
from gpu_audit.estimate.render import money
from gpu_audit.report.escape import terminal_safe

FORMATS = ("table", "json", "markdown")
JSON_VERSION = 1
TABLE_HEADERS = ["file", "job", "change", "GPUs", "capacity", "runtime cap", "per run", "delta"]


def signed(value: float) -> str:
    return f"{'+' if value >= 0 else '-'}${abs(value):,.2f}"


def hourly(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}/h"


def gpus(cost: Cost) -> str:
    if cost.gpu_model is None or cost.gpu_count is None:
        return "unknown GPUs"
    return f"{cost.gpu_model} × {cost.gpu_count}"


def capacity(cost: Cost) -> str:
    stated = cost.capacity or "unstated"
    return stated if stated == cost.priced_as else f"{stated} (priced {cost.priced_as})"


def cap(cost: Cost) -> str:
    return "none" if cost.runtime_cap_hours is None else f"{cost.runtime_cap_hours:g} h"


def run(cost: Cost) -> str:
    """One run: dollars; a priced job with no cap shows its hourly rate and says it is unbounded."""
    if cost.hourly_usd is None:
        return "unpriced"
    if cost.run_usd is None:
        return f"{hourly(cost.hourly_usd)}, unbounded"
    return money(cost.run_usd)


def across(job: JobChange, show: Callable[[Cost], str]) -> str:
    """`before → after` where they differ; one value where they agree or one side is absent."""
    values = [show(c) for c in (job.before, job.after) if c is not None]
    return values[0] if len(set(values)) == 1 else " → ".join(values)


def delta(job: JobChange) -> str:
    if job.delta_usd is not None:
        percent = "" if job.delta_percent is None else f" ({job.delta_percent:+,.1f}%)"
        return signed(job.delta_usd) + percent
    if job.unpriced:
        return "unpriced"
    hourly_delta = job.delta_hourly_usd or 0.0
    return f"{signed(hourly_delta)}/h, unbounded"


def headline(result: DiffResult) -> str:
    """The total delta per run, in a few words (the title of a pull-request comment)."""
    total = result.total
    if not total.changed_jobs:
        return "no change to any GPU job"
    percent = "" if total.delta_percent is None else f" ({total.delta_percent:+,.1f}%)"
    text = f"{signed(total.delta_usd)} per run{percent}"
    if total.unbounded_hourly_delta_usd:
        text += f", {signed(total.unbounded_hourly_delta_usd)}/h with no runtime cap"
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
    parts = []
    if total.unbounded_jobs:
        parts.append(
            f"{signed(total.unbounded_hourly_delta_usd)}/h on {total.unbounded_jobs} job(s) "
            "with no runtime cap (unbounded, not in the per-run total)"
        )
    if total.unpriced_jobs:
        parts.append(f"{total.unpriced_jobs} unpriced job(s) not in the total")
    return parts


def render(result: DiffResult, fmt: str) -> str:
    if fmt == "json":
        return render_json(result)
    if fmt == "markdown":
        from gpu_audit.diff.markdown import render_markdown

        return render_markdown(result)
    return render_table(result)


def render_table(result: DiffResult) -> str:
    from tabulate import tabulate

    safe = terminal_safe
    lines = [safe(f"gpu-audit diff: {headline(result)}. {summary(result)}")]
    changed = result.changed
    if changed:
        rows = [
            [safe(j.file), safe(j.name), j.change, safe(across(j, gpus)), safe(across(j, capacity)),
             across(j, cap), across(j, run), delta(j)]
            for j in changed
        ]  # fmt: skip
        lines += ["", tabulate(rows, headers=TABLE_HEADERS, disable_numparse=True)]
    for job in changed:
        extra = [f"  note: {n}" for n in job.notes]
        extra += [
            f"  + {f.severity} {f.rule_id}: {f.message} ({f.location})" for f in job.findings_new
        ]
        extra += [
            f"  - {f.severity} {f.rule_id}: resolved ({f.location})" for f in job.findings_resolved
        ]
        if extra:
            lines += ["", safe(f"{job.file} {job.name}:"), *map(safe, extra)]
    unchanged = len(result.jobs) - len(changed)
    if unchanged:
        lines += ["", f"{unchanged} GPU job(s) unchanged."]
    if result.prices_as_of:
        lines.append(f"Prices as of {', '.join(result.prices_as_of)}; sources: --format json.")
    return "\n".join(lines) + "\n"


def render_json(result: DiffResult) -> str:
    data: dict[str, Any] = {
        "version": JSON_VERSION,
        "kind": "diff",
        "base": {"ref": result.base, "commit": result.base_commit},
        "head": {"ref": result.head, "commit": result.head_commit},
        "jobs": [_job_json(j) for j in result.jobs],
        "total": asdict(result.total),
        "prices_as_of": list(result.prices_as_of),
        "errors": list(result.errors),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _job_json(job: JobChange) -> dict[str, Any]:
    data = asdict(job)
    for side in ("before", "after"):
        cost = getattr(job, side)
        if cost is not None:
            data[side]["unbounded"] = cost.unbounded
    data["unbounded"] = job.unbounded
    return data
