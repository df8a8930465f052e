"""`gpu-audit catalog lookup`'s rows: each instance type's or GPU's spec and rates as the
reports write money, its own rate card for a SageMaker `ml.` type, and a type no longer sold."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog import gpu_class, gpu_hour_price, instance_spec, price
from gpu_audit.catalog.lifecycle import ended
from gpu_audit.catalog.lookup import rate_cards
from gpu_audit.catalog.regions import check_region
from gpu_audit.report.values import MISSING, money


def lookup_rows(names: tuple[str, ...], region: str | None) -> tuple[list[list[str]], list[str]]:
    """`catalog lookup`'s table rows (money as the reports write it) and the unknown names."""

    entries, unknown = lookup_entries(names, region)
    rows: list[list[str]] = []
    for e in entries:
        priced = e["region"] is not None
        where = f"{e['region']}{'' if e['exact_region'] else ' (reference)'}" if priced else "-"
        rows.append(
            [
                e["name"],
                e["cloud"] or "-",
                e["gpu_model"],
                str(e["gpu_count"]),
                _text(e["gpu_memory_gib"]),
                _text(e["class_rank"]),
                where,
                *(money(p, "table", places=4) for p in (e["on_demand_usd"], e["spot_usd"])),
                e["as_of"] or "-",
                e["source"] or "unpriced",
            ]
        )
    return rows, unknown


def lookup_entries(
    names: tuple[str, ...], region: str | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Each name's GPU, memory, class and prices as plain values (`--format json`)."""
    entries: list[dict[str, Any]] = []
    unknown: list[str] = []
    for name in names:
        spec = instance_spec(name)
        if spec is not None:
            if region:
                check_region(region, (spec.cloud,))
            cls = gpu_class(spec.gpu_model)
            entry = {
                "name": name,
                "cloud": spec.cloud,
                "gpu_model": spec.gpu_model,
                "gpu_count": spec.gpu_count,
                "gpu_memory_gib": spec.gpu_memory_gib,
                "class_rank": cls.rank if cls else None,
                **_priced(price(name, region, cards=_cards(name))),
            }
            entries.append({**entry, **_ended(name)})
            continue
        cls = gpu_class(name)
        if cls is not None:
            if region:
                check_region(region, ("aws", "gcp", "azure"))
            quote = gpu_hour_price(cls.name)
            label = f"{name} ({quote.item} per GPU)" if quote and quote.item else name
            entries.append(
                {
                    "name": label,
                    "cloud": None,
                    "gpu_model": cls.name,
                    "gpu_count": 1,
                    "gpu_memory_gib": cls.memory_gib,
                    "class_rank": cls.rank,
                    **_priced(quote),
                }
            )
            continue
        unknown.append(name)
    return entries, unknown


def ended_lines(names: tuple[str, ...]) -> list[str]:
    """`p3.2xlarge: no longer offered: Amazon EC2 P3 (V100), retired 2025-12-20 (source: …)`."""
    lines = []
    for name in names:
        notice = _ended(name)["no_longer_offered"]
        if notice is not None:
            lines.append(
                f"{name}: no longer offered: {notice['name']}, retired {notice['since']}; no spot"
                f" offer or saving is priced on it (source: {notice['source']})"
            )
    return lines


def _ended(name: str) -> dict[str, Any]:
    """`no_longer_offered` (the lifecycle row: what, since when, its source) for a type the cloud
    no longer sells, whose spot price is then no offer (null); None for a type still sold."""
    notice = ended(name, datetime.now(UTC).date())
    if notice is None:
        return {"no_longer_offered": None}
    return {
        "spot_usd": None,  # a type no longer launched has no spot offer, and no saving on it
        "no_longer_offered": {
            "name": notice.name,
            "since": str(notice.ends),
            "checked": notice.checked,
            "source": notice.source,
        },
    }


def _cards(name: str) -> tuple[str, ...]:
    """An `ml.` type is SageMaker's: its own rate card, as `estimate` and `check` price it."""
    return rate_cards("sagemaker", None) if name.strip().lower().startswith("ml.") else ()


def _priced(quote: Any) -> dict[str, Any]:
    if quote is None:
        keys = ("region", "on_demand_usd", "spot_usd", "as_of", "source")
        return {**dict.fromkeys(keys), "exact_region": None}
    return {
        "region": quote.region,
        "exact_region": quote.exact_region,
        "on_demand_usd": quote.on_demand,
        "spot_usd": quote.spot,
        "as_of": quote.as_of,
        "source": quote.source,
    }


def _text(value: Any) -> str:

    if value is None:
        return MISSING["table"]
    return f"{value:g}" if isinstance(value, float) else str(value)
