"""AWS spot prices (ec2:DescribeSpotPriceHistory): a region's is the median of its zones' latest."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from statistics import median
from typing import Any

from gpu_audit.prices.aws_client import Counter, client, failure
from gpu_audit.prices.pricefile import PriceRow, ZonePrice

PRODUCT = "Linux/UNIX"
PAGE = 1000  # DescribeSpotPriceHistory's largest MaxResults


def spot_prices(
    types: Iterable[str], region: str, fetched_at: str, now: datetime, counter: Counter
) -> list[PriceRow]:
    """Per type, each zone's latest price (older points ignored) and their median."""
    wanted = sorted(set(types))
    ec2 = client("ec2", region, counter)
    pages = ec2.get_paginator("describe_spot_price_history").paginate(
        InstanceTypes=wanted,
        ProductDescriptions=[PRODUCT],
        StartTime=now,  # with StartTime now, each zone's current price (and maybe older ones)
        PaginationConfig={"PageSize": PAGE},
    )
    latest: dict[tuple[str, str], tuple[datetime, float]] = {}
    try:
        for page in pages:
            for point in page.get("SpotPriceHistory", []):
                _keep_latest(latest, point, wanted)
    except Exception as exc:  # botocore's ClientError, connection and parse errors
        if type(exc).__module__.startswith(("botocore", "urllib3")):
            raise failure(exc, f"aws: ec2:DescribeSpotPriceHistory {region}") from exc
        raise
    query = f"ec2:DescribeSpotPriceHistory {region} ProductDescriptions={PRODUCT}"
    rows = []
    for name in wanted:
        zones = tuple(
            ZonePrice(zone, usd, when.isoformat().replace("+00:00", "Z"))
            for (kind, zone), (when, usd) in sorted(latest.items())
            if kind == name
        )
        if not zones:
            continue
        newest = max(zone.observed_at for zone in zones)
        rows.append(
            PriceRow(
                provider="aws",
                type=name,
                region=region,
                capacity="spot",
                usd_per_hour=round(median(zone.usd_per_hour for zone in zones), 6),
                effective=newest,
                fetched_at=fetched_at,
                source=f"{query}; median of {len(zones)} zones' latest prices",
                zones=zones,
            )
        )
    return rows


def _keep_latest(
    latest: dict[tuple[str, str], tuple[datetime, float]], point: Any, wanted: list[str]
) -> None:
    name, zone = point.get("InstanceType"), point.get("AvailabilityZone")
    when = point.get("Timestamp")
    if name not in wanted or not zone or not isinstance(when, datetime):
        return
    if point.get("ProductDescription") != PRODUCT:
        return  # Windows, SUSE, Red Hat: never Linux spot
    try:
        usd = float(point.get("SpotPrice", ""))
    except ValueError:
        return
    if usd <= 0:
        return
    held = latest.get((name, zone))
    if held is None or when > held[0]:
        latest[(name, zone)] = (when, usd)
