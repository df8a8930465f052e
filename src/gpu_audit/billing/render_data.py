"""The billing report as data: JSON (the versioned schema `billing-v1.schema.json` beside this
module) and CSV (one row per figure, no cell a spreadsheet formula)."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from typing import Any

from gpu_audit.billing.render_quarter import (
    anomalies_json,
    csv_rows,
    forecast_json,
    past_json,
    reading_json,
)
from gpu_audit.billing.report import BillingReport
from gpu_audit.billing.spelling import key_label
from gpu_audit.billing.summary import CurrencyTotals, Figures, cents
from gpu_audit.core.stamps import stamp

JSON_VERSION = 1


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
        "list_usd": _money(figures.list),
        "savings_rate": _ratio(figures.savings_rate),
        "cost_per_gpu_hour_usd": _per_hour(figures.per_gpu_hour),
    }


def _ratio(value: Decimal | None) -> float | None:
    return None if value is None else float(value.quantize(Decimal("0.0001")))


def _per_hour(value: Decimal | None) -> float | None:
    """Dollars per GPU-hour, to a tenth of a cent (a rate, not an amount)."""
    return None if value is None else float(value.quantize(Decimal("0.001")))


def _currency(totals: CurrencyTotals) -> dict[str, Any]:
    return {
        "currency": totals.currency,
        "read": _figures(totals.read),
        "gpu": _figures(totals.gpu),
        "gpu_machine": _figures(totals.machine),
        "unused": _figures(totals.unused),
        "transfer": _figures(totals.transfer),
        "team_transfer": _figures(totals.team_transfer),
        "left_out": [{"reason": line.key, **_figures(line.figures)} for line in totals.left_out],
        "corrections_usd": _money(totals.corrections),
    }


def _time(value: Any) -> str | None:
    return None if value is None else stamp(value)


def to_json(report: BillingReport) -> dict[str, Any]:
    """The billing report as the JSON document of `billing-v1.schema.json` (times in UTC, money as
    numbers rounded once)."""
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
        "spend": _figures(s.spend),
        "months": [
            {"month": m.month, "read_rows": m.read_rows, **_figures(m.spend)} for m in s.months
        ],
        "invoices": [
            {
                "provider": i.provider,
                "billing_period_start": i.billing_period,
                "currency": i.currency,
                "billed": float(cents(i.billed)),
                "rows": i.rows,
                "billed_charged_in_period": float(cents(i.in_period_billed)),
            }
            for i in s.invoices
        ],
        "commitments": [
            {
                "kind": c.kind,
                "id": c.id,
                "cloud": c.cloud,
                "used_hours": float(c.used_hours.quantize(Decimal("0.01"))),
                "unused_hours": float(c.unused_hours.quantize(Decimal("0.01"))),
                "utilization": _ratio(c.utilization),
                "used_effective_usd": _money(c.used_effective),
                "unused_effective_usd": _money(c.unused_effective),
            }
            for c in s.commitments
        ],
        "commitment_coverage": _ratio(s.commitment_coverage),
        "transfer": {
            name: [{"key": line.key, **_figures(line.figures)} for line in lines]
            for name, lines in s.transfer
        },
        "team_transfer": {
            name: [{"key": line.key, **_figures(line.figures)} for line in lines]
            for name, lines in s.team_transfer
        },
        "data_quality": [
            {"code": w.code, "rows": w.rows, "message": w.message} for w in s.warnings
        ],
        "findings": [_finding(f) for f in report.findings],
        "waste_usd": report.waste_usd,
        "not_evaluated": len(report.not_evaluated),
        "coverage": _coverage(report),
        "forecast": forecast_json(report.forecast),
        "anomalies": anomalies_json(report),
        "incremental": reading_json(report),
        "past_forecasts": past_json(report),
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
        "transfer_usd": b.transfer_usd,
        "first_charge": _time(b.first_charge),
        "last_charge": _time(b.last_charge),
        "ended": b.ended,
        "saving_usd": f.saving_usd,
        "expected": f.expected,
        "actual": f.actual,
        "remediation": f.remediation,
        "rise_start": _time(b.rise_start),
        "rise_usd": b.rise_usd,
        "rise_forecast_usd": b.rise_forecast_usd,
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
    """The billing report's JSON text, one-space indent, non-ASCII kept, ending in a newline."""
    return json.dumps(to_json(report), indent=1, ensure_ascii=False) + "\n"


# --- CSV --------------------------------------------------------------------------------------


