"""The quarter ahead in every billing format: the forecast and the spend rises (anomalies).

JSON keys `forecast` and `anomalies` (optional in billing-v1.schema.json), CSV rows of sections
`forecast` and `anomaly`, and Markdown/terminal sections; the Markdown has a Mermaid
`xychart-beta` of the GPU spend per day, with the same figures in a table beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from gpu_audit.billing.anomaly import Rise
from gpu_audit.billing.forecast import UNTAGGED, Forecast, Projection
from gpu_audit.billing.report import BillingReport
from gpu_audit.billing.summary import cents
from gpu_audit.report.values import money


def _usd(amount: Decimal) -> float:
    return float(cents(amount))


def _projection(p: Projection) -> dict[str, Any]:
    return {
        "key": p.key,
        "to_date_usd": _usd(p.to_date),
        "daily_mean_usd": _usd(p.daily_mean),
        "forecast_usd": _usd(p.forecast),
        "low_usd": _usd(p.low),
        "high_usd": _usd(p.high),
    }


def forecast_json(f: Forecast | None) -> dict[str, Any] | None:
    """The forecast as the JSON `forecast` object (dates ISO, dollars as numbers), None without
    one."""
    if f is None:
        return None
    return {
        "method": f.method,
        "last_day": f.last_day.isoformat(),
        "window_days": f.window_days,
        "days_left": f.days_left,
        "windows": [
            {
                "cloud": w.cloud,
                "first": w.first.isoformat(),
                "last": w.last.isoformat(),
                "days_left": w.days_left,
            }
            for w in f.windows
        ],
        "total": _projection(f.total),
        "clouds": [_projection(p) for p in f.clouds],
        "team_key": f.team_key,
        "teams": [_projection(p) for p in f.teams],
        "daily": [{"day": d.isoformat(), "gpu_usd": _usd(v)} for d, v in f.daily],
    }


def reading_json(report: BillingReport) -> dict[str, Any] | None:
    """What an incremental run (`--history`) read and reused."""
    r = report.reading
    if r is None:
        return None
    return {
        "history": r.history,
        "full": r.full,
        "files_read": len(r.read),
        "files_reused": r.reused,
        "files_dropped": r.dropped,
    }


def past_json(report: BillingReport) -> list[dict[str, Any]]:
    """Earlier runs' total forecasts of the period, beside the GPU spend read now."""
    return [
        {
            "recorded_at": r.recorded_at,
            "last_day": r.last_day,
            "to_date_usd": r.to_date_usd,
            "forecast_usd": r.forecast_usd,
            "low_usd": r.low_usd,
            "high_usd": r.high_usd,
        }
        for r in report.past_forecasts
    ]


def anomalies(report: BillingReport) -> list[tuple[Rise, Any]]:
    """The rises the policy judged anomalies (open or waived findings of a `rise_usd` rule),
    with their finding, largest first."""
    by_key = {(r.series, r.key): r for r in report.rises}
    found = []
    for finding in report.findings:
        res = finding.resource
        if res.billing.rise_usd is None or not (finding.field or "").startswith("billing.rise"):
            continue
        key = (
            ("team", _team(res))
            if res.kind.value == "spend"
            else ("resource", f"{res.provider}:{res.id}")
        )
        if key in by_key:
            found.append((by_key[key], finding))
    return sorted(found, key=lambda pair: (-pair[0].above, pair[0].key))


def _team(resource: Any) -> str:
    rid = str(resource.id)
    return UNTAGGED if rid == "team:untagged" else rid.removeprefix("team:")


def anomalies_json(report: BillingReport) -> list[dict[str, Any]]:
    """The spend rises as the JSON `anomalies` list: each rise's series, key, rule and open or
    waived status, its days and its dollars."""
    return [
        {
            "series": rise.series,
            "key": rise.key,
            "rule_id": finding.rule_id,
            "status": "waived" if finding.waiver is not None else "open",
            "start": rise.start.isoformat(),
            "last_day": rise.end.isoformat(),
            "ongoing": rise.ongoing,
            "baseline_usd": _usd(rise.baseline),
            "peak_pct": float(round(rise.peak_pct, 1)),
            "above_usd": _usd(rise.above),
            "forecast_usd": _usd(rise.forecast),
        }
        for rise, finding in anomalies(report)
    ]


