"""The price file: rows of dated, sourced hourly prices, read (validated) and written as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpu_audit.errors import ConfigError

VERSION = 1
PROVIDERS = ("aws", "gcp", "azure")
CAPACITIES = ("on-demand", "spot")


@dataclass(frozen=True, slots=True)
class ZonePrice:
    """One availability zone's latest spot price and when the source observed it."""

    zone: str
    usd_per_hour: float
    observed_at: str


@dataclass(frozen=True, slots=True)
class PriceRow:
    """One hourly price of one catalog item (`p4d.24xlarge`, `gpu:T4`, `sagemaker:ml.g5.xlarge`)
    in one region at one capacity, with the source's own effective date and the fetch time."""

    provider: str
    type: str
    region: str
    capacity: str  # on-demand | spot
    usd_per_hour: float
    effective: str  # as the source states it (a date or a time)
    fetched_at: str
    source: str  # the API and the query
    zones: tuple[ZonePrice, ...] = ()  # spot: each zone's latest price (the row is their median)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.provider, self.type, self.region, self.capacity)


@dataclass(frozen=True, slots=True)
class PriceFile:
    rows: tuple[PriceRow, ...]
    generated_at: str
    requests: dict[str, int]  # provider → API requests its last refresh made


def merged(old: PriceFile | None, new: PriceFile, providers: Iterable[str]) -> PriceFile:
    """`new`'s rows for `providers`, plus every other provider's rows from `old`."""
    replaced = set(providers)
    kept = [row for row in (old.rows if old else ()) if row.provider not in replaced]
    requests = {k: v for k, v in (old.requests if old else {}).items() if k not in replaced}
    requests.update(new.requests)
    rows = sorted([*kept, *new.rows], key=lambda row: row.key)
    return PriceFile(tuple(rows), new.generated_at, dict(sorted(requests.items())))


def dumps(prices: PriceFile) -> str:
    body = {
        "gpu_audit_prices": VERSION,
        "generated_at": prices.generated_at,
        "requests": prices.requests,
        "rows": [_row_out(row) for row in prices.rows],
    }
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def _row_out(row: PriceRow) -> dict[str, Any]:
    out: dict[str, Any] = {
        "provider": row.provider,
        "type": row.type,
        "region": row.region,
        "capacity": row.capacity,
        "usd_per_hour": row.usd_per_hour,
        "effective": row.effective,
        "fetched_at": row.fetched_at,
        "source": row.source,
    }
    if row.zones:
        out["zones"] = [
            {"zone": z.zone, "usd_per_hour": z.usd_per_hour, "observed_at": z.observed_at}
            for z in row.zones
        ]
    return out


def read_prices(path: str) -> PriceFile:
    """A price file, every row checked; a bad one is one located ConfigError."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read price file: {exc.strerror or exc}") from exc
    try:
        body = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", 1)
        raise ConfigError(f"{path}:{line}: price file: not JSON: {exc}") from exc
    return parse(path, body)


def parse(path: str, body: Any) -> PriceFile:
    if not isinstance(body, dict) or body.get("gpu_audit_prices") != VERSION:
        raise ConfigError(
            f"{path}: price file: expected a JSON object with gpu_audit_prices: {VERSION} "
            "(written by gpu-audit catalog refresh)"
        )
    rows = body.get("rows")
    if not isinstance(rows, list):
        raise ConfigError(f"{path}: price file: rows: expected a list")
    requests = body.get("requests") or {}
    if not isinstance(requests, dict):
        raise ConfigError(f"{path}: price file: requests: expected a mapping")
    parsed = tuple(_row_in(path, index, row) for index, row in enumerate(rows))
    generated = body.get("generated_at")
    return PriceFile(parsed, generated if isinstance(generated, str) else "", dict(requests))


_TEXT = ("provider", "type", "region", "capacity", "effective", "fetched_at", "source")


def _row_in(path: str, index: int, row: Any) -> PriceRow:
    where = f"{path}: price file: rows[{index}]"
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: expected an object")
    for key in _TEXT:
        if not isinstance(row.get(key), str) or not row[key]:
            raise ConfigError(f"{where}: {key}: expected a non-empty string")
        if not row[key].isprintable():  # control and bidi characters would reach every output
            raise ConfigError(f"{where}: {key}: control or formatting characters")
    if row["provider"] not in PROVIDERS:
        raise ConfigError(f"{where}: provider: {row['provider']!r} is not one of aws, gcp, azure")
    if row["capacity"] not in CAPACITIES:
        raise ConfigError(f"{where}: capacity: {row['capacity']!r} is not on-demand or spot")
    zones = row.get("zones") or []
    if not isinstance(zones, list):
        raise ConfigError(f"{where}: zones: expected a list")
    return PriceRow(
        provider=row["provider"],
        type=row["type"],
        region=row["region"],
        capacity=row["capacity"],
        usd_per_hour=_usd(where, row.get("usd_per_hour")),
        effective=row["effective"],
        fetched_at=row["fetched_at"],
        source=row["source"],
        zones=tuple(_zone(f"{where}: zones[{i}]", z) for i, z in enumerate(zones)),
    )


def _usd(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: usd_per_hour: expected a number, got {value!r}")
    if value <= 0:
        raise ConfigError(f"{where}: usd_per_hour: expected a positive price, got {value!r}")
    return float(value)


def _zone(where: str, zone: Any) -> ZonePrice:
    if not isinstance(zone, dict) or not isinstance(zone.get("zone"), str):
        raise ConfigError(f"{where}: expected an object with zone, usd_per_hour, observed_at")
    observed = zone.get("observed_at")
    if (
        not isinstance(observed, str)
        or not observed.isprintable()
        or not zone["zone"].isprintable()
    ):
        raise ConfigError(f"{where}: observed_at: expected a time")
    return ZonePrice(zone["zone"], _usd(where, zone.get("usd_per_hour")), observed)
