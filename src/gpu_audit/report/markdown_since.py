"""Markdown: "Since the last audit (DATE)": counts, the oldest persisting findings, what was
resolved and removed, and the trend (a Mermaid `xychart-beta` plus a plain table)."""

from __future__ import annotations

import json

from gpu_audit.core.comparison import Change, Comparison, Resolved, TrendPoint
from gpu_audit.core.results import Finding, ScanResult
from gpu_audit.report.markdown_text import breakable, inline, shown_source, table
from gpu_audit.report.summary import saving_text, short_id
from gpu_audit.report.values import MISSING, money, percent

TOP = 10


def since_section(result: ScanResult) -> list[str]:
    """The "Since the last audit" section: counts then and now, persisting and resolved findings (a
    first audit says so); no lines without a history."""
    since = result.since
    if since is None:
        return []
    if since.previous_at is None:
        return [
            "### First recorded audit",
            "",
            f"No earlier audit of this scope in {inline(since.source)}: every finding is new. "
            "The next audit will say what changed since this one.",
        ]
    lines = [f"### Since the last audit ({since.previous_at:%Y-%m-%d})", ""]
    if result.scope.command == "check":  # job files run nothing: findings, never a month
        return lines + _job_changes(result) + knob_change_lines(since)
    lines += table(["Measure", "Then", "Now"], _measures(since), align="lrr")
    lines += _persisting(result)
    lines += _resolved(since)
    lines += _removed(since)
    lines += knob_change_lines(since)
    lines += _trend(since.trend)
    return lines


def knob_change_lines(since: Comparison) -> list[str]:
    """Knobs changed since the last audit, beside the GPUs' busy % then and now."""
    if not since.knob_changes:
        return []

    def pct(value: float | None) -> str:
        return percent(value, "markdown", places=None, scaled=False)

    rows = [
        [
            breakable(inline(c.location, 120)),
            inline(c.knob),
            inline(c.was or "not stated"),
            inline(c.now or "not stated"),
            pct(c.busy_before),
            pct(c.busy_after),
        ]
        for c in since.knob_changes
    ]
    return [
        "",
        "Knobs changed since the last audit, beside the GPUs' busy share (DCGM engine activity, "
        "else utilization) then and now:",
        "",
        *table(["Resource", "Knob", "Then", "Now", "Busy then", "Busy now"], rows, "llllrr"),
    ]


def _job_changes(result: ScanResult) -> list[str]:
    """A check compared with a saved check: the findings' counts, the oldest persisting ones
    with their saving in its unit (per run, per GPU-hour), and what was resolved. No spend, no
    monthly figure and no trend: files run nothing."""
    since = result.since
    assert since is not None
    counts = [
        ["New findings", str(since.new)],
        ["Persisting findings", str(since.persisting)],
        ["Resolved findings", str(len(since.resolved))],
    ]
    lines = table(["Findings", "Now"], counts, align="lr")
    lines += _persisting(result, jobs=True)
    if since.resolved:
        more = f" (the {TOP} first of {len(since.resolved)})" if len(since.resolved) > TOP else ""
        body = [
            [_where(r.location), inline(r.rule_id), f"{r.first_seen:%Y\u2011%m\u2011%d}"]
            for r in since.resolved[:TOP]
        ]
        headers = ["Resource", "Rule", "First seen"]
        lines += ["", f"**Resolved since the last audit**{more}", "", *table(headers, body)]
    return lines


def _measures(since: Comparison) -> list[list[str]]:
    now = since.trend[-1]
    removed_cost = sum(r.monthly_cost_usd or 0.0 for r in since.removed)
    return [
        [
            "GPU spend / month",
            money(since.previous_cost_usd, "markdown"),
            money(now.monthly_cost_usd, "markdown"),
        ],
        [
            "Savings found / month",
            money(since.previous_savings_usd, "markdown"),
            money(now.monthly_savings_usd, "markdown"),
        ],
        [
            "Savings realised / month (resolved findings)",
            "",
            money(since.savings_realised_usd, "markdown"),
        ],
        ["New findings", "", str(since.new)],
        ["Persisting findings", "", str(since.persisting)],
        ["Resolved findings", "", str(len(since.resolved))],
        [
            "Resources removed (their spend / month)",
            "",
            f"{len(since.removed)} ({money(removed_cost, 'markdown')})",
        ],
    ]


def _persisting(result: ScanResult, jobs: bool = False) -> list[str]:
    assert result.since is not None
    rows = [
        (change, finding)
        for finding, change in zip(result.findings, result.since.changes, strict=True)
        if change.change is Change.PERSISTING and finding.is_open
    ]
    if not rows:
        return []
    rows.sort(key=lambda item: (item[0].first_seen, -item[1].severity, item[1].resource.location))
    body = [
        [
            inline(f.resource.name or short_id(f.resource), 60),
            inline(f.rule_id),
            f.severity.label,
            f"open for {c.audits_open} audits since {c.first_seen:%Y-%m-%d}",
            _job_saving(f) if jobs else money(f.monthly_savings_usd, "markdown"),
        ]
        for c, f in rows[:TOP]
    ]
    more = f" (the {TOP} oldest of {len(rows)})" if len(rows) > TOP else ""
    headers = ["Resource", "Rule", "Severity", "Open", "Saving" if jobs else "Saving / month"]
    return ["", f"**Oldest persisting findings**{more}", "", *table(headers, body, align="llllr")]


def _job_saving(finding: Finding) -> str:
    """A job finding's saving in its unit (`$259.29/run`, `$4.2558/GPU-h`), or `–`."""
    return saving_text(finding, short=True, fmt="markdown") or MISSING["markdown"]


