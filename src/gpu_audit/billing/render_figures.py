"""The FinOps reader's figures for people: spend with the unused capacity, list cost and the
effective savings rate, cost per GPU-hour, months, invoices, commitments and data quality, as
Markdown sections and terminal lines (render_text places them)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from decimal import Decimal

from gpu_audit.billing.spelling import hours
from gpu_audit.billing.summary import BillingSummary, Figures, Line, cents
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.values import money, percent


def spend_line(s: BillingSummary, fmt: str) -> str:
    """GPU spend with the unused capacity, and what a FinOps reader checks first."""
    spend = s.spend
    return (
        f"GPU spend {money(spend.effective, fmt)} (usage {money(s.usd.gpu.effective, fmt)} + "
        f"reserved or committed capacity left unused {money(s.usd.unused.effective, fmt)}), "
        f"billed {money(spend.billed, fmt)}, list {money(spend.list, fmt)}: effective savings rate "
        f"{percent(spend.savings_rate, fmt)}; {money(s.usd.gpu.per_gpu_hour, fmt, places=3)} per "
        "GPU-hour; "
        f"spot share {percent(s.spot_share, fmt)} of GPU-hours; commitment coverage "
        f"{percent(s.commitment_coverage, fmt)} of GPU-hours."
    )


def markdown_sections(s: BillingSummary, ids: Mapping[str, str]) -> list[str]:
    """The figures' Markdown; `ids`: each resource id by the tail that tells it apart."""
    # keeps report.markdown_text off `billing`'s start-up
    from gpu_audit.report.markdown_text import breakable, inline, table

    lines = [spend_line(s, "markdown"), ""]
    lines += ["### GPU spend by month", ""]
    lines += table(
        ["month", "GPU spend", "billed", "list", "GPU-hours", "rows read"],
        [
            [
                m.month,
                *_money_cells(m.spend, "markdown"),
                hours(m.spend.gpu_hours),
                f"{m.read_rows:,}" if m.read_rows else "no rows",
            ]
            for m in s.months
        ],
        "lrrrrr",
    )
    lines.append("")
    for name, title in (("instance_type", "instance type"), ("capacity", "capacity")):
        part = s.breakdowns.get(name, ())
        if not part:
            continue
        lines += [f"### Cost per GPU-hour by {title}", ""]
        lines += table(
            # the rate first: it is what the table is of
            [title, "per GPU-hour", "GPU-hours", "effective", "list", "savings rate"],
            [
                [
                    inline(line.key or "(not stated)", 60),
                    money(line.figures.per_gpu_hour, "markdown", places=3),
                    hours(line.figures.gpu_hours),
                    money(line.figures.effective, "markdown"),
                    money(line.figures.list, "markdown"),
                    percent(line.figures.savings_rate, "markdown"),
                ]
                for line in part[:15]
            ],
            "lrrrrr",
        )
        lines.append("")
    if s.commitments:
        lines += ["### Commitments and capacity reservations (GPU rows)", ""]
        lines += table(
            [
                "kind",
                "commitment or reservation",
                "used hours",
                "unused hours",
                "utilization",
                "unused",
            ],
            [
                [
                    f"{c.kind} ({inline(c.cloud)})",
                    breakable(inline(ids.get(c.id, c.id), 120)),
                    hours(c.used_hours),
                    hours(c.unused_hours),
                    percent(c.utilization, "markdown"),
                    money(c.unused_effective, "markdown"),
                ]
                for c in s.commitments
            ],
            "llrrrr",
        )
        lines.append("")
    transfer = [
        (heading, name, part)
        for heading, parts in (
            ("GPU resources' data transfer", s.transfer),
            ("GPU teams' other data transfer (same team tag, no GPU resource)", s.team_transfer),
        )
        for name, part in parts
        if part
    ]
    for heading, name, part in transfer:
        title = "cloud" if name == "cloud" else f"tag `{name[4:]}`"
        lines += [f"### {heading} by {title} (beside the GPU spend)", ""]
        spend = {line.key: line.figures.effective for line in s.breakdowns.get(name, ())}
        lines += table(
            [title.replace("`", ""), "transfer", "GPU spend", "transfer ÷ GPU spend", "rows"],
            [
                [
                    inline(line.key or ("(untagged)" if name.startswith("tag:") else "–"), 60),
                    money(line.figures.effective, "markdown"),
                    money(spend.get(line.key, Decimal(0)), "markdown"),
                    _share(line.figures.effective, spend.get(line.key, Decimal(0))),
                    f"{line.figures.rows:,}",
                ]
                for line in part[:15]
            ],
            "lrrrr",
        )
        lines.append("")
    if s.invoices:
        lines += ["### Each invoice (BilledCost of every row, by provider and billing period)", ""]
        lines += table(
            ["provider", "billing period", "currency", "billed", "rows", "charged in the period"],
            [
                [
                    inline(i.provider),
                    inline(i.billing_period or "(not stated)"),
                    inline(i.currency),
                    f"{cents(i.billed):,}",
                    f"{i.rows:,}",
                    f"{cents(i.in_period_billed):,}",
                ]
                for i in s.invoices
            ],
            "lllrrr",
        )
        lines.append("")
    if s.warnings:
        lines += ["### Data quality", ""]
        lines += [f"- {inline(w.message)}{_rows(w.rows)}" for w in s.warnings]
        lines.append("")
    return lines


