"""Terminal table: open findings by severity with monthly cost and savings, then what was set
aside (waived, suppressed, not evaluated), coverage gaps and a summary line.

Values from the cloud or a file are stripped of control characters, so a tag value cannot move
the cursor or recolour the terminal.
"""

from __future__ import annotations

import heapq
import os
import shutil
import textwrap
from collections import Counter
from typing import TextIO

from gpu_audit.core.resource import Kind, Severity
from gpu_audit.core.results import Finding, ScanResult
from gpu_audit.core.savings import best_savings, nothing_scanned, summarize
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.markdown_reservations import totals
from gpu_audit.report.markdown_sweeps import sweeps_line
from gpu_audit.report.since import counts_line, new_findings
from gpu_audit.report.summary import (
    price_dates,
    saving_rank,
    saving_text,
    share_text,
    short_id,
    summary_line,
)
from gpu_audit.report.values import money

HEADERS = ["rule", "name", "resource", "type", "GPU", "$/month", "saving", "found"]
# A check of job files: nothing runs, so a job's cost is its hourly rate, never a month of it
JOB_HEADERS = [("$/hour" if h == "$/month" else h) for h in HEADERS]
# Narrowest widths, shrunk in this order: the name and the location first (a location keeps its
# end: an id, a job's `file:line`), what was found last; it is what is wrong.
FLEXIBLE = {"name": 12, "resource": 14, "found": 24}
# A check: the job's `file:line` (the resource column) is what a reviewer opens; it and what was
# found are kept longest, the job's name shrinks first
JOB_FLEXIBLE = {"name": 10, "found": 30, "resource": 24}  # comfortable widths: columns go first
FLOORS = {"name": 6, "resource": 14, "found": 14}  # then: the name, then the longer of the others
# When the flexible columns at their narrowest still do not fit: drop the instance type, then
# shorten `$1,234.56/month` to `$1,234.56` (header `saving/mo`; a job's savings keep their unit),
# then drop the cost, then the GPUs, then (a scan only: the name then carries the id of an
# unnamed resource) the resource. A check never drops `file:line`.
NARROWER = ("type", "/month", "cost", "GPU", "resource")
ROWS = 500  # rows per severity: a terminal shows the largest savings, the file formats all
WIDTH = 120  # in files and pipes (unless COLUMNS is set); on a terminal, the terminal's width
# ANSI SGR per severity, on a terminal only (never in files or pipes), and never with NO_COLOR
COLOURS = {"critical": "1;31", "high": "31", "medium": "33", "low": "36", "info": "2"}


def write(result: ScanResult, stream: TextIO) -> None:
    """Write the terminal table to `stream`, fitted to the terminal's width (COLUMNS, else 120
    columns in a file or pipe), in colour on a terminal unless NO_COLOR is set."""
    terminal = hasattr(stream, "isatty") and stream.isatty()
    sized = terminal or os.environ.get("COLUMNS", "").isdigit()
    width = shutil.get_terminal_size((WIDTH, 24)).columns if sized else WIDTH
    stream.write(render(result, width, colour=terminal and not os.environ.get("NO_COLOR")))


