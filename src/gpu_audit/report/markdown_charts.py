"""The Markdown report's savings charts: Mermaid pies with a readable palette and money labels."""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal

from gpu_audit.core.results import Finding
from gpu_audit.core.savings import Summary
from gpu_audit.report.markdown_text import chart_label
from gpu_audit.report.values import money

SLICES = 6  # at most this many slices; past it the smallest are grouped as "other"
# Saturated colours that keep white percentage labels legible and stay apart from each other
# (matplotlib's tab10 hues); "other" is always the grey. Mermaid's default pie palette is pastel
# at 0.7 opacity, which made the largest slices near-white.
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
OTHER = "#7f7f7f"
TEXT = "#777777"  # title and legend: legible on GitHub's light and dark backgrounds


def _job_savings(summary: Summary) -> list[str]:
    """Job files: savings per run at each job's cap (never a month); no chart of mixed units."""
    if not summary.jobs_with_run_savings:
        return ["No open finding has a priced saving per run."]
    jobs = "job" if summary.jobs_with_run_savings == 1 else "jobs"
    return [
        f"Estimated {money(summary.run_savings_usd, 'markdown')} per run over "
        f"{summary.jobs_with_run_savings} {jobs}, at each job's runtime cap; each job's saving "
        "is counted once, under the finding that saves the most. Jobs with no runtime cap are "
        "priced per GPU-hour in *Findings by resource*."
    ]


def savings_charts(best: list[Finding], summary: Summary) -> list[str]:
    """The "Savings" section: the total, and Mermaid pies of the savings by rule and by team (each
    resource's saving counted once, under its largest finding)."""
    lines = ["## Savings", ""]
    if summary.jobs:
        return [*lines, *_job_savings(summary)]
    if not best:
        return [*lines, "No open finding has a priced saving."]
    lines.append(
        f"Estimated {money(summary.monthly_savings_usd, 'markdown')} / month. Each resource's "
        "saving is counted once, under the finding that saves the most, so the slices add up to "
        "the total."
    )
    by_rule: dict[str, float] = defaultdict(float)
    by_team: dict[str, float] = defaultdict(float)
    for finding in best:
        by_rule[finding.rule_id] += finding.monthly_savings_usd or 0.0
        team = finding.resource.tags.get("team") or "(no team tag)"
        by_team[team] += finding.monthly_savings_usd or 0.0
    lines += ["", *pie("Monthly savings by rule", by_rule)]
    lines += ["", *pie("Monthly savings by team", by_team)]
    return lines


def slices(values: dict[str, float], limit: int = SLICES) -> list[tuple[str, float]]:
    """Chart labels and values, largest first; past `limit`, the smallest are grouped into one
    `other (N)` slice, last."""
    ordered = sorted(values.items(), key=lambda item: (-item[1], item[0]))
    shown = [(chart_label(name), value) for name, value in ordered[: limit - 1]]
    rest = ordered[limit - 1 :]
    if len(rest) == 1:
        return [*shown, (chart_label(rest[0][0]), rest[0][1])]
    return [*shown, (f"other ({len(rest)})", sum(value for _, value in rest))] if rest else shown


def to_the_cent(shown: list[tuple[str, float]]) -> list[tuple[str, Decimal]]:
    """Slices to the cent (as every amount is written) that add up to the total to the cent:
    each slice rounded, and what rounding lost or gained put into the largest slice (the
    first)."""
    cents = [(label, round(value * 100)) for label, value in shown]
    if not cents:
        return []
    remainder = round(sum(value for _, value in shown) * 100) - sum(c for _, c in cents)
    label, first = cents[0]
    cents[0] = (label, first + remainder)
    return [(label, Decimal(c).scaleb(-2)) for label, c in cents]


def pie(title: str, values: dict[str, float]) -> list[str]:
    """A Mermaid pie whose labels carry the money (`vision: $90,103.25`): Mermaid's own
    `showData` prints bare numbers without `$` or thousands separators."""
    shown = slices(values)
    theme = {f"pie{i}": colour for i, colour in enumerate(PALETTE, start=1)}
    if len(values) > len(shown):
        theme[f"pie{len(shown)}"] = OTHER
    theme.update(
        pieOpacity="1",
        pieStrokeColor="#ffffff",
        pieSectionTextColor="#ffffff",
        pieTitleTextColor=TEXT,
        pieLegendTextColor=TEXT,
        pieOuterStrokeColor=TEXT,
    )
    init = json.dumps({"theme": "base", "themeVariables": theme}, separators=(",", ": "))
    body = [f'    "{label}: {money(value)}" : {value}' for label, value in to_the_cent(shown)]
    return ["```mermaid", f"%%{{init: {init}}}%%", f"pie title {title}", *body, "```"]
