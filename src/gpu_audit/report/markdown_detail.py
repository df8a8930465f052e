"""The Markdown report's detail sections: findings by rule, waivers, not evaluated, gaps, skips."""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Mapping
from typing import Any

from gpu_audit.core.resource import Severity
from gpu_audit.core.results import Finding, RuleInfo, ScanResult, WaiverState
from gpu_audit.core.savings import total_savings
from gpu_audit.report import not_evaluated as missing
from gpu_audit.report.markdown_text import (
    breakable,
    inline,
    prose,
    shown_path,
    shown_source,
    table,
)
from gpu_audit.report.summary import saving_rank, short_id
from gpu_audit.report.values import money

OPEN_ON = 10  # resources named per rule, largest saving first; "Findings by resource" has them all
_WAIVER_HEADINGS = {
    WaiverState.ACTIVE: "Active",
    WaiverState.EXPIRING: "Expiring within 30 days",
    WaiverState.EXPIRED: "Expired (no longer applied; their findings are open again)",
}


def findings_by_rule(result: ScanResult, best: list[Finding]) -> list[str]:
    """Per rule: counts, its counted and gross saving, the remediation, and where it is open."""
    lines = ["## Findings by rule"]
    if not result.findings:
        return [*lines, "", "No findings."]
    groups: dict[str, list[Finding]] = {}
    for finding in result.findings:
        groups.setdefault(finding.rule_id, []).append(finding)
    counted_under = {id(f.resource): f.rule_id for f in best}
    counted: dict[str, float] = {}
    for finding in best:
        counted[finding.rule_id] = counted.get(finding.rule_id, 0.0) + (
            finding.monthly_savings_usd or 0.0
        )
    rules = {rule.id: rule for rule in result.rules}
    order = sorted(groups, key=lambda r: (-groups[r][0].severity, -_open(groups[r]), r))
    for rule_id in order:
        saving = _savings(rule_id, groups[rule_id], counted_under, counted.get(rule_id, 0.0))
        section = _rule_section(rule_id, rules.get(rule_id), groups[rule_id], saving)
        lines += ["", *section]
    return lines


def _open(findings: list[Finding]) -> int:
    return sum(1 for f in findings if f.is_open)


def _rule_section(
    rule_id: str, rule: RuleInfo | None, findings: list[Finding], saving: str
) -> list[str]:
    first = findings[0]
    severity: Severity = first.severity
    opened = [f for f in findings if f.is_open]
    counts = (
        f"**Severity:** {severity.label} · **Open:** {len(opened)} · "
        f"**Waived:** {sum(1 for f in findings if f.waiver is not None)} · "
        f"**Suppressed:** {sum(1 for f in findings if f.suppressed is not None)}"
    )
    remediation = rule.remediation if rule else first.remediation
    lines = [f"### {inline(rule_id, 80)}: {inline(first.title, 160)}", "", counts]
    lines += ["", saving]
    if remediation:
        lines += ["", f"**Remediation:** {prose(remediation)}"]
    fixes = dict.fromkeys((f.resource.provider, f.fix) for f in opened if f.fix)
    if fixes:  # our own text, in the key each job format uses
        said = "; ".join(f"{inline(provider, 40)}: {prose(fix)}" for provider, fix in fixes)
        lines += ["", f"**Fix in the file:** {said}."]
    if opened:
        lines += ["", _open_on(opened)]
    suppressed = [f for f in findings if f.suppressed is not None][:OPEN_ON]
    if suppressed:
        names = "; ".join(
            f"{inline(f.resource.name or short_id(f.resource), 60)} ({inline(f.suppressed, 120)})"
            for f in suppressed
        )
        lines += ["", f"**Suppressed inline:** {names}."]
    return lines


