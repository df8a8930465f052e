"""The billing report for people: the runbook's Markdown section and the terminal table. Every
value from an export is escaped for where it goes (Markdown inline text, a safe terminal)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from gpu_audit.billing.render_figures import markdown_sections, terminal_lines
from gpu_audit.billing.report import BillingReport
from gpu_audit.billing.spelling import dimension_title, hours, key_label, md_usd, share, usd
from gpu_audit.billing.summary import Figures, Line, cents

ROWS = 100  # findings in the runbook's table: a page stays readable; JSON and CSV list them all
TERMINAL_ROWS = 30

# --- Markdown (the runbook's section) ---------------------------------------------------------


def render_markdown(report: BillingReport) -> str:
    from gpu_audit.report.markdown_text import inline, prose, table

    s = report.summary
    lines = [f"## GPU spend from the bill: {inline(s.period.name)}", ""]
    lines += [_headline(report, lambda v: v.replace("$", "\\$")), ""]
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
    lines += ["", _check_line(report, lambda v: v.replace("$", "\\$")), ""]
    lines += markdown_sections(s)
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
            [title.replace("`", ""), "effective", "billed", "GPU-hours", "share"],
            [
                [
                    inline(key_label(name, line.key), 60),
                    *_md_cells(line.figures)[:3],
                    share(line.figures.effective, total),
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
                    inline(u.reservation_id, 60),
                    inline(u.instance_type),
                    hours(u.hours),
                    md_usd(u.figures.effective),
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
            ["severity", "rule", "resource", "hours", "effective", "saving"],
            [
                [
                    f.severity.label,
                    inline(f.rule_id),
                    inline(f.resource.id, 60),
                    f"{f.resource.billing.hours or 0:,.2f}",
                    md_usd(f.resource.billing.effective_usd),
                    md_usd(f.saving_usd) if f.saving_usd is not None else "–",
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
    return "\n".join(lines).rstrip() + "\n"


def _md_cells(figures: Figures) -> list[str]:
    return _cells(figures, md_usd)


def _cells(figures: Figures, money: Callable[[Decimal], str]) -> list[str]:
    """Effective, billed, GPU-hours and rows, the dollars spelled for the output."""
    return [
        money(figures.effective),
        money(figures.billed),
        hours(figures.gpu_hours),
        f"{figures.rows:,}",
    ]


def _md_coverage(report: BillingReport) -> list[str]:
    from gpu_audit.report.markdown_text import inline, table

    c = report.coverage
    assert c is not None
    lines = ["### The bill against the scans", ""]
    lines.append(
        f"{c.audits} audits in the history; {c.matched} billed GPU resources were seen by a scan, "
        f"{len(c.unseen)} never were ({md_usd(c.unseen_usd)} in the period): a coverage gap in "
        "the scheduled scan."
    )
    lines.append("")
    if c.unseen:
        lines += table(
            ["cloud", "resource never scanned", "instance type", "hours", "effective"],
            [
                [
                    inline(r.provider),
                    inline(r.id, 60),
                    inline(r.instance_type),
                    f"{r.billing.hours or 0:,.2f}",
                    md_usd(r.billing.effective_usd),
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
                [inline(f.rule_id), inline(f.resource_id, 60), inline(f.status)]
                for f in c.findings[:30]
            ],
            "lll",
        )
        lines.append("")
    return lines


def _headline(report: BillingReport, mark: Callable[[str], str]) -> str:
    s = report.summary
    spot = s.spot_share
    spot_text = (
        "no GPU-hours" if spot is None else f"{(spot * 100).quantize(Decimal('0.1'))}% on spot"
    )
    return (
        f"{mark(usd(s.usd.gpu.effective))} of GPU usage ({hours(s.usd.gpu.gpu_hours)} GPU-hours, "
        f"{spot_text}) and {mark(usd(s.usd.unused.effective))} of reserved or committed GPU "
        f"capacity left unused, effective cost (amortized); {len(report.open_findings)} findings "
        f"worth {mark(usd(report.waste_usd))} over the period."
    )


def _check_line(report: BillingReport, mark: Callable[[str], str]) -> str:
    s = report.summary
    left = sum((line.figures.effective for line in s.usd.left_out), Decimal(0))
    return (
        f"Check against the invoice: {mark(usd(s.usd.read.billed))} billed in "
        f"{s.usd.read.rows:,} rows "
        f"read for the period = GPU {mark(usd(s.usd.gpu.billed))} + unused "
        f"{mark(usd(s.usd.unused.billed))} + GPU resources' transfer "
        f"{mark(usd(s.usd.transfer.billed))} + GPU teams' other transfer "
        f"{mark(usd(s.usd.team_transfer.billed))} + left out "
        f"{mark(usd(sum((line.figures.billed for line in s.usd.left_out), Decimal(0))))}. "
        f"Corrections counted: {mark(usd(s.usd.corrections))}; {s.outside_rows:,} rows read fall "
        f"outside the period. Effective left out: {mark(usd(left))}."
    )


# --- the terminal -----------------------------------------------------------------------------


def render_table(report: BillingReport) -> str:
    from tabulate import tabulate

    from gpu_audit.report.escape import terminal_safe

    s = report.summary
    out = [f"GPU spend from the bill, {terminal_safe(s.period.name)}", ""]
    for src in s.sources:
        extra = f", {len(src.superseded)} superseded (not read)" if src.superseded else ""
        out.append(terminal_safe(f"  {src.cloud}: {src.path}: {len(src.files)} files{extra}"))
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
            [terminal_safe(key_label(name, line.key))[:40], usd(line.figures.effective),
             hours(line.figures.gpu_hours), share(line.figures.effective, _sum(part))]
            for line in part[:10]
        ]  # fmt: skip
        out.append(
            tabulate(
                body,
                headers=["", "effective", "GPU-hours", "share"],
                disable_numparse=True,
                colalign=("left", "right", "right", "right"),
            )
        )
    opened = report.open_findings
    out += ["", f"findings: {len(opened)} open{_waived(report)}"]
    for f in opened[:TERMINAL_ROWS]:
        b = f.resource.billing
        saving = f", {usd(f.saving_usd)} over the period" if f.saving_usd else ""
        out.append(
            terminal_safe(
                f"  {f.severity.label:<8} {f.rule_id}: {f.resource.provider} {f.resource.id} "
                f"({b.hours or 0:,.0f} h, {usd(b.effective_usd)}{saving})"
            )
        )
    if len(opened) > TERMINAL_ROWS:
        out.append(
            f"  … and {len(opened) - TERMINAL_ROWS:,} more (--format json or csv lists every one)"
        )
    if report.coverage is not None:
        c = report.coverage
        out += ["", f"scan coverage: {c.matched} billed GPU resources seen by a scan, "
                    f"{len(c.unseen)} never ({usd(c.unseen_usd)})"]  # fmt: skip
        out += [terminal_safe(f"  never scanned: {r.provider} {r.id}") for r in c.unseen[:10]]
    for t in s.other_currencies:
        out.append(
            terminal_safe(
                f"{t.currency}: {cents(t.gpu.effective):,} of GPU usage (not added to the dollars)"
            )
        )
    out += terminal_lines(s)
    out += ["", _headline(report, lambda v: v)]
    return "\n".join(out) + "\n"


def _sum(part: tuple[Line, ...]) -> Decimal:
    return sum((line.figures.effective for line in part), Decimal(0))


def _table_cells(figures: Figures) -> list[str]:
    return _cells(figures, usd)


def _waived(report: BillingReport) -> str:
    waived = sum(1 for f in report.findings if f.waiver is not None)
    return f", {waived} waived" if waived else ""
