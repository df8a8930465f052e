"""Azure Resource Graph eviction-rate rows (`SpotResources`) as interruption-rate rows.

Each row of type `microsoft.compute/skuspotevictionrate/location` gives a VM size (`sku.name`,
or `properties.skuName`), a region (`location`) and `properties.evictionRate`, a band:
`0-5`, `5-10`, `10-15`, `15-20` or `20+` percent. Microsoft documents the eviction rates as
"for the last 28 trailing days" (docs/spot.md), so a row's rate is the band's upper end ÷ 100
÷ 672 instance-hours (28 × 24): the upper end, never the lower; the open `20+` band is taken at
100, as the AWS feed states its own open band. A band of another spelling is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError

HOURS_PER_WINDOW = 28 * 24.0  # "eviction rates for the last 28 trailing days"
TYPE = "microsoft.compute/skuspotevictionrate/location"
SOURCE = "azure-spot-eviction-rates"
BANDS = {"0-5": 5.0, "5-10": 10.0, "10-15": 15.0, "15-20": 20.0, "20+": 100.0}
_BAND = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)|(\+))\s*%?\s*")


def band_rate(upper: float) -> float:
    """A band's upper end (percent evicted over 28 days) per instance-hour."""
    return round(upper / 100 / HOURS_PER_WINDOW, 8)


def band_of(text: Any) -> str | None:
    """`"5-10"`, `"5 - 10%"` → `5-10`; `"20+"` → `20+`; anything else None."""
    if not isinstance(text, str):
        return None
    match = _BAND.fullmatch(text)
    if match is None:
        return None
    low, high, plus = match.groups()
    band = f"{int(low)}+" if plus else f"{int(low)}-{int(high)}"
    return band if band in BANDS else None


def _size(row: dict[str, Any]) -> object:
    sku = row.get("sku")
    if isinstance(sku, dict) and sku.get("name"):
        return sku["name"]
    properties = row.get("properties")
    return properties.get("skuName") if isinstance(properties, dict) else None


def eviction_rows(
    rows: Iterable[Any], day: str, types: Iterable[str], regions: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """The rows of the catalog's `types` (matched without case, written as the catalog spells
    them), sorted, as the data file's `rows`; a row of another shape is one error line."""
    spelled = {t.lower(): t for t in types}
    wanted = None if regions is None else {r.lower() for r in regions}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for index, row in enumerate(rows):
        where = f"azure resource graph: SpotResources row {index}"
        if not isinstance(row, dict) or str(row.get("type", "")).lower() != TYPE:
            raise ConfigError(f"{where}: expected an object of type {TYPE}")
        size, region = _size(row), row.get("location")
        if not isinstance(size, str) or not isinstance(region, str) or not size or not region:
            raise ConfigError(f"{where}: expected sku.name and location")
        kind = spelled.get(size.lower())
        if kind is None or (wanted is not None and region.lower() not in wanted):
            continue
        properties = row.get("properties")
        raw = properties.get("evictionRate") if isinstance(properties, dict) else None
        band = band_of(raw)
        if band is None:
            raise ConfigError(
                f"{where} ({printable(size)} {printable(region)}): evictionRate "
                f"{printable(repr(raw))} is not a band (0-5, 5-10, 10-15, 15-20, 20+)"
            )
        found[(kind, region.lower())] = {
            "provider": "azure",
            "type": kind,
            "region": region.lower(),
            "per_hour": band_rate(BANDS[band]),
            "public": f"evictionRate {band}% (28 days, upper end {BANDS[band]:g})",
            "source": SOURCE,
            "date": day,
        }
    return [found[key] for key in sorted(found)]
