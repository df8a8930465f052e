"""`catalog diff`: a price file against the bundled catalog, per type, region and capacity."""

from __future__ import annotations

from collections.abc import Callable

from gpu_audit.catalog import bundled_prices
from gpu_audit.core.frozen import record
from gpu_audit.prices.pricefile import PriceFile


@record
class Change:
    type: str
    region: str
    capacity: str
    old: float | None  # the bundled price; None where the catalog has none
    new: float

    @property
    def percent(self) -> float | None:
        """The change as a percentage of the old price to one decimal, None when there is no old
        price."""
        return None if not self.old else round((self.new - self.old) / self.old * 100, 1)


def changes(prices: PriceFile) -> tuple[list[Change], int]:
    """Rows whose price differs from the bundled one (or that it lacks), and how many agree."""
    bundled: dict[tuple[str, str, str], float | None] = {}
    for _cloud, quote in bundled_prices():
        item = (quote.item or "").lower()
        bundled[(item, quote.region, "on-demand")] = quote.on_demand
        bundled[(item, quote.region, "spot")] = quote.spot
    found, same = [], 0
    for row in prices.rows:
        old = bundled.get((row.type.lower(), row.region, row.capacity))
        if old is not None and abs(old - row.usd_per_hour) < 5e-6:
            same += 1
            continue
        found.append(Change(row.type, row.region, row.capacity, old, row.usd_per_hour))
    return found, same


def ordered(found: list[Change]) -> list[Change]:
    """Largest change first; prices the catalog lacks last."""
    return sorted(found, key=lambda c: (c.percent is None, -abs(c.percent or 0), c.type))


def table_rows(
    found: list[Change], usd: Callable[[float | None], str]
) -> list[tuple[str, str, str, str, str, str]]:
    """`usd` writes a price, or its absence, as every report does (`report.values.money`)."""

    def pct(change: Change) -> str:
        return "new" if change.percent is None else f"{change.percent:+.1f}%"

    return [(c.type, c.region, c.capacity, usd(c.old), usd(c.new), pct(c)) for c in ordered(found)]
