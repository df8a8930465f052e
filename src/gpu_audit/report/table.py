"""Terminal table: findings by severity, with monthly cost and savings, and a summary line."""

from __future__ import annotations

from gpu_audit.model import Finding, ScanResult, Severity
from gpu_audit.report.summary import Summary, summarize


def render(result: ScanResult) -> str:
    from tabulate import tabulate  # imported here: ~0.1 s that `check -q` need not pay

    lines: list[str] = []
    open_findings = [f for f in result.findings if f.is_open]
    for severity in sorted(Severity, reverse=True):
        group = [f for f in open_findings if f.severity is severity]
        if not group:
            continue
        lines.append(f"{severity.label.upper()} ({len(group)})")
        rows = [_row(f) for f in sorted(group, key=_order)]
        headers = ["rule", "resource", "type", "GPU", "$/month", "saving/month", "found"]
        lines.append(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))
        lines.append("")
    for gap in result.coverage_gaps:
        lines.append(f"coverage gap: {gap.provider} {gap.scope}: {gap.error}: {gap.message}")
    for skipped in result.input_errors:
        lines.append(f"error: {skipped.reason}")
    lines.append(summary_line(summarize(result)))
    return "\n".join(lines) + "\n"


def _order(finding: Finding) -> tuple[float, str]:
    return (-(finding.monthly_savings_usd or 0.0), finding.resource.location)


def _row(finding: Finding) -> list[str]:
    resource = finding.resource
    gpu = resource.gpu
    gpus = f"{gpu.count or '?'}× {gpu.model}" if gpu.model else "-"
    location = (
        resource.location
        if resource.kind.value == "instance"
        else (f"{resource.source.path}:{finding.line}")
    )
    return [
        finding.rule_id,
        _clip(location, 60),
        resource.instance_type or "-",
        gpus,
        _money(resource.monthly_cost_usd),
        _money(finding.monthly_savings_usd),
        _clip(finding.actual, 60),
    ]


def _clip(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.0f}"


def summary_line(summary: Summary) -> str:
    severities = ", ".join(f"{n} {s}" for s, n in summary.by_severity.items() if n)
    parts = [
        f"{summary.findings_open} findings" + (f" ({severities})" if severities else ""),
        f"{summary.resources} resources",
        f"GPU spend ${summary.monthly_cost_usd:,.0f}/month",
        f"savings ${summary.monthly_savings_usd:,.0f}/month",
    ]
    if summary.findings_waived:
        parts.append(f"{summary.findings_waived} waived")
    if summary.findings_suppressed:
        parts.append(f"{summary.findings_suppressed} suppressed")
    if summary.not_evaluated:
        parts.append(f"{summary.not_evaluated} not evaluated")
    if summary.coverage_gaps:
        parts.append(f"PARTIAL: {summary.coverage_gaps} coverage gaps")
    if summary.input_errors:
        parts.append(f"{summary.input_errors} unreadable inputs")
    return "; ".join(parts)
