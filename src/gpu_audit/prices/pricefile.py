"""The price file: rows of dated, sourced hourly prices, read (validated) and written as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from gpu_audit.core.frozen import record
from gpu_audit.core.yamlguard import printable
from gpu_audit.core.yamlsrc import load_json, read_text
from gpu_audit.errors import ConfigError
from gpu_audit.prices.rowlines import row_lines

VERSION = 1
PROVIDERS = ("aws", "gcp", "azure")
# Sites that bill by their own rate, written by hand into a price file (no refresh reads one):
# a row's type is `<site>:gpu:<MODEL>`, its region the partition the rate is for (docs/catalog.md).
SITE_PROVIDERS = ("slurm",)
CAPACITIES = ("on-demand", "spot")
MAX_BYTES = 64 * 1024 * 1024  # every region of every GPU type of the three clouds is ~5 MB
# No hourly price comes near this (the largest GPU instances are ~$100 an hour): a value over it
# is a mistake, and a month of it must stay a finite number in every report.
MAX_USD_PER_HOUR = 10_000


@record
class ZonePrice:
    """One availability zone's latest spot price and when the source observed it."""

    zone: str
    usd_per_hour: float
    observed_at: str


@record
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
        """The row's identity in a price file: (provider, type, region, capacity)."""
        return (self.provider, self.type, self.region, self.capacity)


@record
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
    """The price file as JSON text (version, generation time, request counts, rows), ending in a
    newline."""
    body = {
        "gpu_audit_prices": VERSION,
        "generated_at": prices.generated_at,
        "requests": prices.requests,
        "rows": [_row_out(row) for row in prices.rows],
    }
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def readable(prices: PriceFile) -> tuple[PriceFile, list[str]]:
    """What `read_prices` takes of `prices` (a file written from other data, `billing
    --write-prices`): the rows it would refuse are left out, each said in one line, so what
    one command writes the next reads."""
    kept: list[PriceRow] = []
    refused: list[str] = []
    for index, row in enumerate(prices.rows):
        try:
            _row_in(f"rows[{index}] {printable(' '.join(row.key), 200)}", _row_out(row))
        except ConfigError as exc:
            refused.append(str(exc))
            continue
        kept.append(row)
    return PriceFile(tuple(kept), prices.generated_at, prices.requests), refused


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
    """A price file, every row checked; a bad one is one located error (file:line, key)."""
    text = read_text(path, limit=MAX_BYTES)  # too large, binary, not UTF-8: one file-level line
    body = load_json(path, text)  # bad JSON, NaN, too deep, a huge integer: located
    return parse(path, body, row_lines(text))


def parse(path: str, body: Any, lines: Sequence[int] = ()) -> PriceFile:
    """A price file's JSON body checked and read; ConfigError naming the file, the row's line and
    the key for a bad or repeated row."""
    if not isinstance(body, dict) or body.get("gpu_audit_prices") != VERSION:
        raise ConfigError(
            f"{path}:1: price file: expected a JSON object with gpu_audit_prices: {VERSION} "
            "(written by gpu-audit catalog refresh)"
        )
    rows = body.get("rows")
    if not isinstance(rows, list):
        raise ConfigError(f"{path}:1: price file: rows: expected a list")
    parsed = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for index, raw in enumerate(rows):
        line = lines[index] if len(lines) == len(rows) else 1
        row = _row_in(f"{path}:{line}: price file: rows[{index}]", raw)
        if row.key in seen:
            raise ConfigError(
                f"{path}:{line}: price file: rows[{index}]: {printable(' '.join(row.key))} "
                f"again (also rows[{seen[row.key]}]); one price per type, region and capacity"
            )
        seen[row.key] = index
        parsed.append(row)
    return PriceFile(
        tuple(parsed),
        _generated(path, body.get("generated_at")),
        _requests(path, body.get("requests")),
    )


def _generated(path: str, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or not _is_time(value):
        raise ConfigError(
            f"{path}:1: price file: generated_at: expected a time, got {_shown(value)}"
        )
    return value


def _requests(path: str, value: Any) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{path}:1: price file: requests: expected a mapping")
    for provider, count in value.items():
        if provider not in PROVIDERS:
            raise ConfigError(
                f"{path}:1: price file: requests: {printable(provider)} is not a provider"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ConfigError(
                f"{path}:1: price file: requests: {provider}: expected a count, got {_shown(count)}"
            )
    return dict(value)


_TEXT = ("provider", "type", "region", "capacity", "effective", "fetched_at", "source")
_LONGEST = 2000  # characters of one text value; a refresh writes ~200 at most


def _row_in(where: str, row: Any) -> PriceRow:
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: expected an object")
    for key in _TEXT:
        _text(where, key, row.get(key))
    if row["provider"] not in (*PROVIDERS, *SITE_PROVIDERS):
        raise ConfigError(
            f"{where}: provider: {printable(row['provider'])} is not one of aws, gcp, azure, slurm"
        )
    if row["provider"] in SITE_PROVIDERS and not row["type"].startswith(f"{row['provider']}:gpu:"):
        raise ConfigError(
            f"{where}: type: a {row['provider']} rate is per GPU-hour of a model: expected "
            f"`{row['provider']}:gpu:<MODEL>`, got {printable(row['type'])}"
        )
    if row["capacity"] not in CAPACITIES:
        raise ConfigError(
            f"{where}: capacity: {printable(row['capacity'])} is not on-demand or spot"
        )
    if not _is_time(row["effective"]):
        raise ConfigError(
            f"{where}: effective: expected a date or a time, got {printable(row['effective'])}"
        )
    if not _is_time(row["fetched_at"]):
        raise ConfigError(
            f"{where}: fetched_at: expected a time, got {printable(row['fetched_at'])}"
        )
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


def _text(where: str, key: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: {key}: expected a non-empty string")
    if not value.isprintable():  # control and bidi characters would reach every output
        raise ConfigError(f"{where}: {key}: control or formatting characters")
    if len(value) > _LONGEST:
        raise ConfigError(f"{where}: {key}: longer than {_LONGEST} characters")


def _is_time(text: str) -> bool:
    """An ISO date (2026-11-01) or time (2026-11-25T10:12:03Z) as the sources state them: it
    starts with the calendar date that reports show (`2026W475` or `20261125T…` do not)."""
    if len(text) < 10 or text[4] != "-" or text[7] != "-" or not text[:4].isdigit():
        return False
    try:
        date.fromisoformat(text[:10])
        if len(text) > 10:
            datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _shown(value: Any) -> str:
    return printable(value if isinstance(value, str) else repr(value))


def _usd(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: usd_per_hour: expected a number, got {_shown(value)}")
    if value <= 0:
        raise ConfigError(f"{where}: usd_per_hour: expected a positive price, got {value!r}")
    if value > MAX_USD_PER_HOUR:
        raise ConfigError(
            f"{where}: usd_per_hour: {value:.6g} is over {MAX_USD_PER_HOUR:,} per hour; not a price"
        )
    return float(value)


def _zone(where: str, zone: Any) -> ZonePrice:
    if not isinstance(zone, dict):
        raise ConfigError(f"{where}: expected an object with zone, usd_per_hour, observed_at")
    _text(where, "zone", zone.get("zone"))
    observed = zone.get("observed_at")
    if not isinstance(observed, str) or not _is_time(observed):
        raise ConfigError(f"{where}: observed_at: expected a time, got {_shown(observed)}")
    return ZonePrice(zone["zone"], _usd(where, zone.get("usd_per_hour")), observed)
