"""How savings and resources read in a report: savings with units, unpriced capacity, short ids."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from gpu_audit.core.resource import Kind, Resource, Share
from gpu_audit.core.results import Finding
from gpu_audit.core.savings import Summary
from gpu_audit.report.values import money


def unpriced_text(summary: Summary) -> str:
    """`2 resources, 16 GPUs (8× H200, 8× B200)`: what the spend total leaves out."""
    resources = summary.unpriced_resources
    text = f"{resources} resource{'' if resources == 1 else 's'}"
    gpus = summary.unpriced_gpu_count
    if gpus:
        models = ", ".join(f"{n}× {model}" for model, n in summary.unpriced_gpus if n)
        text += f", {gpus} GPU{'' if gpus == 1 else 's'} ({models})"
    return text


def saving_text(finding: Finding, short: bool = False, fmt: str = "text") -> str | None:
    """A finding's saving with its unit: `$15,774/month`, `$259.29 per run at the 12 h cap`,
    `$4.2558 per GPU-hour`; `short` for narrow columns (`$259.29/run`); the money as `fmt`
    writes it. None when unpriced."""
    amount, unit = finding.saving_usd, finding.saving_unit
    if amount is None or unit is None:
        return None
    usd = money(amount, fmt)
    if unit == "month":
        return f"{usd}/month"
    if unit == "gpu-hour":
        return f"{usd}/GPU-h" if short else f"{usd} per GPU-hour"
    return f"{usd}/run" if short else f"{usd} {finding.saving_per}"


def saving_rank(finding: Finding) -> tuple[int, float]:
    """Where a finding's saving ranks, smallest first, by the figure a report shows, units never
    compared with each other: per month (live capacity), then per run (a job at its runtime
    cap), then per GPU-hour (a job with no cap); unpriced last."""
    amount, unit = finding.saving_usd or 0.0, finding.saving_unit
    if amount <= 0 or unit is None:
        return (3, 0.0)
    if unit == "gpu-hour":
        return (2, -amount)
    return (0 if unit == "month" else 1, -amount)


def short_id(resource: Resource) -> str:
    """The end of a long id: an ARN's resource part, a GCP path's last two segments, a job's
    file name and document."""
    rid = resource.id
    if resource.kind is Kind.JOB and resource.source.path:  # `path#document`: the file name
        return rid.rsplit("/", 1)[-1]
    if rid.startswith("arn:"):
        rid = rid.split(":", 5)[-1]
    if rid.startswith("projects/"):
        rid = "/".join(rid.rsplit("/", 2)[-2:])
    return rid


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 finding`, `2 findings`, `0 findings` (`nouns` when the plural is not noun + s)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def _unpriced(summary: Summary) -> str:
    """What the spend leaves out: ` (not priced: 2 resources, 16 GPUs)`."""
    if not summary.unpriced_resources:
        return ""
    gpus = summary.unpriced_gpu_count
    count = f", {plural(gpus, 'GPU')}" if gpus else ""
    return f" (not priced: {plural(summary.unpriced_resources, 'resource')}{count})"


def _spend(summary: Summary) -> str:
    """`GPU spend $1.00/month (not priced: …)`; `GPU spend not priced (…)` with nothing priced."""
    if summary.resources and summary.unpriced_resources >= summary.resources:
        return "GPU spend not priced" + _unpriced(summary).replace(" (not priced: ", " (")
    return f"GPU spend {money(summary.monthly_cost_usd)}/month" + _unpriced(summary)


def _job_figures(summary: Summary) -> list[str]:
    """What job files cost and save: their hourly rate, a run where a cap is known, per run."""
    unpriced = summary.unpriced_resources
    if unpriced and unpriced >= summary.resources:  # nothing priced: no $0.00 rate to show
        rate = "GPU rate not priced"
    else:
        rate = f"GPU rate {money(summary.hourly_cost_usd)}/hour" + (
            f" (not priced: {plural(unpriced, 'job')})" if unpriced else ""
        )
    parts = [plural(summary.resources, "job"), rate]
    if summary.jobs_with_run_cost:
        capped = plural(summary.jobs_with_run_cost, "job")
        parts.append(f"{money(summary.run_cost_usd)} per run over {capped} with a runtime cap")
    hourly = hourly_savings_text(summary)
    if summary.jobs_with_run_savings:
        jobs = plural(summary.jobs_with_run_savings, "job")
        parts.append(f"savings {money(summary.run_savings_usd)} per run over {jobs}")
        parts += [hourly] if hourly else []
    elif hourly:
        parts.append(f"savings {hourly}")
    else:
        parts.append("savings per run: none priced")
    return parts


def hourly_savings_text(summary: Summary) -> str | None:
    """`$33.76/hour over 2 jobs with no runtime cap` (their savings per GPU-hour × GPUs)."""
    if not summary.jobs_with_hourly_savings:
        return None
    jobs = plural(summary.jobs_with_hourly_savings, "job")
    return f"{money(summary.hourly_savings_usd)}/hour over {jobs} with no runtime cap"


def summary_line(summary: Summary) -> str:
    """The `-q` summary line: open findings by severity, then resources, spend and savings (or a job
    check's figures); says so when nothing was scanned."""
    severities = ", ".join(f"{n} {s}" for s, n in summary.by_severity.items() if n)
    parts = [
        plural(summary.findings_open, "finding") + (f" ({severities})" if severities else ""),
    ]
    if summary.nothing_scanned:
        gaps = plural(summary.coverage_gaps, "coverage gap")
        return f"nothing was scanned: no provider could be read ({gaps})"
    if summary.jobs:
        parts += _job_figures(summary)
    else:
        parts += [
            plural(summary.resources, "resource"),
            _spend(summary),
            f"savings {money(summary.monthly_savings_usd)}/month",
        ]
    if summary.jobs_with_run_savings and not summary.jobs:  # never added to the monthly figure
        jobs = "job" if summary.jobs_with_run_savings == 1 else "jobs"
        parts.append(
            f"{money(summary.run_savings_usd)} per run over {summary.jobs_with_run_savings} {jobs}"
        )
    if summary.findings_waived:
        parts.append(f"{summary.findings_waived} waived")
    if summary.findings_suppressed:
        parts.append(f"{summary.findings_suppressed} suppressed")
    if summary.not_evaluated:
        parts.append(f"{summary.not_evaluated} not evaluated")
    if summary.coverage_gaps:
        parts.append(f"PARTIAL: {plural(summary.coverage_gaps, 'coverage gap')}")
    passed_over = summary.skipped - summary.input_errors
    if passed_over:
        parts.append(f"{plural(passed_over, 'input')} skipped (no GPU job)")
    if summary.input_errors:
        parts.append(plural(summary.input_errors, "unreadable input"))
    return "; ".join(parts)


# A price older than this when the report is made is marked beside the figure it makes (the
# `prices_max_age_days` default, docs/settings.md).
PRICE_MAX_AGE_DAYS = 90


def price_date(resource: Resource, now: datetime | None) -> str | None:
    """The date a resource's dollar figures are priced at (`price as of 2026-07-20`), marked
    when older than `PRICE_MAX_AGE_DAYS` at `now`; None when it has no dated price."""
    as_of = resource.price.as_of
    if not as_of:
        return None
    text = f"price as of {as_of}"
    try:
        day = date.fromisoformat(as_of[:10])
    except ValueError:
        return text
    if now is not None and (now.date() - day).days > PRICE_MAX_AGE_DAYS:
        text += f", older than {PRICE_MAX_AGE_DAYS} days"
    return text


def price_dates(findings: Iterable[Finding], now: datetime | None) -> list[tuple[str, str]]:
    """The distinct (date phrase, source) pairs the priced findings' figures come from."""
    seen: dict[tuple[str, str], None] = {}
    for finding in findings:
        if not finding.saving_usd:
            continue
        phrase = price_date(finding.resource, now)
        if phrase:
            seen.setdefault((phrase, finding.resource.price.source or "-"), None)
    return sorted(seen)


def share_text(share: Share) -> str | None:
    """What a shared GPU's resource holds or leaves free: `MIG 1g.10gb`, `1/4 time-slicing`,
    `HAMi 30%`; on a node, `2 of 7 free` (docs/shared-gpus.md). None for whole GPUs."""
    if share.mode is None or share.units is None or not share.per_gpu:
        return None
    if share.free is not None:  # a node: what its GPUs offer and leave free
        return f"{share.mode}, {share.free:g} of {share.units:g} free"
    if share.mode == "mig" and share.profile:
        return f"MIG {share.profile}"
    if share.mode == "hami":
        return f"HAMi {share.units:g}%"
    return f"{share.units:g}/{share.per_gpu} {share.mode}"