def render(result: ScanResult, width: int = WIDTH, colour: bool = False) -> str:
    """The terminal table fitted to `width`: open findings by severity (the ROWS largest savings
    each, their fixes below), what was set aside and the problems, then the comparison's counts."""
    lines: list[str] = []
    open_findings = [f for f in result.findings if f.is_open]
    new = new_findings(result)
    jobs = result.scope.command == "check"
    counted = _counted(open_findings)
    for severity in sorted(Severity, reverse=True):
        group = [f for f in open_findings if f.severity is severity]
        if not group:
            continue
        heading = f"{severity.label.upper()} ({len(group)}{_group_savings(group, counted, jobs)})"
        if colour:
            heading = f"\x1b[{COLOURS[severity.label]}m{heading}\x1b[0m"
        lines.append(heading)
        ordered = (
            sorted(group, key=_order)
            if len(group) <= ROWS
            else heapq.nsmallest(ROWS, group, key=_order)  # = sorted(...)[:ROWS], in O(n)
        )
        marked = result.since is not None  # a first column marks what is new since the last audit
        rows = [_row(f, jobs) for f in ordered]
        headers, rows = _fit(rows, width - 10 if marked else width, jobs)  # `change` + gap
        if marked:
            rows = [["new" if id(f) in new else "", *r] for f, r in zip(ordered, rows, strict=True)]
            headers = ["change", *headers]
        lines += _simple(headers, rows)
        fixes = _fixes(ordered, width)
        lines += ["", *fixes] if fixes else []  # below the table, not read as its rows
        if len(group) > ROWS:
            more = f"{len(group) - ROWS:,} more {severity.label} findings with smaller savings"
            lines.append(f"… {more} (every finding: --format text, csv or json)")
        lines.append("")
    if not open_findings and not nothing_scanned(result):  # the summary line says that, once
        lines += ["No open findings.", ""]
    elif any(map(any, counted.values())):
        lines += [COUNTED_ONCE, ""]
    lines += _set_aside(result)
    lines += _problems(result)
    if result.since is not None:
        lines.append(counts_line(result.since, result.scope.command == "check"))
    runs = sweeps_line(result)
    if runs:
        lines.append(runs)
    lines.append(summary_line(summarize(result)))
    return "\n".join(lines) + "\n"


def _fixes(findings: list[Finding], width: int) -> list[str]:
    """Under a job table, each rule's fix once per job format, in the key the file uses."""
    seen = dict.fromkeys((f.rule_id, f.resource.provider, f.fix) for f in findings if f.fix)
    lines: list[str] = []
    for rule_id, provider, fix in seen:
        text = f"fix {terminal_safe(rule_id)} ({provider}): {fix}"
        lines += textwrap.wrap(text, max(width, 40), subsequent_indent="  ", break_on_hyphens=False)
    return lines


COUNTED_ONCE = (
    "savings: a resource's saving counts once, in the group of its largest finding; "
    "the groups add up to the total"
)


def _counted(findings: list[Finding]) -> dict[str, dict[int, float]]:
    """Per unit, each resource's saving on its one finding that saves the most (by `id()`)."""
    month = {id(f): f.monthly_savings_usd or 0.0 for f in best_savings(findings)}
    run = {id(f): f.saving_usd or 0.0 for f in best_savings(findings, unit="run")}
    return {"month": month, "run": run}


def _group_savings(group: list[Finding], counted: dict[str, dict[int, float]], jobs: bool) -> str:
    """`; savings $1,234/month` for a severity group (the savings counted in it, so the groups
    add up to the total); job files: `; savings $58.20 per run` (a job's per-GPU-hour savings
    have no total to add up to)."""
    month, run = counted["month"], counted["run"]
    per_run = round(sum(run.get(id(f), 0.0) for f in group), 2)  # never added to /month
    if jobs:
        return f"; savings {money(per_run)} per run" if per_run else ""
    runs = f"; {money(per_run)} per run" if per_run else ""
    return f"; savings {money(sum(month.get(id(f), 0.0) for f in group))}/month{runs}"


