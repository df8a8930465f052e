"""The billing report for people: the runbook's Markdown section and the terminal table. Every
value from an export is escaped for where it goes (Markdown inline text, a safe terminal)."""

from __future__ import annotations

import textwrap
from decimal import Decimal

from gpu_audit.billing.render_figures import markdown_sections, terminal_lines
from gpu_audit.billing.render_quarter import text_lines
from gpu_audit.billing.report import BillingReport
from gpu_audit.billing.spelling import dimension_title, hours, key_label
from gpu_audit.billing.summary import Figures, Line, cents
from gpu_audit.core.results import Finding
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.values import money, percent

ROWS = 100  # findings in the runbook's table: a page stays readable; JSON and CSV list them all
TERMINAL_ROWS = 30

# --- Markdown (the runbook's section) ---------------------------------------------------------


def render_markdown(report: BillingReport) -> str:
    """The billing report as the runbook's Markdown section: totals, breakdowns (cloud, capacity,
    tags, type, account), unused commitments, findings, coverage, other currencies and the
    quarter ahead; every value escaped, dollar signs too."""
    # keeps report.markdown_text off `billing`'s start-up
    from gpu_audit.report.markdown_text import breakable, inline, prose, table

    s = report.summary
    ids = shown_ids(report)
    lines = [f"## GPU spend from the bill: {inline(s.period.name)}", ""]
    lines += [_headline(report, "markdown"), ""]
    lines += table(
        ["", "effective (amortized)", "billed", "GPU-hours", "rows"],
        [
            ["read in the period", *_md_cells(s.usd.read)],
            ["GPU usage", *_md_cells(s.usd.gpu)],
            ["reserved or committed, unused", *_md_cells(s.usd.unused)],
            ["GPU resources' data transfer", *_md_cells(s.usd.transfer)],
            ["GPU teams' other data transfer", *_md_cells(s.usd.team_transfer)],
            *(
                [f"left out: {inline(line.key)}", *_md_cells(line.figures)]
                for line in s.usd.left_out
            ),
        ],
        "lrrrr",
    )
    lines += ["", _check_line(report, "markdown"), ""]
    lines += markdown_sections(s, ids)
    for name in (
        "cloud",
        "capacity",
        *(f"tag:{k}" for k in s.tag_keys),
        "instance_type",
        "account",
    ):
        part = s.breakdowns.get(name, ())
        if not part:
            continue
        title = dimension_title(name)
        lines += [f"### By {title}", ""]
        total = sum((line.figures.effective for line in part), Decimal(0))  # the lines add up
        lines += table(
            [title.replace("`", ""), "effective", "billed", "GPU-hours", "share of spend"],
            [
                [
                    inline(key_label(name, line.key), 60),
                    *_md_cells(line.figures)[:3],
                    percent(line.figures.effective / total if total else None, "markdown"),
                ]
                for line in part[:15]
            ],
            "lrrrr",
        )
        if len(part) > 15:
            lines += [
                "",
                f"… and {len(part) - 15} more (the JSON and CSV reports list every line).",
            ]
        lines.append("")
    if s.unused:
        lines += ["### Reserved or committed GPU capacity left unused", ""]
        lines += table(
            ["cloud", "reservation or commitment", "instance type", "unused hours", "effective"],
            [
                [
                    inline(u.cloud),
                    md_id(ids, u.reservation_id),
                    inline(u.instance_type),
                    hours(u.hours),
                    money(u.figures.effective, "markdown"),
                ]
                for u in s.unused
            ],
            "lllrr",
        )
        lines.append("")
    opened = report.open_findings
    lines += [f"### Findings from the bill ({len(opened)} open{_waived(report)})", ""]
    if opened:
        lines += table(
            ["severity", "rule", "resource", "hours", "spend", "saving over the period"],
            [
                [
                    f.severity.label,
                    breakable(inline(f.rule_id)),
                    f"{inline(f.resource.provider)} {md_id(ids, f.resource.id)}",
                    f"{f.resource.billing.hours or 0:,.2f}",
                    money(f.resource.billing.effective_usd, "markdown"),
                    money(f.saving_usd, "markdown"),
                ]
                for f in opened[:ROWS]
            ],
            "lllrrr",
        )
        lines.append("")
        if len(opened) > ROWS:
            lines += [
                f"… and {len(opened) - ROWS:,} more (the JSON and CSV reports list every one).",
                "",
            ]
        for rule_id in dict.fromkeys(f.rule_id for f in opened):
            first = next(f for f in opened if f.rule_id == rule_id)
            lines.append(f"- **{inline(rule_id)}**: {prose(first.remediation or first.title)}")
        lines.append("")
    else:
        lines += ["None.", ""]
    if report.coverage is not None:
        lines += _md_coverage(report)
    if s.other_currencies:
        lines += ["### Other currencies (not added to the dollars above)", ""]
        lines += table(
            ["currency", "read", "GPU usage", "unused"],
            [
                [
                    inline(t.currency),
                    f"{cents(t.read.effective):,}",
                    f"{cents(t.gpu.effective):,}",
                    f"{cents(t.unused.effective):,}",
                ]
                for t in s.other_currencies
            ],
            "lrrr",
        )
        lines.append("")
    lines += text_lines(report, inline, markdown=True)  # the quarter ahead
    return "\n".join(lines).rstrip() + "\n"