def render_csv(report: BillingReport) -> str:
    """One row per breakdown line, then the unused capacity and the findings as rows of their
    own `section`: a spreadsheet pivots them; no cell can start a formula."""
    from gpu_audit.report.csv import neutral  # keeps report.csv off `billing`'s start-up

    out = io.StringIO()
    # RFC 4180's CRLF: the csv module quotes a cell holding a character of the line terminator,
    # so a carriage return in a value (a tag, an id) is quoted rather than splitting the row
    writer = csv.writer(out, lineterminator="\r\n")
    header = [
        "section",
        "dimension",
        "key",
        "effective_usd",
        "billed_usd",
        "gpu_hours",
        "spot_gpu_hours",
        "rows",
        "resource_id",
        "rule_id",
        "list_usd",
        "savings_rate",
        "cost_per_gpu_hour_usd",
    ]
    writer.writerow(header)

    def put(*cells: object) -> None:  # every row as wide as the header: a reader maps by column
        row = [neutral("" if c is None else str(c)) for c in cells]
        writer.writerow(row + [""] * (len(header) - len(row)))

    s = report.summary
    period = s.period.name
    totals = (
        ("read", s.usd.read),
        ("gpu", s.usd.gpu),
        ("unused", s.usd.unused),
        ("spend", s.spend),
        ("transfer", s.usd.transfer),
        ("team-transfer", s.usd.team_transfer),
    )
    for label, figures in totals:
        put("total", label, period, *_cells(figures), "", "", *_rates(figures))
    for line in s.usd.left_out:
        put("left-out", "reason", line.key, *_cells(line.figures), "", "", *_rates(line.figures))
    for name, lines in s.breakdowns.items():
        for line in lines:
            put(
                "breakdown",
                name,
                key_label(name, line.key),
                *_cells(line.figures),
                "",
                "",
                *_rates(line.figures),
            )
    for u in s.unused:
        put(
            "unused",
            u.cloud,
            u.instance_type,
            *_cells(u.figures),
            u.reservation_id,
            "",
            *_rates(u.figures),
        )
    for name, lines in s.transfer:
        for line in lines:
            put(
                "transfer",
                name,
                key_label(name, line.key),
                *_cells(line.figures),
                "",
                "",
                *_rates(line.figures),
            )
    for name, lines in s.team_transfer:
        for line in lines:
            put(
                "team-transfer",
                name,
                key_label(name, line.key),
                *_cells(line.figures),
                "",
                "",
                *_rates(line.figures),
            )
    for m in s.months:  # rows: the month's GPU rows; resource_id: the rows read in it
        put("month", "month", m.month, *_cells(m.spend), m.read_rows, "", *_rates(m.spend))
    for i in s.invoices:  # billed in the invoice's currency; effective: the part in the period
        put(
            "invoice",
            i.provider,
            i.billing_period,
            cents(i.in_period_billed),
            cents(i.billed),
            "",
            "",
            i.rows,
            i.currency,
            "",
            "",
            "",
            "",
        )
    for c in s.commitments:  # gpu_hours: used hours, spot_gpu_hours: unused hours
        put(
            "commitment",
            c.kind,
            c.id,
            cents(c.unused_effective),
            "",
            c.used_hours.quantize(Decimal("0.01")),
            c.unused_hours.quantize(Decimal("0.01")),
            "",
            c.cloud,
            "",
            "",
            _rate(c.utilization, "0.0001"),
            "",
        )
    for w in s.warnings:
        put("data-quality", w.code, w.message, "", "", "", "", w.rows, "", "", "", "", "")
    for f in report.open_findings:
        b = f.resource.billing
        put(
            "finding",
            f.severity.label,
            f.resource.instance_type,
            b.effective_usd,
            b.billed_usd,
            b.gpu_hours,
            "",
            "",
            f.resource.id,
            f.rule_id,
        )
    csv_rows(report, put)  # the forecast and the anomalies
    return out.getvalue()


def _rate(value: Decimal | None, step: str) -> str:
    return "" if value is None else f"{value.quantize(Decimal(step))}"


def _rates(figures: Figures) -> list[str]:
    return [
        f"{cents(figures.list)}",
        _rate(figures.savings_rate, "0.0001"),
        _rate(figures.per_gpu_hour, "0.001"),
    ]


def _cells(figures: Figures) -> list[str]:
    return [
        f"{cents(figures.effective)}",
        f"{cents(figures.billed)}",
        f"{figures.gpu_hours.quantize(Decimal('0.01'))}",
        f"{figures.spot_gpu_hours.quantize(Decimal('0.01'))}",
        str(figures.rows),
    ]