def terminal_lines(s: BillingSummary, ids: Mapping[str, str], width: int) -> list[str]:
    """The figures' terminal lines, each within `width` (ids by the tail that tells them
    apart, as in the findings)."""
    out = ["", *textwrap.wrap(spend_line(s, "text"), width, break_on_hyphens=False)]
    out += ["", "by month"]
    for m in s.months:
        read = f"{m.read_rows:,} rows read" if m.read_rows else "no rows"
        out.append(
            f"  {m.month}  {money(m.spend.effective):>14}  "
            f"{hours(m.spend.gpu_hours):>12} GPU-h  {read}"
        )
    for name in ("instance_type", "capacity"):
        part = s.breakdowns.get(name, ())
        if part:
            out += ["", f"cost per GPU-hour by {name.replace('_', ' ')}"]
            out += [
                terminal_safe(
                    f"  {(line.key or '(not stated)')[:30]:<30} "
                    f"{money(line.figures.per_gpu_hour, places=3):>10}"
                    f"  savings {percent(line.figures.savings_rate)}"
                )
                for line in part[:10]
            ]
    if s.commitments:
        out += ["", "commitments and capacity reservations"]
        for c in s.commitments:  # what and where, then the amounts (as a finding's lines)
            head = terminal_safe(f"  {c.kind} ({c.cloud}): ")
            where = terminal_safe(ids.get(c.id, c.id))
            room = max(width - len(head), 12)
            out.append(head + (where if len(where) <= room else "…" + where[-(room - 1) :]))
            out.append(
                _fitted(
                    f"    {percent(c.utilization)} used, {hours(c.unused_hours)} h unused "
                    f"({money(c.unused_effective)})",
                    width,
                )
            )
    for heading, parts in (
        ("GPU resources' data transfer", s.transfer),
        ("GPU teams' other data transfer", s.team_transfer),
    ):
        out += _transfer_lines(heading, parts)
    if s.invoices:
        out += ["", "invoices (billed, every row)"]
        out += [
            terminal_safe(
                f"  {i.provider} {i.billing_period or '(not stated)'}: {cents(i.billed):,} "
                f"{i.currency} in {i.rows:,} rows"
            )
            for i in s.invoices
        ]
    for w in s.warnings:
        out += textwrap.wrap(
            terminal_safe(f"data quality: {w.message}{_rows(w.rows)}"),
            width,
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
    return [_fitted(line, width) for line in out]


def _fitted(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def _share(part: Decimal, whole: Decimal) -> str:
    """`part` of `whole` in a Markdown cell; a share of nothing is not known."""
    return percent(part / whole if whole else None, "markdown")


def _rows(count: int) -> str:
    return "" if not count else f": {count:,} row" + ("" if count == 1 else "s")


def _money_cells(figures: Figures, fmt: str) -> list[str]:
    return [money(figures.effective, fmt), money(figures.billed, fmt), money(figures.list, fmt)]


def _transfer_lines(heading: str, parts: Sequence[tuple[str, Sequence[Line]]]) -> list[str]:
    """The terminal's lines of one transfer figure, by cloud and tag."""
    out: list[str] = []
    for name, part in parts:
        if part:
            out += ["", f"{heading} by {name.replace('tag:', 'tag ')}"]
            out += [
                terminal_safe(
                    f"  {(line.key or '(untagged)')[:30]:<30} {money(line.figures.effective):>14}"
                )
                for line in part[:10]
            ]
    return out
