"""GCP prices from the Cloud Billing Catalog API: GPU, core and RAM SKUs composed per type
(Compute Engine here, the Vertex AI rate card in gcp_vertex)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from gpu_audit.catalog import bundled_prices, instance_types
from gpu_audit.errors import CollectorError
from gpu_audit.prices import gcp_skus
from gpu_audit.prices.gcp_session import BillingSession
from gpu_audit.prices.pricefile import PriceRow
from gpu_audit.prices.targets import Targets

ENDPOINT_ENV = "GPU_AUDIT_GCP_BILLING_ENDPOINT"
API_KEY_ENV = "GPU_AUDIT_GCP_API_KEY"
DEFAULT_ENDPOINT = "https://cloudbilling.googleapis.com"
COMPUTE = "6F81-5844-456A"
PAGE = 5000  # the API's largest pageSize
MAX_PAGES = 200

# (base description, region, capacity) → (USD per unit-hour, effectiveTime, skuId)
Rates = dict[tuple[str, str, str], tuple[float, str, str]]


def billing_session() -> BillingSession:
    """A Billing Catalog session for Compute Engine SKUs (endpoint and API key from the environment
    when set)."""
    return BillingSession(ENDPOINT_ENV, API_KEY_ENV, DEFAULT_ENDPOINT)


def gcp_prices(session: BillingSession, wanted: Targets, fetched_at: str) -> list[PriceRow]:
    """Compute Engine rows: the catalog's GCP types, `gpu:<MODEL>` and N1 hosts."""
    rates = read_rates(session, set(wanted.regions))
    return [*_families(rates, wanted, fetched_at), *_n1(rates, wanted, fetched_at)]


def read_rates(session: BillingSession, regions: set[str]) -> Rates:
    """The hourly USD rate of each wanted Compute Engine SKU (by description, region and capacity)
    in `regions`; a SKU whose description and usage type disagree is left out."""
    keep = gcp_skus.wanted_descriptions()
    rates: Rates = {}
    for sku in skus(session, COMPUTE):
        category = sku.get("category") or {}
        capacity = gcp_skus.USAGE.get(category.get("usageType", ""))
        description = str(sku.get("description", ""))
        base = gcp_skus.base_description(description)
        if capacity is None or base not in keep:
            continue
        if (capacity == "spot") != gcp_skus.is_spot(description):
            continue  # a description and a usage type that disagree: neither is trusted
        price = hourly(sku)
        if price is None:
            continue
        for region in sku.get("serviceRegions") or ():
            if region in regions:
                rates[(base, region, capacity)] = (*price, str(sku.get("skuId", "")))
    return rates


def skus(session: BillingSession, service: str) -> Iterator[dict[str, Any]]:
    """Every SKU of a Billing Catalog service, page after page."""
    token = ""
    for _ in range(MAX_PAGES):
        query = {"pageSize": PAGE, "currencyCode": "USD", **({"pageToken": token} if token else {})}
        page = session.get(f"/v1/services/{service}/skus?{urlencode(query)}")
        skus = page.get("skus") if isinstance(page, dict) else None
        if not isinstance(skus, list):
            raise CollectorError("gcp: billing catalog: no skus list in the answer")
        yield from (sku for sku in skus if isinstance(sku, dict))
        token = page.get("nextPageToken") or ""
        if not token:
            return
    raise CollectorError(f"gcp: billing catalog: more than {MAX_PAGES} pages")


def hourly(sku: dict[str, Any]) -> tuple[float, str] | None:
    """The newest pricingInfo's first tier, per hour: units + nanos / 1e9, and its effectiveTime."""
    infos = [i for i in sku.get("pricingInfo") or () if isinstance(i, dict)]
    if not infos:
        return None
    info = max(infos, key=lambda i: str(i.get("effectiveTime", "")))
    expression = info.get("pricingExpression") or {}
    if expression.get("usageUnit") not in ("h", "GiBy.h"):
        return None
    tiers = expression.get("tieredRates") or []
    if not tiers:
        return None
    price = tiers[-1].get("unitPrice") or {}
    if price.get("currencyCode", "USD") != "USD":
        return None
    try:
        usd = int(price.get("units") or 0) + int(price.get("nanos") or 0) / 1e9
    except (TypeError, ValueError):
        return None
    return (usd, str(info.get("effectiveTime", ""))) if usd > 0 else None


def row(
    item: str,
    region: str,
    capacity: str,
    usd: float,
    used: list[tuple[float, str, str]],
    fetched_at: str,
    how: str,
    service: str = COMPUTE,
) -> PriceRow:
    """A price file row composed from SKUs, naming each SKU it used and how it was composed."""
    ids = ",".join(sku for _, _, sku in used)
    return PriceRow(
        provider="gcp",
        type=item,
        region=region,
        capacity=capacity,
        usd_per_hour=round(usd, 6),
        effective=min(when for _, when, _ in used)[:10],
        fetched_at=fetched_at,
        source=f"Cloud Billing Catalog services/{service}/skus {how} (skuId {ids})",
    )


def _families(rates: Rates, wanted: Targets, fetched_at: str) -> Iterator[PriceRow]:
    for spec in instance_types():
        parts = gcp_skus.FAMILIES.get(gcp_skus.family(spec)) if spec.cloud == "gcp" else None
        if parts is None:
            continue
        core, ram, gpu = parts
        for region in wanted.regions:
            for capacity in ("on-demand", "spot"):
                found = [rates.get((gpu, region, capacity))]
                if core and ram:
                    found += [
                        rates.get((core, region, capacity)),
                        rates.get((ram, region, capacity)),
                    ]
                if any(rate is None for rate in found) or (core and spec.vcpus is None):
                    continue  # a part unpriced: the bundled price stays
                used = [rate for rate in found if rate is not None]
                usd = used[0][0] * spec.gpu_count
                how = f"{spec.gpu_count} x {gpu}"
                if core and ram:
                    usd += used[1][0] * (spec.vcpus or 0) + used[2][0] * (spec.memory_gib or 0)
                    how += f" + {spec.vcpus} x {core} + {spec.memory_gib:g} GiB x {ram}"
                yield row(spec.instance_type, region, capacity, usd, used, fetched_at, how)


def _n1(rates: Rates, wanted: Targets, fetched_at: str) -> Iterator[PriceRow]:
    hosts = sorted({q.item or "" for c, q in bundled_prices() if c == "gcp"})
    for region in wanted.regions:
        for capacity in ("on-demand", "spot"):
            for model, description in sorted(gcp_skus.ATTACHED.items()):
                rate = rates.get((description, region, capacity))
                if rate is not None:
                    yield row(
                        f"gpu:{model}",
                        region,
                        capacity,
                        rate[0],
                        [rate],
                        fetched_at,
                        f"1 x {description}",
                    )
            core = rates.get((gcp_skus.N1[0], region, capacity))
            ram = rates.get((gcp_skus.N1[1], region, capacity))
            if core is None or ram is None:
                continue
            for host in hosts:
                shape = gcp_skus.n1_shape(host)
                if shape is not None:
                    vcpus, gib = shape
                    usd = core[0] * vcpus + ram[0] * gib
                    how = f"{vcpus} x {gcp_skus.N1[0]} + {gib:g} GiB x {gcp_skus.N1[1]}"
                    yield row(host, region, capacity, usd, [core, ram], fetched_at, how)
