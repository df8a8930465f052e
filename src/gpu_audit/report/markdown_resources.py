"""The Markdown report's "Findings by resource": one row per resource, its rules together."""

from __future__ import annotations

import os
from typing import Any

from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import Finding, ScanResult
from gpu_audit.report.markdown_text import breakable, inline, shown_path, table
from gpu_audit.report.summary import price_dates, saving_rank, saving_text, share_text, short_id
from gpu_audit.report.values import MISSING, money

ROWS = 100  # a runbook page stays readable; the CSV and JSON reports list every finding
HEADERS = ["Resource", "Where", "GPU", "Cost / month", "Saving / month", "Rules"]
# job files run nothing: a job's hourly rate and one run at its cap, never a month; its GPUs go
# beside its name, so the table fits GitHub's page (tests/report/github_width.py)
JOB_HEADERS = ["Job (GPUs)", "File", "Rate / hour · run", "Saving", "Rules"]
ACCOUNT_CHARS = 16  # an AWS account id (12) or a GCP project id as written; longer ids clipped
NBSP = "\u00a0"  # keeps `8× A100-40GB` on one line in a narrow column


def where(resource: Resource) -> str:
    """`provider account region` (words a narrow column can wrap between; an unnamed resource's
    id is in the Resource column, the full location in the CSV and JSON reports), or a job's
    file name (its folder is in the scope's Files, its findings' lines in the Rules column)."""
    if resource.kind is Kind.JOB and resource.source.path:
        return os.path.basename(shown_path(resource.source.path))
    account = resource.account
    if account and len(account) > ACCOUNT_CHARS:  # an Azure subscription GUID: ~300 px unbroken
        account = account[: ACCOUNT_CHARS - 1] + "…"
    return " ".join(v for v in (resource.provider, account, resource.region) if v)


def gpu(resource: Resource) -> str:
    """A resource's GPUs as a cell (`8× A100-80GB`, its share when shared), `–` without a model;
    values escaped."""
    model = resource.gpu.model
    if model is None:
        return "–"
    count = resource.gpu.count if resource.gpu.count is not None else "?"
    shared = share_text(resource.share)
    held = f" ({inline(shared, 40)})" if shared else ""
    return f"{count}×{NBSP}{inline(model, 40)}{held}"


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


def _saving(top: Finding | None, monthly: bool = False) -> str:
    """The resource's saving: its open finding that saves the most, in that finding's unit
    (`monthly`: the column's heading says `/ month`, so the cell does not)."""
    text = saving_text(top, short=True, fmt="markdown") if top is not None else None
    if text and monthly:
        text = text.removesuffix("/month")
    return text or MISSING["markdown"]


def _ranked(findings: tuple[Finding, ...]) -> list[list[Any]]:
    """Per resource, in one pass: [not open, its saving's rank, -cost, first seen, the open
    finding that saves the most (savings on one resource do not add up), its findings]; sorted,
    so resources with open findings and the largest savings come first (a month before a run
    before a GPU-hour: amounts of different units are never compared)."""
    entries: dict[int, list[Any]] = {}
    unpriced = (3, 0.0)  # saving_rank of an unpriced finding
    for finding in findings:
        entry = entries.get(id(finding.resource))
        if entry is None:
            cost = finding.resource.monthly_cost_usd or 0.0
            entry = entries[id(finding.resource)] = [True, unpriced, -cost, len(entries), None, []]
        entry[5].append(finding)
        if not finding.is_open:
            continue
        entry[0] = False
        if finding.saving_usd:
            rank = saving_rank(finding)
            if entry[4] is None or rank < entry[1]:
                entry[1], entry[4] = rank, finding
    return sorted(entries.values(), key=lambda entry: entry[:4])


def _largest(findings: tuple[Finding, ...], best: list[Finding]) -> list[list[Any]]:
    """What `_ranked` puts first, when at least `ROWS` resources have a monthly saving: those
    with the largest (`best` is sorted by it), without a pass per finding that builds an entry
    for every resource."""
    head = best[:ROWS]
    chosen: dict[int, list[Finding]] = {id(f.resource): [] for f in head}
    for finding in findings:
        mine = chosen.get(id(finding.resource))
        if mine is not None:
            mine.append(finding)
    entries: list[list[Any]] = [
        [False, saving_rank(f), -(f.resource.monthly_cost_usd or 0.0), order, f]
        for order, f in enumerate(head)
    ]
    entries.sort(key=lambda entry: entry[:4])
    return [[*entry, chosen[id(entry[4].resource)]] for entry in entries]


def findings_by_resource(result: ScanResult, best: list[Finding]) -> list[str]:
    """`best`: per resource, the open finding with the largest monthly saving, largest first."""
    lines = ["## Findings by resource"]
    if not result.findings:
        return [*lines, "", "No findings."]
    if len(best) >= ROWS:  # a large inventory: the rows shown all have a monthly saving
        ranked = _largest(result.findings, best)
        listed = len({id(f.resource) for f in result.findings})
    else:
        ranked = _ranked(result.findings)
        listed = len(ranked)
    lines += [
        "",
        "Each resource once, largest saving first. Its saving is its open finding that saves the "
        "most (savings on one resource do not add up); Rules lists every rule it breaks, that "
        "finding's first.",
        "",
    ]
    rows = []
    jobs = result.scope.command == "check"
    for *_, top, findings in ranked[:ROWS]:
        resource = findings[0].resource
        rules = sorted(  # the finding whose saving is shown first
            findings, key=lambda f: (f is not top, not f.is_open, -f.severity, f.rule_id)
        )
        # a long rule id (`reserved-capacity-unused`) may wrap at its hyphens: money to the cent
        # left no room for a 211 px word in the last column
        rules_text = ", ".join(breakable(inline(_rule(f), 120), 16) for f in rules)
        if jobs:
            name = resource.name or f"document {resource.source.document + 1}"
            hourly = money(resource.price.hourly_usd, "markdown")
            costs = f"{hourly} / h · {money(resource.estimate.run_usd, 'markdown')}"
            rows.append(
                [
                    f"{breakable(inline(name, 60))} ({gpu(resource)})",
                    breakable(inline(where(resource), 64)),
                    costs,
                    _saving(top),
                    rules_text,
                ]
            )
            continue
        rows.append(
            [
                inline(resource.name or short_id(resource), 60),
                inline(where(resource), 64),
                gpu(resource),
                money(resource.monthly_cost_usd, "markdown"),
                _saving(top, monthly=True),
                rules_text,
            ]
        )
    if jobs:
        lines += table(JOB_HEADERS, rows, align="llrrl")
    else:
        lines += table(HEADERS, rows, align="lllrrl")
    priced = price_dates([f for f in result.findings if f.is_open], result.generated_at)
    if priced:  # every dollar figure above, with the date and source of its price
        lines += ["", "Prices behind these figures:", ""]
        lines += [f"- {inline(phrase, 80)}: {inline(source, 300)}" for phrase, source in priced]
    if listed > ROWS:
        lines += [
            "",
            f"… and {listed - ROWS} more resources with findings and smaller savings: the "
            "CSV and JSON reports list every finding.",
        ]
    return lines