def shown_ids(report: BillingReport) -> dict[str, str]:
    """Every resource id the report names, by the tail that tells it apart from the others."""
    from gpu_audit.report.ids import shown_ids as tails  # keeps report.ids off `billing`'s start-up

    named = [r.id for r in report.resources]
    named += [u.reservation_id for u in report.summary.unused if u.reservation_id]
    named += [c.id for c in report.summary.commitments]
    if report.coverage is not None:
        named += [r.id for r in report.coverage.unseen]
        named += [f.resource_id for f in report.coverage.findings]
    return tails(named)


def md_id(ids: dict[str, str], resource_id: str | None) -> str:
    """A resource id in a Markdown cell: its distinguishing tail, with places to wrap."""
    # keeps report.markdown_text off `billing`'s start-up
    from gpu_audit.report.markdown_text import breakable, inline

    if resource_id is None:
        return inline(None)
    return breakable(inline(ids.get(resource_id, resource_id), 120))


def _md_cells(figures: Figures) -> list[str]:
    return _cells(figures, "markdown")


def _cells(figures: Figures, fmt: str) -> list[str]:
    """Effective, billed, GPU-hours and rows, the dollars spelled for the output."""
    return [
        money(figures.effective, fmt),
        money(figures.billed, fmt),
        hours(figures.gpu_hours),
        f"{figures.rows:,}",
    ]


def _md_coverage(report: BillingReport) -> list[str]:
    # keeps report.markdown_text off `billing`'s start-up
    from gpu_audit.report.markdown_text import breakable, inline, table

    c = report.coverage
    assert c is not None
    ids = shown_ids(report)
    lines = ["### The bill against the scans", ""]
    lines.append(
        f"{c.audits} audits in the history; {c.matched} billed GPU resources were seen by a scan, "
        f"{len(c.unseen)} never were ({money(c.unseen_usd, 'markdown')} in the period): a "
        "coverage gap in the scheduled scan."
    )
    lines.append("")
    if c.unseen:
        lines += table(
            ["cloud", "resource never scanned", "instance type", "hours", "effective"],
            [
                [
                    inline(r.provider),
                    md_id(ids, r.id),
                    inline(r.instance_type),
                    f"{r.billing.hours or 0:,.2f}",
                    money(r.billing.effective_usd, "markdown"),
                ]
                for r in c.unseen[:20]
            ],
            "lllrr",
        )
        lines.append("")
    if c.findings:
        lines += table(
            ["rule", "resource", "since the last scan"],
            [
                [breakable(inline(f.rule_id)), md_id(ids, f.resource_id), inline(f.status)]
                for f in c.findings[:30]
            ],
            "lll",
        )
        lines.append("")
    return lines


def _headline(report: BillingReport, fmt: str) -> str:
    s = report.summary
    spot = s.spot_share
    spot_text = (
        "none" if spot is None else f"{(spot * 100).quantize(Decimal('0.1'))}% of them on spot"
    )
    found = len(report.open_findings)
    return (
        f"{money(s.usd.gpu.effective, fmt)} of GPU usage ({hours(s.usd.gpu.gpu_hours)} GPU-hours, "
        f"{spot_text}) and {money(s.usd.unused.effective, fmt)} of reserved or committed GPU "
        f"capacity left unused, effective cost (amortized); {found} finding"
        f"{'' if found == 1 else 's'} worth {money(report.waste_usd, fmt)} over the period."
    )


def _check_line(report: BillingReport, fmt: str) -> str:
    s = report.summary
    left = sum((line.figures.effective for line in s.usd.left_out), Decimal(0))
    return (
        f"Check against the invoice: {money(s.usd.read.billed, fmt)} billed in "
        f"{s.usd.read.rows:,} rows "
        f"read for the period = GPU {money(s.usd.gpu.billed, fmt)} + unused "
        f"{money(s.usd.unused.billed, fmt)} + GPU resources' transfer "
        f"{money(s.usd.transfer.billed, fmt)} + GPU teams' other transfer "
        f"{money(s.usd.team_transfer.billed, fmt)} + left out "
        f"{money(sum((line.figures.billed for line in s.usd.left_out), Decimal(0)), fmt)}. "
        f"Corrections counted: {money(s.usd.corrections, fmt)}; {s.outside_rows:,} rows read fall "
        f"outside the period. Effective left out: {money(left, fmt)}."
    )


# --- the terminal -----------------------------------------------------------------------------


