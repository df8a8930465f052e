"""The Markdown report's "Reservations": capacity bought ahead, how full it runs, what its empty
instances cost (absent when the scan saw no reservation)."""

from __future__ import annotations

from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import ScanResult
from gpu_audit.report.markdown_resources import gpu, where
from gpu_audit.report.markdown_text import inline, table
from gpu_audit.report.values import money

HEADERS = ["Reservation (type)", "Where", "GPU / instance", "Used / total", "Ends", "Unused"]
ROWS = 100  # the JSON and CSV reports list every one


def totals(result: ScanResult) -> tuple[int, int, int, float] | None:
    """(reservations, instances used, instances reserved, dollars unused); None without any."""
    held = [r for r in result.resources if r.kind is Kind.RESERVATION]
    if not held:
        return None
    used = sum(r.reservation.used or 0 for r in held)
    total = sum(r.reservation.total or 0 for r in held)
    return len(held), used, total, sum(r.reservation.unused_usd or 0.0 for r in held)


def reservations(result: ScanResult) -> list[str]:
    """The "Reservations" section: how full the reservations run and what their empty instances
    cost, emptiest first; no lines without a reservation."""
    summed = totals(result)
    if summed is None:
        return []
    count, used, total, unused = summed
    held = [r for r in result.resources if r.kind is Kind.RESERVATION]
    held.sort(key=lambda r: (-(r.reservation.unused_usd or 0.0), r.provider, r.id))
    rows = [_row(r) for r in held[:ROWS]]
    lines = [
        "## Reservations",
        "",
        f"{count} reservation{'' if count == 1 else 's'}: {used} of {total} reserved "
        f"instances in use; {money(unused, 'markdown')} paid for unused instances (each "
        "to its end, at most a month, at its rate).",
        "",
        *table(HEADERS, rows),
    ]
    if len(held) > ROWS:
        lines += ["", f"… and {len(held) - ROWS} more (the JSON and CSV reports list them all)."]
    return lines


def _row(resource: Resource) -> list[str]:
    held = resource.reservation
    name = resource.name or resource.id
    zone = f" {resource.zone}" if resource.zone else ""
    used = "?" if held.used is None else str(held.used)
    total = "?" if held.total is None else str(held.total)
    ends = held.ends_at.strftime("%Y\u2011%m\u2011%d %H:%M UTC") if held.ends_at else "–"
    unused = money(held.unused_usd, "markdown")
    if held.unused_usd is not None and held.hours_left is not None:
        unused += f" ({held.unused or 0} × {held.hours_left:g} h)"
    kind = ", ".join(v for v in (held.type, held.match) if v)
    return [
        inline(name, 80) + (f" ({inline(kind, 60)})" if kind else ""),
        inline(where(resource) + zone, 80),
        gpu(resource),
        f"{used} / {total}",
        ends,
        unused,
    ]
