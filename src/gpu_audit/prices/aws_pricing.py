"""AWS on-demand prices (EC2 and SageMaker) from the Price List Query API (pricing:GetProducts)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from gpu_audit.prices.aws_client import Counter, client, failure
from gpu_audit.prices.pricefile import PriceRow

PAGE = 100  # GetProducts' largest MaxResults
VALUE_LIMIT = 1024  # a filter Value's longest (botocore's service model): ANY_OF lists are split
# Linux, shared tenancy, no pre-installed software, capacity in use (not a reservation's):
# what gpu-audit prices. Asked of the API, and checked again on every answer.
EC2_TERMS = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}
# SageMaker's rate card per component: training and hosting (real-time inference)
SAGEMAKER_CARDS = {"Training": "sagemaker", "Hosting": "sagemaker-hosting"}


def ec2_on_demand(
    types: Iterable[str], region: str, fetched_at: str, counter: Counter
) -> list[PriceRow]:
    """One query (and its pages) per region, ANY_OF on the instance types (split only where
    the list outgrows a filter value)."""
    wanted = sorted(set(types))
    terms = {"regionCode": region, **EC2_TERMS}
    query = "AmazonEC2 " + " ".join(f"{k}={v}" for k, v in terms.items())
    rows = []
    for batch in batches(wanted):
        filters = [*_matches(terms), {"Type": "ANY_OF", "Field": "instanceType", "Value": batch}]
        for product, term in _on_demand_terms("AmazonEC2", filters, region, counter):
            attributes = product.get("attributes", {})
            if any(attributes.get(k) != v for k, v in EC2_TERMS.items()):
                continue  # Windows, SQL, dedicated or reservation rows the filter let through
            name = attributes.get("instanceType")
            if name not in wanted or attributes.get("regionCode") != region:
                continue
            source = f"pricing:GetProducts {query}"
            rows.append(_row(name, region, term, fetched_at, source, product))
    return _first_per_type(rows)


def batches(names: list[str]) -> list[str]:
    """Comma-joined ANY_OF values, each within a filter value's 1024 characters."""
    found: list[str] = []
    for name in names:
        if found and len(found[-1]) + 1 + len(name) <= VALUE_LIMIT:
            found[-1] += f",{name}"
        else:
            found.append(name)
    return found


def sagemaker_on_demand(
    types: Iterable[str], region: str, fetched_at: str, counter: Counter
) -> list[PriceRow]:
    """Training and hosting rates of SageMaker's ml.* instances, one query per region."""
    wanted = sorted({name if name.startswith("ml.") else f"ml.{name}" for name in types})
    filters = [
        *_matches({"regionCode": region}),
        {"Type": "ANY_OF", "Field": "instanceName", "Value": ",".join(wanted)},
        {"Type": "ANY_OF", "Field": "component", "Value": ",".join(SAGEMAKER_CARDS)},
    ]
    rows = []
    for product, term in _on_demand_terms("AmazonSageMaker", filters, region, counter):
        attributes = product.get("attributes", {})
        card = SAGEMAKER_CARDS.get(attributes.get("component", ""))
        name = attributes.get("instanceName")
        if card is None or name not in wanted or attributes.get("regionCode") != region:
            continue
        component = attributes["component"]
        query = f"pricing:GetProducts AmazonSageMaker regionCode={region} component={component}"
        rows.append(_row(f"{card}:{name}", region, term, fetched_at, query, product))
    return _first_per_type(rows)


def _matches(terms: dict[str, str]) -> list[dict[str, str]]:
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in terms.items()]


def _on_demand_terms(
    service: str, filters: list[dict[str, str]], region: str, counter: Counter
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(product, OnDemand term) of every product the query returns; Reserved terms never."""
    pricing = client("pricing", "us-east-1", counter)
    pages = pricing.get_paginator("get_products").paginate(
        ServiceCode=service,
        Filters=filters,
        FormatVersion="aws_v1",
        PaginationConfig={"PageSize": PAGE},
    )
    try:
        for page in pages:
            for text in page.get("PriceList", []):
                product = json.loads(text) if isinstance(text, str) else text
                for term in product.get("terms", {}).get("OnDemand", {}).values():
                    yield product.get("product", {}), term
    except Exception as exc:  # botocore's ClientError, connection and parse errors
        if type(exc).__module__.startswith(("botocore", "urllib3")):
            raise failure(exc, f"aws: pricing:GetProducts {service} {region}") from exc
        raise


def _row(
    name: str,
    region: str,
    term: dict[str, Any],
    fetched_at: str,
    query: str,
    product: dict[str, Any],
) -> PriceRow | None:
    for rate, dimension in sorted(term.get("priceDimensions", {}).items()):
        usd = _usd(dimension.get("pricePerUnit", {}).get("USD"))
        if dimension.get("unit") != "Hrs" or usd is None:
            continue
        sku = product.get("sku", "")
        return PriceRow(
            provider="aws",
            type=name,
            region=region,
            capacity="on-demand",
            usd_per_hour=usd,
            effective=str(term.get("effectiveDate", ""))[:10] or fetched_at[:10],
            fetched_at=fetched_at,
            source=f"{query} OnDemand sku={sku} rate={rate}",
        )
    return None


def _usd(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def _first_per_type(rows: list[PriceRow | None]) -> list[PriceRow]:
    """One price per item; where the API answered twice, the first (the answers are sorted)."""
    found: dict[str, PriceRow] = {}
    for row in rows:
        if row is not None:
            found.setdefault(row.type, row)
    return [found[name] for name in sorted(found)]


def managed_spot(rows: list[PriceRow]) -> list[PriceRow]:
    """SageMaker managed spot training is billed at the EC2 spot discount: its on-demand rate ×
    (EC2 spot / EC2 on-demand) of the same type in the same region, both from this refresh."""
    ec2 = {(row.type, row.region, row.capacity): row for row in rows if ":" not in row.type}
    found = []
    for row in rows:
        if not row.type.startswith("sagemaker:") or row.capacity != "on-demand":
            continue
        name = row.type.partition(":")[2].removeprefix("ml.")
        on_demand = ec2.get((name, row.region, "on-demand"))
        spot = ec2.get((name, row.region, "spot"))
        if on_demand is None or spot is None:
            continue
        ratio = spot.usd_per_hour / on_demand.usd_per_hour
        found.append(
            replace(
                row,
                capacity="spot",
                usd_per_hour=round(row.usd_per_hour * ratio, 6),
                effective=min(row.effective, spot.effective[:10]),
                source=f"{row.source} x EC2 {name} spot/on-demand ({ratio:.3f}), as SageMaker "
                "bills managed spot at the EC2 spot discount",
            )
        )
    return found