def csv_rows(report: BillingReport, put: Callable[..., None]) -> None:
    """`forecast` rows (dimension total, cloud or team; effective_usd the forecast, billed_usd
    the spend to date) and `anomaly` rows (key the start day, effective_usd the dollars above
    the baseline so far, billed_usd by the period's end)."""
    f = report.forecast
    if f is not None:
        lines = [("total", f.total), *(("cloud", p) for p in f.clouds)]
        lines += [(f"tag:{f.team_key}", p) for p in f.teams]
        for dimension, p in lines:
            put(
                "forecast",
                dimension,
                p.key,
                cents(p.forecast),
                cents(p.to_date),
                "",
                "",
                "",
                "",
                "",
            )
    for rise, finding in anomalies(report):
        put(
            "anomaly",
            rise.series,
            rise.start.isoformat(),
            cents(rise.above),
            cents(rise.forecast),
            "",
            "",
            "",
            rise.key,
            finding.rule_id,
        )


def text_lines(report: BillingReport, esc: Callable[[str], str], markdown: bool) -> list[str]:
    """The sections `Forecast to the period's end` and `GPU spend anomalies`."""
    fmt = "markdown" if markdown else "text"
    out: list[str] = []
    f = report.forecast
    head = "## " if markdown else ""
    if f is not None:
        out += [
            f"{head}Forecast to the period's end",
            "",
            f"{esc(f.method)}: {f.window_days} days read to {f.last_day} (the mean's days), "
            f"{f.days_left} days left; the band is the lowest and highest 7-day mean in the "
            "window.",
            "",
        ]
        rows = [("total", f.total), *(("cloud", p) for p in f.clouds)]
        rows += [(f"team ({esc(f.team_key)})" if f.team_key else "team", p) for p in f.teams]
        out += _table(
            ["", "key", "to date", "daily mean", "forecast", "band"],
            [
                [
                    what,
                    esc(p.key),
                    money(_usd(p.to_date), fmt),
                    money(_usd(p.daily_mean), fmt),
                    money(_usd(p.forecast), fmt),
                    f"{money(_usd(p.low), fmt)} – {money(_usd(p.high), fmt)}",
                ]
                for what, p in rows
            ],
            markdown,
        )
        if markdown:
            out += ["", *_chart(f)]
        out.append("")
    if report.past_forecasts:
        spent = report.summary.usd.gpu.effective
        now = f"GPU spend read now: {money(_usd(spent), fmt)} (to {_last_read(report)})."
        out += [f"{head}Earlier forecasts of this period", "", now, ""]
        out += _table(
            ["run of", "days read to", "forecast", "band", "then to date"],
            [
                [
                    esc(r.recorded_at[:10]),
                    esc(r.last_day),
                    money(r.forecast_usd, fmt),
                    f"{money(r.low_usd, fmt)} – {money(r.high_usd, fmt)}",
                    money(r.to_date_usd, fmt),
                ]
                for r in report.past_forecasts[-10:]
            ],
            markdown,
        )
        out.append("")
    found = anomalies(report)
    if found:
        out += [f"{head}GPU spend anomalies", ""]
        out += _table(
            [
                "team or resource",
                "started",
                "baseline/day",
                "peak",
                "above so far",
                "by period end",
            ],
            [
                [
                    f"{rise.series} {esc(rise.key)}",
                    rise.start.isoformat() + (" (going on)" if rise.ongoing else f" to {rise.end}"),
                    money(_usd(rise.baseline), fmt),
                    f"+{round(rise.peak_pct)}%",
                    money(_usd(rise.above), fmt),
                    money(_usd(rise.forecast), fmt),
                ]
                for rise, _ in found
            ],
            markdown,
        )
        out.append("")
    return out


def _last_read(report: BillingReport) -> str:
    f = report.forecast
    return str(f.last_day) if f is not None else "the period's end"


def _table(head: list[str], rows: Iterable[list[str]], markdown: bool) -> list[str]:
    rows = list(rows)
    if markdown:
        return [
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
            *("| " + " | ".join(row) + " |" for row in rows),
        ]
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=True)]
    return [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in (head, *rows)
    ]


def _chart(f: Forecast) -> list[str]:
    """A Mermaid `xychart-beta` of the GPU spend per day read (GitHub renders it), and the same
    figures as a table (in a collapsed block) for every other reader."""
    labels = ", ".join(f'"{d:%m-%d}"' for d, _ in f.daily)
    values = ", ".join(f"{_usd(v):.2f}" for _, v in f.daily)
    top = max((_usd(v) for _, v in f.daily), default=0.0)
    return [
        "```mermaid",
        "xychart-beta",
        f'  title "GPU spend per day, {f.period}"',
        f"  x-axis [{labels}]",
        f'  y-axis "USD" 0 --> {max(top * 1.1, 1.0):.0f}',
        f"  bar [{values}]",
        "```",
        "",
        "<details><summary>GPU spend per day (table)</summary>",
        "",
        "| day | GPU spend |",
        "|---|---|",
        *(f"| {d} | {money(_usd(v), 'markdown')} |" for d, v in f.daily),
        "",
        "</details>",
    ]
