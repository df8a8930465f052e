"""The Markdown report's detail sections: findings by rule, waivers, not evaluated, gaps, skips."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gpu_audit.model import Finding, Kind, RuleInfo, ScanResult, Severity, WaiverState
from gpu_audit.report import not_evaluated as missing
from gpu_audit.report.markdown_text import inline, money, prose, table
from gpu_audit.report.summary import saving_text, total_savings

ROWS_PER_RULE = 50  # a runbook page stays readable; the CSV and JSON reports list every finding
_WAIVER_HEADINGS = {
    WaiverState.ACTIVE: "Active",
    WaiverState.EXPIRING: "Expiring within 30 days",
    WaiverState.EXPIRED: "Expired (no longer applied; their findings are open again)",
}


def location(finding: Finding) -> str:
    """Where to look: the offending key's line for jobs, provider/account/region/id else."""
    resource = finding.resource
    if resource.kind is Kind.JOB and resource.source.path:
        line = finding.line or resource.source.line
        return f"{resource.source.path}:{line}" if line else resource.source.path
    return resource.location


def status(finding: Finding) -> str:
    if finding.waiver is not None:
        expires = finding.waiver.expires
        until = f" until {expires:%Y-%m-%d}" if expires else ""
        return f"waived by {inline(finding.waiver.owner, 80)}{until}"
    if finding.suppressed is not None:
        return f"suppressed inline: {inline(finding.suppressed, 120)}"
    return "open"


def findings_by_rule(result: ScanResult) -> list[str]:
    lines = ["## Findings by rule"]
    if not result.findings:
        return [*lines, "", "No findings."]
    groups: dict[str, list[Finding]] = {}
    for finding in result.findings:
        groups.setdefault(finding.rule_id, []).append(finding)
    rules = {rule.id: rule for rule in result.rules}
    order = sorted(groups, key=lambda r: (-groups[r][0].severity, -_open(groups[r]), r))
    for rule_id in order:
        lines += ["", *_rule_section(rule_id, rules.get(rule_id), groups[rule_id])]
    return lines


def _open(findings: list[Finding]) -> int:
    return sum(1 for f in findings if f.is_open)


def _rule_section(rule_id: str, rule: RuleInfo | None, findings: list[Finding]) -> list[str]:
    first = findings[0]
    severity: Severity = first.severity
    opened = [f for f in findings if f.is_open]
    counts = (
        f"**Severity:** {severity.label} · **Open:** {len(opened)} · "
        f"**Waived:** {sum(1 for f in findings if f.waiver is not None)} · "
        f"**Suppressed:** {sum(1 for f in findings if f.suppressed is not None)} · "
        f"**Savings:** {money(total_savings(opened))} / month"
    )
    per_run = total_savings(opened, unit="run")
    if per_run:  # jobs: per run, never added to the monthly figure
        counts += f" · **Savings on jobs:** \\${per_run:,.2f} per run (at each job's cap)"
    remediation = rule.remediation if rule else first.remediation
    lines = [f"### {inline(rule_id, 80)}: {inline(first.title, 160)}", "", counts]
    if remediation:
        lines += ["", f"**Remediation:** {prose(remediation)}"]
    rows = [
        [
            inline(location(f), 100),
            inline(f.resource.name),
            inline(f.resource.instance_type),
            _gpu(f),
            money(f.resource.monthly_cost_usd),
            (saving_text(f, short=True) or "–").replace("$", "\\$"),
            inline(f.actual, 160),
            status(f),
        ]
        for f in sorted(findings, key=lambda f: (not f.is_open, -(f.monthly_savings_usd or 0.0)))[
            :ROWS_PER_RULE
        ]
    ]
    headers = [
        "Resource",
        "Name",
        "Type",
        "GPU",
        "Cost / month",
        "Saving",
        "Found",
        "Status",
    ]
    lines += ["", *table(headers, rows, align="llllrrll")]
    if len(findings) > ROWS_PER_RULE:
        lines += [
            "",
            f"… and {len(findings) - ROWS_PER_RULE} more findings of this rule, with smaller "
            "savings: see the CSV or JSON report.",
        ]
    return lines


def _gpu(finding: Finding) -> str:
    gpu = finding.resource.gpu
    if gpu.model is None:
        return "–"
    return f"{gpu.count if gpu.count is not None else '?'}× {inline(gpu.model, 40)}"


def waivers(result: ScanResult) -> list[str]:
    lines = ["## Waivers"]
    if not result.waivers:
        return [*lines, "", "No waivers in the policies."]
    for state, heading in _WAIVER_HEADINGS.items():
        group = [w for w in result.waivers if w.state is state]
        lines += ["", f"### {heading}", ""]
        if not group:
            lines.append("None.")
            continue
        rows = [
            [
                inline(w.waiver.rule),
                _where(w.waiver.where),
                inline(w.waiver.owner, 80),
                inline(w.waiver.reason, 300),
                f"{w.waiver.expires:%Y-%m-%d}" if w.waiver.expires else "never",
                str(w.matched),
                inline(w.waiver.source, 120),
            ]
            for w in sorted(group, key=lambda w: (w.waiver.expires is None, w.waiver.expires))
        ]
        headers = ["Rule", "Applies to", "Owner", "Reason", "Expires", "Findings", "Defined at"]
        lines += table(headers, rows, align="lllllrl")
    return lines


def _where(where: Mapping[str, Any]) -> str:
    if not where:
        return "everything"
    parts = [
        f"{key}: {value if isinstance(value, str) else json.dumps(value, default=str)}"
        for key, value in where.items()
    ]
    return inline("; ".join(parts), 200)


def not_evaluated(result: ScanResult) -> list[str]:
    lines = ["## Not evaluated"]
    if not result.not_evaluated:
        return [*lines, "", "Every rule could judge every resource it targets."]
    resources = len({id(n.resource) for n in result.not_evaluated})
    lines += [
        "",
        f"{len(result.not_evaluated)} rule checks on {resources} resources could not be judged "
        "because a field they need is missing. They are neither findings nor passes.",
        "",
    ]
    rows = [
        [
            inline(gap.rule_id),
            inline(gap.missing, 120),
            f"{gap.kind} ({inline(gap.provider, 40)})",
            str(gap.resources),
            gap.hint,  # our own Markdown, see not_evaluated.hint
        ]
        for gap in missing.grouped(result.not_evaluated)
    ]
    return lines + table(["Rule", "Missing field", "On", "Resources", "How to fix"], rows, "lllrl")


def coverage_gaps(result: ScanResult) -> list[str]:
    lines = ["## Coverage gaps"]
    if not result.coverage_gaps:
        return [*lines, "", "None: every account, project and region in scope was read."]
    rows = [
        [inline(g.provider), inline(g.scope, 120), inline(g.error, 80), inline(g.message, 300)]
        for g in result.coverage_gaps
    ]
    return [*lines, "", *table(["Provider", "Scope", "Error", "Message"], rows)]


def skipped_inputs(result: ScanResult) -> list[str]:
    if not result.skipped:
        return []
    rows = [
        [
            inline(s.path, 120),
            str(s.line) if s.line else "–",
            "unreadable" if s.error else "not a GPU job",
            inline(s.reason, 300),
        ]
        for s in result.skipped
    ]
    return ["## Skipped inputs", "", *table(["Input", "Line", "Kind", "Reason"], rows)]
