"""The Markdown report's "Findings by resource": one row per resource, its rules together."""

from __future__ import annotations

from gpu_audit.model import Finding, Kind, Resource, ScanResult
from gpu_audit.report.markdown_text import inline, money, shown_path, table
from gpu_audit.report.summary import saving_text, short_id

ROWS = 100  # a runbook page stays readable; the CSV and JSON reports list every finding
HEADERS = ["Resource", "Where", "GPU", "Cost / month", "Saving", "Rules"]
NBSP = "\u00a0"  # keeps `8× A100-40GB` on one line in a narrow column


def where(resource: Resource) -> str:
    """`provider/account/region/id` (the id left out when it is the name), or a job's file (its
    findings' lines are in the Rules column); the full location is in the CSV and JSON reports."""
    if resource.kind is Kind.JOB and resource.source.path:
        return shown_path(resource.source.path)
    parts = [resource.provider, resource.account or "–", resource.region or "–"]
    rid = short_id(resource)
    name = resource.name
    if name and rid != name and not rid.endswith("/" + name):  # no name: the id is the name
        parts.append(rid)
    return "/".join(parts)


def gpu(resource: Resource) -> str:
    model = resource.gpu.model
    if model is None:
        return "–"
    count = resource.gpu.count if resource.gpu.count is not None else "?"
    return f"{count}×{NBSP}{inline(model, 40)}"


def _rule(finding: Finding) -> str:
    """`gpu-class-cap`, with the offending key's line on a job and the status if not open."""
    notes = []
    if finding.resource.kind is Kind.JOB and finding.line:
        notes.append(f"line {finding.line}")
    if finding.waiver is not None:
        notes.append("waived")
    elif finding.suppressed is not None:
        notes.append("suppressed")
    return finding.rule_id + (f" ({', '.join(notes)})" if notes else "")


def _saving(findings: list[Finding]) -> tuple[float, str]:
    """The resource's saving: its open finding that saves the most (savings do not add up on one
    resource), in that finding's unit; the sort key is the monthly figure."""
    priced = [f for f in findings if f.is_open and f.saving_usd]
    if not priced:
        return 0.0, "–"
    top = max(priced, key=lambda f: (f.monthly_savings_usd or 0.0, f.saving_usd or 0.0))
    text = saving_text(top, short=True) or "–"
    return top.monthly_savings_usd or 0.0, text.replace("$", "\\$")


def findings_by_resource(result: ScanResult) -> list[str]:
    lines = ["## Findings by resource"]
    groups: dict[int, list[Finding]] = {}
    for finding in result.findings:
        groups.setdefault(id(finding.resource), []).append(finding)
    if not groups:
        return [*lines, "", "No findings."]
    ranked = []
    for findings in groups.values():
        monthly, shown = _saving(findings)
        opened = any(f.is_open for f in findings)
        cost = findings[0].resource.monthly_cost_usd or 0.0
        ranked.append((not opened, -monthly, -cost, findings[0].resource.location, shown, findings))
    ranked.sort(key=lambda item: item[:4])
    lines += [
        "",
        "Each resource once, largest saving first. Its saving is its open finding that saves the "
        "most (savings on one resource do not add up); Rules lists every rule it breaks.",
        "",
    ]
    rows = []
    for *_, shown, findings in ranked[:ROWS]:
        resource = findings[0].resource
        rules = sorted(findings, key=lambda f: (not f.is_open, -f.severity, f.rule_id))
        rows.append(
            [
                inline(resource.name or short_id(resource), 60),
                inline(where(resource), 64),
                gpu(resource),
                money(resource.monthly_cost_usd),
                shown,
                inline(", ".join(_rule(f) for f in rules), 300),
            ]
        )
    lines += table(HEADERS, rows, align="lllrrl")
    if len(ranked) > ROWS:
        lines += [
            "",
            f"… and {len(ranked) - ROWS} more resources with findings and smaller savings: the "
            "CSV and JSON reports list every finding.",
        ]
    return lines