def _counted(resolved: tuple[Resolved, ...]) -> list[float | None]:
    """Each resolved finding's part of savings realised: per resource its largest saving, once
    (on its first such finding); the resource's other findings count nothing."""
    largest: dict[tuple[str, str], Resolved] = {}
    for item in resolved:
        if item.gone_with_resource:
            continue
        key = (item.resource_id, item.location)
        held = largest.get(key)
        if held is None or (item.monthly_savings_usd or 0.0) > (held.monthly_savings_usd or 0.0):
            largest[key] = item
    counted = {id(item) for item in largest.values()}
    return [
        None
        if r.gone_with_resource
        else r.monthly_savings_usd
        if id(r) in counted or r.monthly_savings_usd is None
        else 0.0
        for r in resolved
    ]


def _resolved(since: Comparison) -> list[str]:
    if not since.resolved:
        return []
    counted = _counted(since.resolved)
    body = [
        [
            _where(r.location),
            inline(r.rule_id),
            f"{r.first_seen:%Y\u2011%m\u2011%d}",  # non-breaking hyphens: the date never wraps
            money(r.monthly_savings_usd, "markdown"),
            "gone with its resource" if r.gone_with_resource else money(part, "markdown"),
        ]
        for r, part in zip(since.resolved[:TOP], counted, strict=False)
    ]
    more = f" (the {TOP} largest of {len(since.resolved)})" if len(since.resolved) > TOP else ""
    headers = ["Resource", "Rule", "First seen", "Saving / month", "Counted"]
    note = (
        "_Counted: a resource's saving counts once, under its largest resolved finding; the "
        f"column adds up to savings realised ({money(since.savings_realised_usd, 'markdown')} / "
        "month). A finding gone with its resource (an instance that ended) is no saving realised._"
    )
    return [
        "",
        f"**Resolved since the last audit**{more}",
        "",
        *table(headers, body, align="lllrr"),
        "",
        note,
    ]


def _removed(since: Comparison) -> list[str]:
    if not since.removed:
        return []
    body = [
        [_where(r.location), money(r.monthly_cost_usd, "markdown")] for r in since.removed[:TOP]
    ]
    more = f" (the {TOP} costliest of {len(since.removed)})" if len(since.removed) > TOP else ""
    headers = ["Resource", "Spend / month then"]
    return [
        "",
        f"**Resources gone since the last audit**{more}",
        "",
        *table(headers, body, align="lr"),
    ]


def _where(location: str, limit: int = 64) -> str:
    """A stored location, its end kept if long: `path:line` as given, `provider/account/region/id`
    as words a narrow column can wrap between (`aws 111122223333 us-east-1 i-0a1b`)."""
    text = shown_source(location)
    _, colon, line = text.rpartition(":")
    if not (colon and line.isdigit()):
        text = text.replace("/", " ")
    return inline("…" + text[-(limit - 1) :] if len(text) > limit else text, limit)


def _trend(points: tuple[TrendPoint, ...]) -> list[str]:
    labels = ", ".join(f'"{p.generated_at:%Y-%m-%d}"' for p in points)
    top = max([p.monthly_cost_usd for p in points] + [1.0])
    # dark line (spend), mid bars (found), dark blue bars drawn over them (realised), a series
    # with an audit at $0 as a line (_series): legible on GitHub's light and dark themes;
    # Mermaid formats no tick, so the axis title carries the `$`
    palette = {"xyChart": {"plotColorPalette": "#1f2937, #94a3b8, #1d4ed8"}}
    init = json.dumps({"themeVariables": palette}, separators=(",", ": "))
    found = _series([p.monthly_savings_usd for p in points])
    realised = _series([p.savings_realised_usd for p in points])
    chart = [
        "```mermaid",
        f"%%{{init: {init}}}%%",
        "xychart-beta",
        '    title "GPU spend and savings per audit ($ per month)"',
        f"    x-axis [{labels}]",
        f'    y-axis "$ per month" 0 --> {top * 1.1:.0f}',
        f"    line [{', '.join(f'{p.monthly_cost_usd:.0f}' for p in points)}]",
        f"    {found[0]} [{found[1]}]",
        f"    {realised[0]} [{realised[1]}]",
        "```",
    ]
    over = ", drawn over the grey ones" if found[0] == realised[0] == "bar" else ""
    legend = (
        f"_Legend: dark line: GPU spend · grey {_drawn(found[0])}: savings found · blue "
        f"{_drawn(realised[0])}{over}: savings realised (none at a first audit)._"
    )
    rows = [
        [
            f"{p.generated_at:%Y-%m-%d}",
            money(p.monthly_cost_usd, "markdown"),
            money(p.monthly_savings_usd, "markdown"),
            money(p.savings_realised_usd, "markdown"),
            str(p.findings_open),
        ]
        for p in points
    ]
    headers = ["Audit", "GPU spend", "Savings found", "Savings realised", "Open findings"]
    return [
        "",
        f"**Trend over the last {len(points)} audits**, in \\$ per month:",
        "",
        legend,
        "",
        *chart,
        "",
        *table(headers, rows, align="lrrrr"),
    ]


def _series(amounts: list[float]) -> tuple[str, str]:
    """A series as bars when every audit has an amount, else as a line: Mermaid draws a bar of
    $0 as a sliver on the axis (it has no gap value), where a line's point lies on it."""
    values = [f"{amount:.0f}" for amount in amounts]
    return ("bar" if "0" not in values else "line"), ", ".join(values)


def _drawn(kind: str) -> str:
    return "bars" if kind == "bar" else "line"