def render_table(report: BillingReport) -> str:
    """The billing report as the terminal table, fitted to the terminal's width, every value made
    terminal-safe."""
    from tabulate import tabulate  # keeps tabulate off `billing`'s start-up

    from gpu_audit.report.fit import terminal_width  # keeps report.fit off `billing`'s start-up

    s = report.summary
    width = terminal_width()
    ids = shown_ids(report)
    out = [f"GPU spend from the bill, {terminal_safe(s.period.name)}", ""]
    for src in s.sources:
        out += source_lines(src.cloud, src.path, len(src.files), len(src.superseded), width)
    out.append("")
    rows = [
        ["read in the period", *_table_cells(s.usd.read)],
        ["GPU usage", *_table_cells(s.usd.gpu)],
        ["unused reserved/committed", *_table_cells(s.usd.unused)],
        ["GPU resources' transfer", *_table_cells(s.usd.transfer)],
        ["GPU teams' other transfer", *_table_cells(s.usd.team_transfer)],
        *(
            [terminal_safe(f"left out: {line.key}"), *_table_cells(line.figures)]
            for line in s.usd.left_out
        ),
    ]
    headers = ["", "effective", "billed", "GPU-hours", "rows"]
    align = ("left", "right", "right", "right", "right")
    out.append(tabulate(rows, headers=headers, disable_numparse=True, colalign=align))
    for name in ("cloud", "capacity", *(f"tag:{k}" for k in s.tag_keys)):
        part = s.breakdowns.get(name, ())
        if not part:
            continue
        out += ["", f"by {dimension_title(name).replace('`', '')}"]
        body = [
            [
                terminal_safe(key_label(name, line.key))[:40],
                money(line.figures.effective),
                hours(line.figures.gpu_hours),
                _share(line.figures.effective, _sum(part)),
            ]
            for line in part[:10]
        ]
        out.append(
            tabulate(
                body,
                headers=["", "effective", "GPU-hours", "of spend"],
                disable_numparse=True,
                colalign=("left", "right", "right", "right"),
            )
        )
    opened = report.open_findings
    out += ["", f"findings: {len(opened)} open{_waived(report)}"]
    for f in opened[:TERMINAL_ROWS]:
        out += finding_lines(f, ids.get(f.resource.id, f.resource.id), width)
    if len(opened) > TERMINAL_ROWS:
        out.append(
            f"  … and {len(opened) - TERMINAL_ROWS:,} more (--format json or csv lists every one)"
        )
    if report.coverage is not None:
        c = report.coverage
        out += [
            "",
            f"scan coverage: {c.matched} billed GPU resources seen by a scan, "
            f"{len(c.unseen)} never ({money(c.unseen_usd)})",
        ]
        out += [
            _clipped(terminal_safe(f"  never scanned: {r.provider} {ids.get(r.id, r.id)}"), width)
            for r in c.unseen[:10]
        ]
    for t in s.other_currencies:
        out.append(
            terminal_safe(
                f"{t.currency}: {cents(t.gpu.effective):,} of GPU usage (not added to the dollars)"
            )
        )
    out += terminal_lines(s, ids, width)
    out += ["", *text_lines(report, terminal_safe, markdown=False)]  # the quarter ahead
    out += ["", *textwrap.wrap(_headline(report, "text"), width, break_on_hyphens=False)]
    return "\n".join(out) + "\n"


def source_lines(cloud: str, path: str, files: int, superseded: int, width: int) -> list[str]:
    """An export read: one line where it fits `width`, else what was read, then the path on a
    line of its own (its end kept where even that is too long: the folder names the export)."""
    extra = f", {superseded} superseded (not read)" if superseded else ""
    safe = terminal_safe(path)
    line = terminal_safe(f"  {cloud}: ") + f"{safe}: {files} files{extra}"
    if len(line) <= width:
        return [line]
    where = "    " + (safe if len(safe) <= width - 4 else "…" + safe[-(width - 5) :])
    return [_clipped(terminal_safe(f"  {cloud}: {files} files{extra}, in"), width), where]


def _sum(part: tuple[Line, ...]) -> Decimal:
    return sum((line.figures.effective for line in part), Decimal(0))


def finding_lines(finding: Finding, shown_id: str, width: int) -> list[str]:
    """A finding in the terminal: what and where on one line, then each amount said what it is
    (`1,604 h; spend $60,460.97; saving $46,436.46 over the period`), both within `width`."""
    b = finding.resource.billing
    what = f"  {finding.severity.label:<8} {finding.rule_id}: {finding.resource.provider} "
    amounts = [f"{b.hours or 0:,.0f} h", f"spend {money(b.effective_usd)}"]
    if finding.saving_usd:
        amounts.append(f"saving {money(finding.saving_usd)} over the period")
    head = terminal_safe(what)
    where = terminal_safe(shown_id)
    room = max(width - len(head), 12)
    if len(where) > room and "/" in where:  # its name alone (`cr-0f3a…`), not its kind
        where = where.rsplit("/", 1)[1]
    if len(where) > room:  # the tail tells it apart: keep the end
        where = "…" + where[-(room - 1) :]
    return [head + where, _clipped(" " * 11 + "; ".join(amounts), width)]


def _clipped(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def _table_cells(figures: Figures) -> list[str]:
    return _cells(figures, "text")


def _waived(report: BillingReport) -> str:
    waived = sum(1 for f in report.findings if f.waiver is not None)
    return f", {waived} waived" if waived else ""


def _share(part: Decimal, whole: Decimal) -> str:
    """`part` of `whole` in the terminal table; a share of nothing is not known."""
    return percent(part / whole if whole else None, "table")
