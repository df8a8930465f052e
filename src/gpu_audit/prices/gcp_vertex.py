"""Vertex AI custom-training prices from the Vertex AI service's own Billing Catalog SKUs."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpu_audit.catalog import bundled_prices, instance_types
from gpu_audit.prices import gcp_skus
from gpu_audit.prices.gcp_billing import Rates, hourly, row, skus
from gpu_audit.prices.gcp_session import BillingSession
from gpu_audit.prices.pricefile import PriceRow
from gpu_audit.prices.targets import Targets

VERTEX = "C7E2-9256-1C43"  # the Cloud Billing Catalog's "Vertex AI" service
TRAINING = "Vertex AI: Training/Pipelines on "
# family → (core SKU, RAM SKU, GPU SKU), as the Vertex service words them after TRAINING and
# before " in <location>" (docs/catalog.md cites where each wording was seen). Nothing else is
# read: a family whose wording is not established keeps its bundled `vertex:` price.
FAMILIES: dict[str, tuple[str, str, str]] = {
    "a3-highgpu": ("A3 Instance Core", "A3 Instance RAM", "NVIDIA H100 80GB"),
}
N1 = ("N1 Predefined Instance Core", "N1 Predefined Instance Ram")
# a training-looking description with any of these is never a custom-training list price
REFUSED = ("management fee", "prediction", "spot", "preemptible", "commit", "dws", "flex", "reserv")
# a place: capitalised words of letters (`Iowa`, `Americas`, `South Carolina`, `São Paulo`)
PLACE = re.compile(r"[A-Z][^\W\d_]*(?: [A-Z][^\W\d_]*)*")


def base_description(description: str) -> str | None:
    """`Vertex AI: Training/Pipelines on A3 Instance Core in Iowa` → `A3 Instance Core`; None
    for anything that is not an on-demand custom-training SKU."""
    lowered = description.lower()
    if not description.startswith(TRAINING) or any(word in lowered for word in REFUSED):
        return None
    head, separator, place = description[len(TRAINING) :].rpartition(" in ")
    if not separator or not PLACE.fullmatch(place):
        return None  # `... in Iowa for 1 Year` names a term, not a place
    return head.removesuffix(" running")


def wanted_descriptions() -> frozenset[str]:
    """Every Vertex AI SKU description a custom-training price is composed from (machine families
    and N1)."""
    return frozenset({part for parts in FAMILIES.values() for part in parts} | set(N1))


def read_vertex_rates(session: BillingSession, regions: set[str]) -> Rates:
    """On-demand training rates per (description, region); two SKUs that price the same part
    in the same region differently price it not at all."""
    keep = wanted_descriptions()
    rates: Rates = {}
    ambiguous: set[tuple[str, str, str]] = set()
    for sku in skus(session, VERTEX):
        category = sku.get("category") or {}
        base = base_description(str(sku.get("description", "")))
        if base not in keep or category.get("usageType") != "OnDemand":
            continue
        price = hourly(sku)
        if base is None or price is None:
            continue
        for region in sku.get("serviceRegions") or ():
            key = (base, region, "on-demand")
            if region not in regions:
                continue
            if key in rates and rates[key][0] != price[0]:
                ambiguous.add(key)
            rates[key] = (*price, str(sku.get("skuId", "")))
    return {key: rate for key, rate in rates.items() if key not in ambiguous}


def vertex_prices(session: BillingSession, wanted: Targets, fetched_at: str) -> list[PriceRow]:
    """`vertex:<type>` on-demand rows for the Vertex items the bundled catalog prices."""
    items = {(q.item or "") for cloud, q in bundled_prices() if cloud == "gcp"}
    known = {item.partition(":")[2] for item in items if item.startswith("vertex:")}
    rates = read_vertex_rates(session, set(wanted.regions))
    return [*_families(rates, wanted, known, fetched_at), *_n1(rates, wanted, known, fetched_at)]


def _families(
    rates: Rates, wanted: Targets, known: set[str], fetched_at: str
) -> Iterator[PriceRow]:
    for spec in instance_types():
        parts = FAMILIES.get(gcp_skus.family(spec)) if spec.cloud == "gcp" else None
        if parts is None or spec.instance_type not in known or spec.vcpus is None:
            continue
        core, ram, gpu = parts
        for region in wanted.regions:
            found = [rates.get((name, region, "on-demand")) for name in (gpu, core, ram)]
            used = [rate for rate in found if rate is not None]
            if len(used) < 3:
                continue  # a part unpriced: the bundled price stays
            usd = used[0][0] * spec.gpu_count + used[1][0] * spec.vcpus
            usd += used[2][0] * (spec.memory_gib or 0)
            how = (
                f"{spec.gpu_count} x {TRAINING}{gpu} + {spec.vcpus} x {core}"
                f" + {spec.memory_gib:g} GiB x {ram}"
            )
            item = f"vertex:{spec.instance_type}"
            yield row(item, region, "on-demand", usd, used, fetched_at, how, VERTEX)


def _n1(rates: Rates, wanted: Targets, known: set[str], fetched_at: str) -> Iterator[PriceRow]:
    for region in wanted.regions:
        core = rates.get((N1[0], region, "on-demand"))
        ram = rates.get((N1[1], region, "on-demand"))
        if core is None or ram is None:
            continue
        for host in sorted(known):
            shape = gcp_skus.n1_shape(host)
            if shape is not None:
                vcpus, gib = shape
                usd = core[0] * vcpus + ram[0] * gib
                how = f"{vcpus} x {TRAINING}{N1[0]} + {gib:g} GiB x {N1[1]}"
                yield row(
                    f"vertex:{host}", region, "on-demand", usd, [core, ram], fetched_at, how, VERTEX
                )
