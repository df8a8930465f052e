"""The billing report as JSON (a versioned schema beside this module), CSV, Markdown (the
runbook's section) and a terminal table. Every figure is the exact sum rounded once; every value
from an export is escaped for the output it goes to."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from gpu_audit.billing.report import BillingReport
from gpu_audit.billing.summary import CurrencyTotals, Figures, cents

JSON_VERSION = 1
SCHEMA = "billing-v1.schema.json"
_DIMENSION_TITLES = {
    "cloud": "cloud",
    "account": "account / subscription / project",
    "region": "region",
    "instance_type": "instance type",
    "capacity": "capacity",
}


def usd(amount: Decimal | float | None) -> str:
    if amount is None:
        return "–"
    value = cents(Decimal(str(amount)))
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def md_usd(amount: Decimal | float | None) -> str:
    """Dollars in Markdown: the sign escaped (GitHub reads a pair of `$` on a line as math)."""
    return usd(amount).replace("$", "\\$")


def hours(amount: Decimal) -> str:
    return f"{amount.quantize(Decimal('0.01')):,}"


def share(part: Decimal, whole: Decimal) -> str:
    return "–" if not whole else f"{(part / whole * 100).quantize(Decimal('0.1'))}%"


def dimension_title(name: str) -> str:
    return f"tag `{name[4:]}`" if name.startswith("tag:") else _DIMENSION_TITLES.get(name, name)


def key_label(name: str, key: str | None) -> str:
    if key is not None:
        return key
    return "(untagged)" if name.startswith("tag:") else "(not stated)"


# --- JSON -------------------------------------------------------------------------------------


def _money(amount: Decimal) -> float:
    return float(cents(amount))


def _figures(figures: Figures) -> dict[str, Any]:
    return {
        "effective_usd": _money(figures.effective),
        "billed_usd": _money(figures.billed),
        "gpu_hours": float(figures.gpu_hours.quantize(Decimal("0.01"))),
        "spot_gpu_hours": float(figures.spot_gpu_hours.quantize(Decimal("0.01"))),
        "rows": figures.rows,
    }


def _currency(totals: CurrencyTotals) -> dict[str, Any]:
    return {
        "currency": totals.currency,
        "read": _figures(totals.read),
        "gpu": _figures(totals.gpu),
        "gpu_machine": _figures(totals.machine),
        "unused": _figures(totals.unused),
        "left_out": [{"reason": line.key, **_figures(line.figures)} for line in totals.left_out],
        "corrections_usd": _money(totals.corrections),
    }


def _time(value: Any) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def to_json(report: BillingReport) -> dict[str, Any]:
    s = report.summary
    spot = s.spot_share
    body: dict[str, Any] = {
        "gpu_audit_billing": JSON_VERSION,
        "generated_at": _time(report.generated_at),
        "engine": report.engine,
        "period": {
            "name": s.period.name,
            "start": _time(s.period.start),
            "end": _time(s.period.end),
        },
        "sources": [
            {
                "path": src.path,
                "cloud": src.cloud,
                "files": len(src.files),
                "superseded": len(src.superseded),
                "version": src.version,
            }
            for src in s.sources
        ],
        "tag_keys": list(s.tag_keys),
        "totals": _currency(s.usd),
        "spot_share": None if spot is None else float(spot.quantize(Decimal("0.0001"))),
        "other_currencies": [_currency(t) for t in s.other_currencies],
        "outside_period": {
            "rows": s.outside_rows,
            "effective": {k: float(cents(v)) for k, v in s.outside_effective.items()},
        },
        "breakdowns": {
            name: [{"key": line.key, **_figures(line.figures)} for line in lines]
            for name, lines in s.breakdowns.items()
        },
        "unused": [
            {
                "cloud": u.cloud,
                "account": u.account,
                "region": u.region,
                "instance_type": u.instance_type,
                "reservation_id": u.reservation_id,
                "hours": float(u.hours.quantize(Decimal("0.01"))),
                **_figures(u.figures),
            }
            for u in s.unused
        ],
        "findings": [_finding(f) for f in report.findings],
        "waste_usd": report.waste_usd,
        "not_evaluated": len(report.not_evaluated),
        "coverage": _coverage(report),
    }
    return body


def _finding(f: Any) -> dict[str, Any]:
    r, b = f.resource, f.resource.billing
    return {
        "rule_id": f.rule_id,
        "severity": f.severity.label,
        "title": f.title,
        "status": "waived" if f.waiver is not None else "open",
        "provider": r.provider,
        "resource_id": r.id,
        "account": r.account,
        "region": r.region,
        "instance_type": r.instance_type,
        "capacity": r.capacity.value if r.capacity else None,
        "tags": dict(r.tags),
        "period": b.period,
        "hours": b.hours,
        "gpu_hours": b.gpu_hours,
        "effective_usd": b.effective_usd,
        "billed_usd": b.billed_usd,
        "first_charge": _time(b.first_charge),
        "last_charge": _time(b.last_charge),
        "ended": b.ended,
        "saving_usd": f.saving_usd,
        "expected": f.expected,
        "actual": f.actual,
        "remediation": f.remediation,
    }


def _coverage(report: BillingReport) -> dict[str, Any] | None:
    c = report.coverage
    if c is None:
        return None
    return {
        "history": c.history,
        "audits": c.audits,
        "first_scan": _time(c.first_scan),
        "last_scan": _time(c.last_scan),
        "matched": c.matched,
        "unseen_usd": c.unseen_usd,
        "unseen": [
            {
                "provider": r.provider,
                "resource_id": r.id,
                "account": r.account,
                "region": r.region,
                "instance_type": r.instance_type,
                "effective_usd": r.billing.effective_usd,
                "hours": r.billing.hours,
                "first_charge": _time(r.billing.first_charge),
                "last_charge": _time(r.billing.last_charge),
            }
            for r in c.unseen
        ],
        "findings": [
            {
                "rule_id": f.rule_id,
                "provider": f.provider,
                "resource_id": f.resource_id,
                "status": f.status,
                "effective_usd": f.effective_usd,
                "last_charge": _time(f.last_charge),
            }
            for f in c.findings
        ],
    }


def render_json(report: BillingReport) -> str:
    return json.dumps(to_json(report), indent=1, ensure_ascii=False) + "\n"


# --- CSV --------------------------------------------------------------------------------------


def render_csv(report: BillingReport) -> str:
    """One row per breakdown line, then the unused capacity and the findings as rows of their
    own `section`: a spreadsheet pivots them; no cell can start a formula."""
    from gpu_audit.report.csv import neutral

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["section", "dimension", "key", "effective_usd", "billed_usd", "gpu_hours",
         "spot_gpu_hours", "rows", "resource_id", "rule_id"]
    )  # fmt: skip

    def put(*cells: object) -> None:
        writer.writerow([neutral("" if c is None else str(c)) for c in cells])

    s = report.summary
    period = s.period.name
    for label, figures in (("read", s.usd.read), ("gpu", s.usd.gpu), ("unused", s.usd.unused)):
        put("total", label, period, *_cells(figures), "", "")
    for line in s.usd.left_out:
        put("left-out", "reason", line.key, *_cells(line.figures), "", "")
    for name, lines in s.breakdowns.items():
        for line in lines:
            put("breakdown", name, key_label(name, line.key), *_cells(line.figures), "", "")
    for u in s.unused:
        put("unused", u.cloud, u.instance_type, *_cells(u.figures), u.reservation_id, "")
    for f in report.open_findings:
        b = f.resource.billing
        put("finding", f.severity.label, f.resource.instance_type, b.effective_usd, b.billed_usd,
            b.gpu_hours, "", "", f.resource.id, f.rule_id)  # fmt: skip
    return out.getvalue()


def _cells(figures: Figures) -> list[str]:
    return [
        f"{cents(figures.effective)}",
        f"{cents(figures.billed)}",
        f"{figures.gpu_hours.quantize(Decimal('0.01'))}",
        f"{figures.spot_gpu_hours.quantize(Decimal('0.01'))}",
        str(figures.rows),
    ]


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
            *(
                [f"left out: {inline(line.key)}", *_md_cells(line.figures)]
                for line in s.usd.left_out
            ),
        ],
        "lrrrr",
    )
    lines += ["", _check_line(report, lambda v: v.replace("$", "\\$")), ""]
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
        total = s.usd.gpu.effective
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
    lines += [f"### Findings from the bill ({len(opened)} open)", ""]
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
                for f in opened
            ],
            "lllrrr",
        )
        lines.append("")
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
    return [
        md_usd(figures.effective),
        md_usd(figures.billed),
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
        f"{mark(usd(s.usd.unused.billed))} + left out "
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
             hours(line.figures.gpu_hours), share(line.figures.effective, s.usd.gpu.effective)]
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
    out += ["", f"findings: {len(opened)} open"]
    for f in opened:
        b = f.resource.billing
        saving = f", {usd(f.saving_usd)} over the period" if f.saving_usd else ""
        out.append(
            terminal_safe(
                f"  {f.severity.label:<8} {f.rule_id}: {f.resource.provider} {f.resource.id} "
                f"({b.hours or 0:,.0f} h, {usd(b.effective_usd)}{saving})"
            )
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
    out += ["", _headline(report, lambda v: v)]
    return "\n".join(out) + "\n"


def _table_cells(figures: Figures) -> list[str]:
    return [
        usd(figures.effective),
        usd(figures.billed),
        hours(figures.gpu_hours),
        f"{figures.rows:,}",
    ]


RENDERERS: dict[str, Callable[[BillingReport], str]] = {
    "table": render_table,
    "json": render_json,
    "csv": render_csv,
    "markdown": render_markdown,
}