def _savings(
    rule_id: str, findings: list[Finding], counted_under: dict[int, str], counted: float
) -> str:
    """The counted saving (the rule's slice of the chart) and, where it differs, the gross one
    (what the rule's findings would save acted on alone)."""
    opened = [f for f in findings if f.is_open]
    gross = total_savings(opened)
    text = f"**Saving:** {money(counted, 'markdown')} / month"
    elsewhere = 0  # resources whose saving is counted under another rule's finding
    per_job = False
    for finding in opened:
        if (finding.monthly_savings_usd or 0) > 0:
            elsewhere += counted_under.get(id(finding.resource)) != rule_id
        per_job = per_job or finding.saving_unit in ("run", "gpu-hour")
    if elsewhere and round(gross) != round(counted):
        resources = "resource" if elsewhere == 1 else "resources"
        text += (
            f" counted, {money(gross, 'markdown')} / month gross: on {elsewhere} {resources} "
            "another rule's finding saves more, and each resource's saving is counted once, under "
            "its largest finding."
        )
    per_run = total_savings(opened, unit="run") if per_job else 0.0  # never added to /month
    runs = (
        f"{money(per_run, 'markdown')} per run on jobs (at each job's runtime cap)"
        if per_run
        else ""
    )
    if gross:
        return text + (f" · {runs}" if runs else "")
    if runs:
        return f"**Saving:** {runs}"
    if any(f.saving_unit == "gpu-hour" and f.saving_usd for f in opened):
        return "**Saving:** per GPU-hour on jobs with no runtime cap (see *Findings by resource*)"
    return "**Saving:** none priced"


def _open_on(opened: list[Finding]) -> str:
    """The resources, largest saving first, each with what was found (said once if the same)."""
    ordered = heapq.nsmallest(OPEN_ON, opened, key=saving_rank)
    found = {f.actual for f in opened}
    same = f" ({inline(found.pop(), 80)})" if len(found) == 1 else ""
    names = [
        inline(f.resource.name or short_id(f.resource), 60)
        + ("" if same else f" ({inline(f.actual, 80)})")
        for f in ordered
    ]
    more = len(opened) - OPEN_ON
    tail = f", and {more} more (see *Findings by resource*)" if more > 0 else ""
    return f"**Open on**{same}: {('; ' if not same else ', ').join(names)}{tail}."


def waivers(result: ScanResult) -> list[str]:
    """The "Waivers" section: the policies' waivers by state (active, expiring, expired), each with
    its rule, scope, owner and expiry."""
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
                inline(w.waiver.rule.replace(",", ", ")),
                _where(w.waiver.where),
                inline(w.waiver.owner, 80),
                # non-breaking hyphens: the date never wraps beside a long Reason
                f"{w.waiver.expires:%Y\u2011%m\u2011%d}" if w.waiver.expires else "never",
                str(w.matched),
                f"{inline(w.waiver.reason, 300)} (defined at {_defined_at(w.waiver.source)})",
            ]
            for w in sorted(group, key=lambda w: (w.waiver.expires is None, w.waiver.expires))
        ]
        headers = ["Rule", "Applies to", "Owner", "Expires", "Findings", "Reason"]
        lines += table(headers, rows, align="llllrl")
    return lines


def _defined_at(source: str | None) -> str:
    """`demo-policy.yaml:7`: the file name and line (the files are in the Scope table; a long
    path would not wrap, and would push the table past GitHub's page)."""
    return inline(os.path.basename(shown_source(source)), 120) if source else "–"


def _where(where: Mapping[str, Any]) -> str:
    if not where:
        return "everything"
    parts = [
        f"{key}: {value if isinstance(value, str) else json.dumps(value, default=str)}"
        for key, value in where.items()
    ]
    return inline("; ".join(parts), 200)


def not_evaluated(result: ScanResult) -> list[str]:
    """The "Not evaluated" section: each rule check that could not judge a resource, and the field
    it lacked."""
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
        for gap in missing.grouped(result.not_evaluated, result.hints)
    ]
    return lines + table(["Rule", "Missing field", "On", "Resources", "How to fix"], rows, "lllrl")


def coverage_gaps(result: ScanResult) -> list[str]:
    """The "Coverage gaps" section: each provider scope that could not be read, with its error."""
    lines = ["## Coverage gaps"]
    if not result.coverage_gaps:
        return [*lines, "", "None: every account, project and region in scope was read."]
    rows = [
        [inline(g.provider), inline(g.where, 120), inline(g.error, 80), inline(g.message, 300)]
        for g in result.coverage_gaps
    ]
    return [*lines, "", *table(["Provider", "Scope", "Error", "Message"], rows)]


def skipped_inputs(result: ScanResult) -> list[str]:
    """The "Skipped inputs" section (unreadable files and files that are not GPU jobs); no lines
    without one."""
    if not result.skipped:
        return []
    rows = [
        [
            breakable(inline(shown_path(s.path), 120)),  # a long file name wraps, not the page
            str(s.line) if s.line else "–",
            "unreadable" if s.error else "not a GPU job",
            inline(s.reason, 300),
        ]
        for s in result.skipped
    ]
    return ["## Skipped inputs", "", *table(["Input", "Line", "Kind", "Reason"], rows)]
