"""`catalog refresh` between the CLI and the sources: fetch, merge, write the file atomically."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime

from gpu_audit.core.frozen import record
from gpu_audit.core.writer import write_atomic
from gpu_audit.errors import CollectorError, ConfigError
from gpu_audit.prices.aws_client import Counter
from gpu_audit.prices.aws_pricing import ec2_on_demand, managed_spot, sagemaker_on_demand
from gpu_audit.prices.aws_spot import spot_prices
from gpu_audit.prices.azure_retail import vm_prices
from gpu_audit.prices.gcp_billing import billing_session, gcp_prices
from gpu_audit.prices.gcp_vertex import vertex_prices
from gpu_audit.prices.http import JsonGetter
from gpu_audit.prices.pricefile import PriceFile, PriceRow, dumps, merged, parse, read_prices
from gpu_audit.prices.targets import Targets, targets


@record
class Refreshed:
    provider: str
    rows: int  # rows of this provider now in the file
    regions: tuple[str, ...]
    requests: int  # HTTP requests this refresh sent (retries included)
    unpriced: tuple[str, ...]  # `type region` pairs the source had no on-demand price for


def _aws(wanted: Targets, fetched_at: str, now: datetime) -> tuple[list[PriceRow], int]:
    counter = Counter()
    rows: list[PriceRow] = []
    for region in wanted.regions:
        rows += ec2_on_demand(wanted.types, region, fetched_at, counter)
        rows += spot_prices(wanted.types, region, fetched_at, now, counter)
        if wanted.managed:
            rows += sagemaker_on_demand(wanted.managed, region, fetched_at, counter)
    return rows + managed_spot(rows), sum(counter.sent.values())


def _azure(wanted: Targets, fetched_at: str, now: datetime) -> tuple[list[PriceRow], int]:
    getter = JsonGetter("azure: retail prices")
    rows: list[PriceRow] = []
    for region in wanted.regions:
        rows += vm_prices(wanted.types, region, fetched_at, getter)
    return rows, getter.sent


def _gcp(wanted: Targets, fetched_at: str, now: datetime) -> tuple[list[PriceRow], int]:
    session = billing_session()  # one session for both services: every request counted
    rows = gcp_prices(session, wanted, fetched_at) + vertex_prices(session, wanted, fetched_at)
    return rows, session.sent


SOURCES: dict[str, Callable[[Targets, str, datetime], tuple[list[PriceRow], int]]] = {
    "aws": _aws,
    "gcp": _gcp,
    "azure": _azure,
}


def refresh(
    provider: str, regions: tuple[str, ...], output: str, now: datetime | None = None
) -> Refreshed:
    """Fetch `provider`'s prices and write them into `output`, keeping the other providers' rows.

    Nothing is written unless every request succeeded and at least one price was found: a
    failed refresh leaves the previous file as it was."""
    now = now or datetime.now(UTC)
    fetched_at = now.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    wanted = targets(provider, regions)
    old = read_prices(output) if os.path.exists(output) else None  # a bad file: refuse first
    rows, sent = SOURCES[provider](wanted, fetched_at, now)
    if not rows:
        raise CollectorError(
            f"{provider}: no prices found for {len(wanted.types)} types in "
            f"{', '.join(wanted.regions)}; {output} left as it was"
        )
    fresh = PriceFile(tuple(rows), fetched_at, {provider: sent})
    text = dumps(merged(old, fresh, [provider]))
    try:  # what the price API answered must read back: a file no run could use is not written
        parse(output, json.loads(text))
    except ConfigError as exc:
        detail = str(exc).split(": price file: ", 1)[-1]
        raise CollectorError(
            f"{provider}: the price API answered a value a price file cannot hold ({detail}); "
            f"{output} left as it was"
        ) from exc
    write_atomic(output, text)
    priced = {(row.type, row.region) for row in rows if row.capacity == "on-demand"}
    missing = tuple(
        f"{name} {region}"
        for region in wanted.regions
        for name in wanted.types
        if (name, region) not in priced
    )
    return Refreshed(provider, len(rows), wanted.regions, sent, missing)
