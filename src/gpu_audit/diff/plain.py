"""A diff as plain text (one line per changed job and per finding, for logs) and as CSV."""

from __future__ import annotations

import csv
import io

from gpu_audit.diff.cells import across, cap, capacity, delta, gpus, headline, run, summary
from gpu_audit.diff.model import Cost, DiffResult
from gpu_audit.report.csv import neutral
from gpu_audit.report.escape import terminal_safe

CSV_COLUMNS = [
    "file",
    "job",
    "change",
    "gpus_before",
    "gpus_after",
    "capacity_before",
    "capacity_after",
    "runtime_cap_hours_before",
    "runtime_cap_hours_after",
    "hourly_usd_before",
    "hourly_usd_after",
    "run_usd_before",
    "run_usd_after",
    "delta_usd",
    "delta_percent",
    "delta_hourly_usd",
    "findings_new",
    "findings_resolved",
]


def render_text(result: DiffResult) -> str:
    """`file: job: change: GPUs …; capacity …; cap …; per run … (delta)`, then each new and
    resolved finding as `location: severity rule: message [new]`, then the totals."""
    safe = terminal_safe
    lines = [safe(f"gpu-audit diff: {headline(result)}. {summary(result)}")]
    for job in result.changed:
        lines.append(
            safe(
                f"{job.file}: {job.name}: {job.change}: GPUs {across(job, gpus)}; capacity "
                f"{across(job, capacity)}; runtime cap {across(job, cap)}; per run "
                f"{across(job, run)} ({delta(job)})"
            )
        )
        lines += [safe(f"{job.file}: {job.name}: note: {note}") for note in job.notes]
        lines += [
            safe(f"{f.location}: {f.severity} {f.rule_id}: {f.message} [new]")
            for f in job.findings_new
        ]
        lines += [
            safe(f"{f.location}: {f.severity} {f.rule_id}: resolved") for f in job.findings_resolved
        ]
    if result.prices_as_of:
        lines.append(f"Prices as of {', '.join(result.prices_as_of)}; sources: --format json.")
    return "\n".join(lines) + "\n"


def render_csv(result: DiffResult) -> str:
    """One row per changed job, numbers plain (empty when unknown), text cells that a
    spreadsheet would run as a formula quoted with a leading `'`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for job in result.changed:
        before, after = job.before, job.after
        writer.writerow(
            [
                _text(job.file),
                _text(job.name),
                job.change,
                _text(_gpus(before)),
                _text(_gpus(after)),
                _text(before.capacity if before else None),
                _text(after.capacity if after else None),
                _number(before.runtime_cap_hours if before else None),
                _number(after.runtime_cap_hours if after else None),
                _number(before.hourly_usd if before else None),
                _number(after.hourly_usd if after else None),
                _number(before.run_usd if before else None),
                _number(after.run_usd if after else None),
                _number(job.delta_usd),
                _number(job.delta_percent),
                _number(job.delta_hourly_usd),
                _text("; ".join(f"{f.rule_id} ({f.location})" for f in job.findings_new)),
                _text("; ".join(f"{f.rule_id} ({f.location})" for f in job.findings_resolved)),
            ]
        )
    return buffer.getvalue()


def _gpus(cost: Cost | None) -> str | None:
    return None if cost is None else gpus(cost)


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _text(value: str | None) -> str:
    """A text cell as every CSV writes one (`report.csv.neutral`): controls and bidi shown
    escaped, a formula start quoted with a leading `'`."""
    return neutral(value) if value else ""