def _fit(
    rows: list[list[str]], width: int, jobs: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Headers and rows that fit `width`: columns dropped or shortened (`NARROWER`) while even
    the flexible columns at their narrowest would not fit, then the flexible ones clipped."""
    headers = list(JOB_HEADERS if jobs else HEADERS)
    flexible = JOB_FLEXIBLE if jobs else FLEXIBLE

    def measure(column: int) -> int:  # a header is padded by 2, as in `_simple`
        return max(len(headers[column]) + 2, *(len(r[column]) for r in rows))

    sizes = [measure(column) for column in range(len(headers))]

    def narrowest() -> int:
        least = [min(w, flexible.get(h, w)) for h, w in zip(headers, sizes, strict=True)]
        return sum(least) + 2 * (len(headers) - 1)

    for step in NARROWER:
        if narrowest() <= width:
            break
        if jobs and step in ("/month", "resource"):
            continue
        if step == "/month":
            column = headers.index("saving")
            headers[column] = "saving/mo"
            for row in rows:
                row[column] = row[column].removesuffix("/month")
            sizes[column] = measure(column)
        else:
            column = headers.index(step) if step != "cost" else 5 - ("type" not in headers)
            del headers[column], sizes[column]
            for row in rows:
                del row[column]
    excess = sum(sizes) + 2 * (len(sizes) - 1) - width
    for name, least in flexible.items():
        if excess <= 0:
            break
        if name not in headers:
            continue
        column = headers.index(name)
        cut = min(excess, max(sizes[column] - least, 0))
        sizes[column] -= cut
        excess -= cut
    if excess > 0:  # still too wide: below the comfortable widths, to the floors
        excess = _to_floors(headers, sizes, excess)
    if excess > 0 and "name" in headers and "resource" in headers:
        # still too wide (a `change` column beside a check's at 80): the name goes, the
        # `file:line` or id says which; what is freed widens the resource back
        column = headers.index("name")
        freed = sizes[column] + 2
        del headers[column], sizes[column]
        for row in rows:
            del row[column]
        at = headers.index("resource")
        sizes[at] += max(freed - excess, 0)
        excess -= freed
    for name in flexible:
        if name not in headers:
            continue
        column = headers.index(name)
        size, tail = sizes[column], name == "resource"
        originals = [row[column] for row in rows]
        for row in rows:
            if len(row[column]) > size:  # cells are clean already (`_row`): only clip
                row[column] = clean(row[column], size, tail=tail)
        if tail:  # a location: `file:line`, a provider path
            _distinct(rows, column, originals, size)
    return headers, rows


def _distinct(rows: list[list[str]], column: int, originals: list[str], size: int) -> None:
    """Two different names never read the same once clipped (`…/train.yaml:2` for two folders):
    such cells show where they differ (`…team-a…ame.yaml:2`) and as much of their end."""
    groups: dict[str, set[str]] = {}
    for row, original in zip(rows, originals, strict=True):
        groups.setdefault(row[column], set()).add(original)
    for row, original in zip(rows, originals, strict=True):
        same = groups[row[column]]
        if len(same) < 2:
            continue
        differ = min(_common(original, other) for other in same - {original})
        start = max(differ - 5, 0)
        window = ("…" if start else "") + original[start : differ + 1] + "…"
        room = size - len(window)
        if room < 4:
            continue  # too narrow to show both: left as clipped
        row[column] = window + original[len(original) - room :]


def _common(one: str, other: str) -> int:
    """How many characters two texts share at their start."""
    count = 0
    for mine, theirs in zip(one, other, strict=False):
        if mine != theirs:
            break
        count += 1
    return count


def _to_floors(headers: list[str], sizes: list[int], excess: int) -> int:
    """Narrow the name to its floor, then whichever of `found` and the `file:line` is longer, a
    character at a time, until the table fits or all are at their floors; the excess left."""
    at = {name: headers.index(name) for name in FLOORS if name in headers}
    if "name" in at:
        cut = min(excess, max(sizes[at["name"]] - FLOORS["name"], 0))
        sizes[at["name"]] -= cut
        excess -= cut
    pair = [name for name in ("found", "resource") if name in at]
    while excess > 0 and pair:
        widest = max(pair, key=lambda name: sizes[at[name]] - FLOORS[name])
        if sizes[at[widest]] <= FLOORS[widest]:
            break
        sizes[at[widest]] -= 1
        excess -= 1
    return excess


def _simple(headers: list[str], rows: list[list[str]]) -> list[str]:
    """tabulate's `simple` format, left-aligned text: written here because tabulate infers a
    type for every cell (two thirds of the table's time at 100,000 findings)."""
    widths = [max(len(h) + 2, *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return lines


def _set_aside(result: ScanResult) -> list[str]:
    lines: list[str] = []
    waived = Counter(f.rule_id for f in result.findings if f.waiver is not None)
    suppressed = Counter(f.rule_id for f in result.findings if f.suppressed is not None)
    if waived:
        lines.append("waived: " + _counts(waived))
    if suppressed:
        lines.append("suppressed inline: " + _counts(suppressed))
    expired = [w for w in result.waivers if w.state.value == "expired" and w.matched]
    for status in expired:
        waiver = status.waiver
        lines.append(
            f"expired waiver: {clean(waiver.rule)} ({clean(waiver.owner, 40)}, "
            f"{waiver.expires:%Y-%m-%d}) no longer applies to {status.matched} "
            f"finding{'' if status.matched == 1 else 's'}"
        )
    passed_over = len(result.skipped) - len(result.input_errors)
    if passed_over:
        noun = "input holds" if passed_over == 1 else "inputs hold"
        lines.append(f"skipped: {passed_over} {noun} no GPU job (-v lists them)")
    if result.not_evaluated:
        missing = Counter(n.missing.split(" ", 1)[0] for n in result.not_evaluated)
        lines.append("not evaluated (missing data): " + _counts(missing))
    opened = [f for f in result.findings if f.is_open]
    dates = sorted({phrase for phrase, _ in price_dates(opened, result.generated_at)})
    if dates:  # the date every saving above is priced at (sources: --format markdown or json)
        lines.append("savings priced at: " + "; ".join(clean(d) for d in dates))
    summed = totals(result)
    if summed is not None:  # capacity bought ahead: the Markdown report lists each
        count, used, total, unused = summed
        lines.append(
            f"reservations: {used} of {total} reserved instances in use in {count}; "
            f"{money(unused)} unused (--format markdown lists them)"
        )
    return [*lines, ""] if lines else []


def _problems(result: ScanResult) -> list[str]:
    lines = [
        f"COVERAGE GAP: {clean(g.provider)} {clean(g.where)}: {clean(g.error)}: "
        f"{clean(g.message, 120)}"
        for g in result.coverage_gaps
    ]
    lines += [f"error: {clean(s.reason, 200)}" for s in result.input_errors]
    return [*lines, ""] if lines else []


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{n} {clean(name)}" for name, n in counter.most_common())


def _order(finding: Finding) -> tuple[int, float, str]:
    return (*saving_rank(finding), finding.resource.location)


def _row(finding: Finding, jobs: bool = False) -> list[str]:
    resource = finding.resource
    gpu = resource.gpu
    gpus = f"{gpu.count or '?'}× {clean(gpu.model)}" if gpu.model else "-"
    shared = share_text(resource.share)
    if shared and gpu.model:
        gpus = f"{gpus} ({clean(shared, 40)})"
    location = resource.location
    if resource.kind is Kind.JOB and resource.source.path:
        location = f"{resource.source.path}:{finding.line or resource.source.line or '?'}"
    return [
        clean(finding.rule_id),
        clean(resource.name or short_id(resource), 40),
        clean(location, 60, tail=True),
        clean(resource.instance_type or "-"),
        gpus,
        money(resource.price.hourly_usd) if jobs else money(resource.monthly_cost_usd),
        saving_text(finding, short=True) or "-",
        clean(finding.actual, 60),
    ]


def clean(text: object, width: int = 80, tail: bool = False) -> str:
    """One line, at most `width` characters; `tail` keeps the end (a location's id or `:line`)
    and clips the start. Runs of white space (line breaks too) become one space, other control
    and bidi characters are shown escaped (`terminal_safe`)."""
    flat = terminal_safe(" ".join(str(text).split()))
    if len(flat) <= width:
        return flat
    return "…" + flat[-(width - 1) :] if tail else flat[: width - 1] + "…"
