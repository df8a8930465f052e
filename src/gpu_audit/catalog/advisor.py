"""The AWS Spot Instance Advisor feed (`spot-advisor-data.json`) as interruption-rate rows.

The feed gives, per region, OS and instance type, `r`: the index of a frequency-of-interruption
band in its `ranges` (`<5%`, `5-10%`, `10-15%`, `15-20%`, `>20%`, each with the feed's own `max`
5, 11, 16, 22 and 100): the share of the type's spot capacity AWS reclaimed over the trailing
month. A row's rate is that band's `max` ÷ 100 ÷ 730 instance-hours in a month: the band's upper
end (never its lower), spread over the month.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpu_audit.errors import ConfigError

HOURS_PER_MONTH = 730.0
FEED = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
SOURCE = "aws-spot-advisor"


def band_rate(band_max: float) -> float:
    """A band's upper end (percent of capacity reclaimed per month) per instance-hour."""
    return round(band_max / 100 / HOURS_PER_MONTH, 8)


def advisor_rows(
    feed: Any, day: str, types: Iterable[str], regions: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """Linux rows of `types` (every region the feed has, or `regions`), sorted, as the data
    file's `rows`; a feed of another shape is one error line."""
    if not isinstance(feed, dict) or not isinstance(feed.get("spot_advisor"), dict):
        raise ConfigError("spot advisor feed: expected an object with spot_advisor and ranges")
    ranges = {r.get("index"): r for r in feed.get("ranges") or () if isinstance(r, dict)}
    wanted = set(types)
    rows = []
    for region, systems in sorted(feed["spot_advisor"].items()):
        if regions is not None and region not in set(regions):
            continue
        linux = (systems or {}).get("Linux") or {}
        for kind, entry in sorted(linux.items()):
            if kind not in wanted or not isinstance(entry, dict):
                continue
            band = ranges.get(entry.get("r"))
            if band is None or not isinstance(band.get("max"), int | float):
                raise ConfigError(
                    f"spot advisor feed: {region} {kind}: r {entry.get('r')!r} is no range"
                )
            rows.append(
                {
                    "provider": "aws",
                    "type": kind,
                    "region": region,
                    "per_hour": band_rate(band["max"]),
                    "public": f"{band['label']} (r={entry['r']}, max {band['max']})",
                    "source": SOURCE,
                    "date": day,
                }
            )
    return rows
