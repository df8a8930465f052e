"""The billing report as data: JSON (the versioned schema `billing-v1.schema.json` beside this
module) and CSV (one row per figure, no cell a spreadsheet formula)."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from typing import Any

from gpu_audit.billing.report import BillingReport
from gpu_audit.billing.spelling import key_label
from gpu_audit.billing.summary import CurrencyTotals, Figures, cents
from gpu_audit.core.stamps import stamp

JSON_VERSION = 1
SCHEMA = "billing-v1.schema.json"


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
    return None if value is None else stamp(value)


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
    # RFC 4180's CRLF: the csv module quotes a cell holding a character of the line terminator,
    # so a carriage return in a value (a tag, an id) is quoted rather than splitting the row
    writer = csv.writer(out, lineterminator="\r\n")
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
