"""How savings and resources read in a report: savings with units, unpriced capacity, short ids."""

from __future__ import annotations

from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import Finding
from gpu_audit.core.savings import Summary


def unpriced_text(summary: Summary) -> str:
    """`2 resources, 16 GPUs (8× H200, 8× B200)`: what the spend total leaves out."""
    resources = summary.unpriced_resources
    text = f"{resources} resource{'' if resources == 1 else 's'}"
    gpus = summary.unpriced_gpu_count
    if gpus:
        models = ", ".join(f"{n}× {model}" for model, n in summary.unpriced_gpus if n)
        text += f", {gpus} GPU{'' if gpus == 1 else 's'} ({models})"
    return text


def saving_text(finding: Finding, short: bool = False) -> str | None:
    """A finding's saving with its unit: `$15,774/month`, `$259.29 per run at the 12 h cap`,
    `$4.2558 per GPU-hour`; `short` for narrow columns (`$259.29/run`). None when unpriced."""
    amount, unit = finding.saving_usd, finding.saving_unit
    if amount is None or unit is None:
        return None
    if unit == "month":
        return f"${amount:,.0f}/month"
    if unit == "gpu-hour":
        figure = f"${amount:,.4f}".rstrip("0").rstrip(".")
        return f"{figure}/GPU-h" if short else f"{figure} per GPU-hour"
    return f"${amount:,.2f}/run" if short else f"${amount:,.2f} {finding.saving_per}"


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


def summary_line(summary: Summary) -> str:
    severities = ", ".join(f"{n} {s}" for s, n in summary.by_severity.items() if n)
    parts = [
        plural(summary.findings_open, "finding") + (f" ({severities})" if severities else ""),
        plural(summary.resources, "resource"),
        f"GPU spend ${summary.monthly_cost_usd:,.0f}/month" + _unpriced(summary),
        f"savings ${summary.monthly_savings_usd:,.0f}/month",
    ]
    if summary.jobs_with_run_savings:  # per run: never added to the monthly figure
        jobs = "job" if summary.jobs_with_run_savings == 1 else "jobs"
        parts.append(
            f"${summary.run_savings_usd:,.2f} per run over {summary.jobs_with_run_savings} {jobs}"
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
