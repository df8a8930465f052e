"""Azure VM prices from the Retail Prices API (no auth): Linux consumption and Spot meters only."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from gpu_audit.errors import CollectorError
from gpu_audit.prices.http import JsonGetter, same_origin
from gpu_audit.prices.pricefile import PriceRow

ENDPOINT_ENV = "GPU_AUDIT_AZURE_PRICES_ENDPOINT"
DEFAULT_ENDPOINT = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"  # filter values are case-sensitive from this version on
PAGE = 100  # items per page the API answers
MAX_PAGES = 1000


def endpoint() -> str:
    """The Retail Prices API's URL: GPU_AUDIT_AZURE_PRICES_ENDPOINT when set, else
    prices.azure.com/api/retail/prices."""
    return os.environ.get(ENDPOINT_ENV, "").strip() or DEFAULT_ENDPOINT


def vm_prices(
    types: Iterable[str], region: str, fetched_at: str, getter: JsonGetter
) -> list[PriceRow]:
    """On-demand (Linux consumption) and spot prices of the catalog's VM sizes in one region."""
    wanted = sorted(set(types))
    skus = " or ".join(f"armSkuName eq '{name}'" for name in wanted)
    query = (
        f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' "
        f"and priceType eq 'Consumption' and ({skus})"
    )
    base = endpoint()
    first = f"{base}?{urlencode({'api-version': API_VERSION, '$filter': query})}"
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for item in _items(first, base, getter):
        capacity = _capacity(item)
        if capacity is None or item.get("armSkuName") not in wanted:
            continue
        if item.get("armRegionName") != region:
            continue
        key = (item["armSkuName"], capacity)
        held = best.get(key)
        if held is None or str(item.get("effectiveStartDate")) > str(
            held.get("effectiveStartDate")
        ):
            best[key] = item
    source = f"Azure Retail Prices API {API_VERSION} $filter=armRegionName eq '{region}'"
    return [
        PriceRow(
            provider="azure",
            type=name,
            region=region,
            capacity=capacity,
            usd_per_hour=float(item["retailPrice"]),
            effective=str(item.get("effectiveStartDate") or fetched_at)[:10],
            fetched_at=fetched_at,
            source=f"{source} meter {item.get('meterName', '')!s} ({item.get('meterId', '')!s})",
        )
        for (name, capacity), item in sorted(best.items())
    ]


def _capacity(item: Any) -> str | None:
    """on-demand or spot for a Linux consumption VM meter billed per hour; None for the rest
    (Windows, Low Priority, DevTest, reservations, other units, other currencies, free)."""
    if not isinstance(item, dict) or item.get("type") != "Consumption":
        return None
    if item.get("unitOfMeasure") != "1 Hour" or item.get("currencyCode", "USD") != "USD":
        return None
    product = str(item.get("productName", ""))
    if "Windows" in product or "Cloud Services" in product:
        return None
    meter = f"{item.get('meterName', '')} {item.get('skuName', '')}"
    if "Low Priority" in meter:
        return None
    price = item.get("retailPrice", item.get("unitPrice"))
    if isinstance(price, bool) or not isinstance(price, int | float) or price <= 0:
        return None
    item["retailPrice"] = price
    return "spot" if "Spot" in meter else "on-demand"


def _items(first: str, base: str, getter: JsonGetter) -> list[Any]:
    """Every item, page by page: `NextPageLink` while there is one; a full page without one
    (the API has answered so for days) goes on with `$skip`; an empty page with a link is
    followed, not taken for the end."""
    found: list[Any] = []
    url: str | None = first
    for _ in range(MAX_PAGES):
        if url is None:
            return found
        page = getter.get(url)
        items = page.get("Items") if isinstance(page, dict) else None
        if not isinstance(items, list):
            raise CollectorError(f"azure: retail prices: no Items list in the answer from {base}")
        found.extend(items)
        link = page.get("NextPageLink")
        if link:
            if not same_origin(base, link):
                raise CollectorError(f"azure: retail prices: NextPageLink leaves {base}")
            url = link
        elif len(items) >= PAGE:
            url = f"{first}&{urlencode({'$skip': len(found)})}"
        else:
            url = None
    raise CollectorError(f"azure: retail prices: more than {MAX_PAGES} pages from {base}")
