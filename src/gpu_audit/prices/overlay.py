"""Lay a price file over the bundled catalog (`--prices FILE`), and say how old its prices are."""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from datetime import date, datetime

from gpu_audit.catalog import PriceQuote, enrich, set_overlay
from gpu_audit.core.frozen import record
from gpu_audit.prices.pricefile import PriceFile, PriceRow, read_prices


@record
class PricesInUse:
    """Which prices a run used: the bundled catalog, or a price file laid over it."""

    path: str | None  # None: the bundled catalog alone
    fetched: str = ""  # the day of the file's oldest fetch (what its age is counted from)
    rows: int = 0

    def describe(self) -> str:
        """The prices in use as the report's header says it: `bundled catalog`, or the file with its
        rows and fetch day over it."""
        if self.path is None:
            return "bundled catalog"
        name = os.path.basename(self.path)
        return f"{name} ({self.rows} prices fetched {self.fetched}) over the bundled catalog"


BUNDLED = PricesInUse(None)


def use_prices(path: str | None) -> PricesInUse:
    """Read the price file and lay it over the catalog (None: the bundled catalog alone)."""
    enrich._catalog_facts.cache_clear()  # its answers came from the prices being replaced
    savings = sys.modules.get("gpu_audit.policy.savings")  # not imported yet: nothing cached
    if savings is not None:
        savings._target_price.cache_clear()
    if not path:
        set_overlay([])
        return BUNDLED
    prices = read_prices(path)
    set_overlay(quotes(prices))
    fetched = min((row.fetched_at for row in prices.rows), default=prices.generated_at)
    return PricesInUse(path, _day(fetched), len(prices.rows))


def quotes(prices: PriceFile) -> list[tuple[str, PriceQuote]]:
    """One (cloud, quote) per item and region: the on-demand and the spot row joined."""
    grouped: dict[tuple[str, str, str], dict[str, PriceRow]] = defaultdict(dict)
    for row in prices.rows:
        grouped[(row.provider, row.type, row.region)][row.capacity] = row
    found = []
    for (provider, item, region), rows in sorted(grouped.items()):
        on_demand, spot = rows.get("on-demand"), rows.get("spot")
        used = [row for row in (on_demand, spot) if row is not None]
        quote = PriceQuote(
            on_demand=on_demand.usd_per_hour if on_demand else None,
            spot=spot.usd_per_hour if spot else None,
            region=region,
            as_of=min(_day(row.effective) for row in used),
            source="; ".join(f"{row.source} (fetched {row.fetched_at[:10]})" for row in used),
            exact_region=True,
            item=item,
        )
        found.append((provider, quote))
    return found


def _day(text: str) -> str:
    return text[:10]


def stale_warning(used: PricesInUse, now: datetime, max_age_days: int) -> str | None:
    """One line when the price file was fetched more than `max_age_days` ago, else None."""
    if used.path is None or not used.fetched:
        return None
    try:
        fetched = date.fromisoformat(used.fetched)
    except ValueError:
        return None
    age = (now.date() - fetched).days
    if age <= max_age_days:
        return None
    return (
        f"gpu-audit: warning: {used.path}: prices fetched {used.fetched} are {age} days old "
        f"(over {max_age_days}); refresh them with gpu-audit catalog refresh"
    )
