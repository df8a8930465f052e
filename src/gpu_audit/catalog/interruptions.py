"""Spot interruption rates: the bundled dated data file, or `--interruption-rates FILE` over it.

A rate is interruptions per instance-hour of one instance type in one region, with the public
figure it mirrors (an AWS Spot Instance Advisor band, a GCP capacity-advice uptime, an Azure
eviction-rate range), its source and its date. SageMaker `ml.X` takes X's row; a job that names
no region takes its type's highest rate; a type with no row has no rate (never assumed rare).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from datetime import date
from functools import lru_cache
from typing import Any

from gpu_audit.core.frozen import record
from gpu_audit.core.yamlguard import printable
from gpu_audit.core.yamlsrc import load_json, read_text
from gpu_audit.errors import ConfigError

VERSION = 1
UNIT = "interruptions per instance-hour"
PROVIDERS = ("aws", "gcp", "azure")
MAX_BYTES = 16 * 1024 * 1024
MAX_PER_HOUR = 60.0  # one a minute: anything above is a unit mistake, not a rate
_TEXT = ("provider", "type", "region", "public", "source", "date")
_LONGEST = 2000


@record
class RateRow:
    """One type's interruption rate in one region, beside the public figure it mirrors."""

    provider: str
    type: str
    region: str
    per_hour: float
    public: str  # the published figure: `>20%` (Spot Instance Advisor), `estimatedUptime 3600s`
    source: str  # a name in the file's sources
    date: str


@record
class RateSource:
    """One source the rates come from: its name, URL or API, and date."""

    name: str
    url: str  # a URL or an API call
    date: str


@record
class RateFile:
    """An interruption-rate file: its date, unit, method, sources and rows."""

    as_of: str
    unit: str
    method: str
    sources: tuple[RateSource, ...]
    rows: tuple[RateRow, ...]
    path: str | None = None  # None: the bundled file


@record
class Rate:
    """The rate a resource is judged at, and where it came from."""

    per_hour: float
    region: str  # the row's region (a job naming none: the region of the type's highest rate)
    public: str
    source: str  # `aws-spot-advisor (https://…, 2025-06-28)`
    as_of: str


def read_rates(path: str) -> RateFile:
    """An interruption-rate file, every row checked; a bad one is one located error."""
    text = read_text(path, limit=MAX_BYTES)
    body = load_json(path, text)
    return parse(path, body, _row_lines(text))


def _row_lines(text: str) -> list[int]:
    """The line each item of the top-level `rows` array starts on ([] when not found)."""
    import json  # keeps json off check's start-up

    decoder, space = json.JSONDecoder(), re.compile(r"[ \t\n\r]*")
    found = re.search(r'"rows"\s*:\s*\[', text)
    if found is None:
        return []
    lines: list[int] = []
    at = found.end()
    try:
        while True:
            at = space.match(text, at).end()  # type: ignore[union-attr]
            if text[at] == "]":
                return lines
            lines.append(text.count("\n", 0, at) + 1)
            _, at = decoder.raw_decode(text, at)
            at = space.match(text, at).end()  # type: ignore[union-attr]
            if text[at] == ",":
                at += 1
    except (ValueError, IndexError):
        return []


def parse(path: str, body: Any, lines: Sequence[int] = ()) -> RateFile:
    """An interruption-rate file's JSON body checked and read; ConfigError naming the file, line and
    key for anything off."""
    head = f"{path}:1: interruption rates"
    if not isinstance(body, dict) or body.get("gpu_audit_interruptions") != VERSION:
        raise ConfigError(f"{head}: expected a JSON object with gpu_audit_interruptions: {VERSION}")
    as_of = body.get("as_of")
    if not isinstance(as_of, str) or not _is_date(as_of):
        raise ConfigError(f"{head}: as_of: expected a date (YYYY-MM-DD)")
    if body.get("unit") != UNIT:
        raise ConfigError(f"{head}: unit: expected {UNIT!r}")
    method = body.get("method")
    if not isinstance(method, str) or not method.strip():
        raise ConfigError(f"{head}: method: expected how the rates were derived (text)")
    sources = _sources(head, body.get("sources"))
    rows = body.get("rows")
    if not isinstance(rows, list):
        raise ConfigError(f"{head}: rows: expected a list")
    names = {s.name for s in sources}
    parsed: list[RateRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    for index, raw in enumerate(rows):
        line = lines[index] if len(lines) == len(rows) else 1
        row = _row(f"{path}:{line}: interruption rates: rows[{index}]", raw, names)
        key = (row.provider, row.type, row.region)
        if key in seen:
            raise ConfigError(
                f"{path}:{line}: interruption rates: rows[{index}]: "
                f"{printable(' '.join(key))} again (also rows[{seen[key]}])"
            )
        seen[key] = index
        parsed.append(row)
    return RateFile(as_of, UNIT, method, sources, tuple(parsed), path)


def _sources(head: str, value: Any) -> tuple[RateSource, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{head}: sources: expected a non-empty list")
    found = []
    for index, raw in enumerate(value):
        where = f"{head}: sources[{index}]"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected an object with name, url and date")
        for key in ("name", "url", "date"):
            _text(where, key, raw.get(key))
        if not _is_date(raw["date"]):
            raise ConfigError(f"{where}: date: expected a date, got {printable(raw['date'])}")
        found.append(RateSource(raw["name"], raw["url"], raw["date"]))
    return tuple(found)


def _row(where: str, raw: Any, sources: set[str]) -> RateRow:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object")
    for key in _TEXT:
        _text(where, key, raw.get(key))
    if raw["provider"] not in PROVIDERS:
        raise ConfigError(
            f"{where}: provider: {printable(raw['provider'])} is not one of aws, gcp, azure"
        )
    if raw["source"] not in sources:
        raise ConfigError(f"{where}: source: {printable(raw['source'])} is not in sources")
    if not _is_date(raw["date"]):
        raise ConfigError(f"{where}: date: expected a date, got {printable(raw['date'])}")
    value = raw.get("per_hour")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: per_hour: expected a number, got {printable(repr(value))}")
    if not 0 <= value <= MAX_PER_HOUR:
        raise ConfigError(f"{where}: per_hour: {value!r} is outside 0-{MAX_PER_HOUR:g} {UNIT}")
    return RateRow(
        raw["provider"],
        raw["type"],
        raw["region"],
        float(value),
        raw["public"],
        raw["source"],
        raw["date"],
    )


def _text(where: str, key: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: {key}: expected a non-empty string")
    if not value.isprintable():
        raise ConfigError(f"{where}: {key}: control or formatting characters")
    if len(value) > _LONGEST:
        raise ConfigError(f"{where}: {key}: longer than {_LONGEST} characters")


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text[:10])
    except ValueError:
        return False
    return len(text) >= 10 and text[4] == "-"


# The file in use: the bundled one, unless `--interruption-rates` laid another over it.
_OVERLAY: list[RateFile] = []


@lru_cache(maxsize=1)
def bundled() -> RateFile:
    """The shipped data file (catalog/data/interruptions.json), read once."""
    # a plain path, as the catalog's CSV tables are read: importlib.resources would pull in
    # tempfile, shutil and zlib, which a pre-commit hook does not pay for
    from dataclasses import replace

    path = os.path.join(os.path.dirname(__file__), "data", "interruptions.json")
    return replace(read_rates(path), path=None)


def use_rates(path: str | None) -> RateFile:
    """Lay the rate file over the bundled rates (None: the bundled ones alone); the file in use."""
    _OVERLAY.clear()
    _index.cache_clear()
    if path:
        _OVERLAY.append(read_rates(path))
    return in_use()


def in_use() -> RateFile:
    """The rates in use: the `--interruption-rates` file laid over, else the bundled ones."""
    return _OVERLAY[0] if _OVERLAY else bundled()


def describe(rates: RateFile) -> str:
    """`bundled interruption rates as of 2025-06-28 (aws-spot-advisor)` for report headers."""
    name = "bundled" if rates.path is None else os.path.basename(rates.path)
    names = ", ".join(s.name for s in rates.sources)
    return f"{name} interruption rates as of {rates.as_of} ({names})"


@lru_cache(maxsize=1)
def _index() -> dict[tuple[str, str], dict[str, RateRow]]:
    """(provider, type) → region → row: the laid file's rows over the bundled ones."""
    table: dict[tuple[str, str], dict[str, RateRow]] = {}
    files = [bundled(), *_OVERLAY]
    for rates in files:
        for row in rates.rows:
            table.setdefault((row.provider, row.type), {})[row.region] = row
    return table


def _source_of(row: RateRow) -> str:
    for rates in reversed([bundled(), *_OVERLAY]):
        for source in rates.sources:
            if source.name == row.source:
                return f"{source.name} ({source.url}, {source.date})"
    return row.source


def rate_for(provider: str | None, instance_type: str | None, region: str | None) -> Rate | None:
    """The rate of the type in the region; SageMaker `ml.X` is X; no region: the type's highest
    rate; a type (or a named region) with no row: None (not evaluated)."""
    if not provider or not instance_type:
        return None
    kind = instance_type[3:] if instance_type.startswith("ml.") else instance_type
    regions = _index().get((provider, kind))
    if not regions:
        return None
    if region:
        row = regions.get(region)
        if row is None:
            return None
    else:
        row = max(regions.values(), key=lambda r: (r.per_hour, r.region))
    return Rate(row.per_hour, row.region, row.public, _source_of(row), row.date)


def write_rows(
    output: str,
    old: Any,
    provider: str,
    source: str,
    url: str,
    rows: list[dict[str, Any]],
    day: str,
) -> None:
    """Write `rows` (every row of `provider`) with their source into OUTPUT, atomically; the
    other providers' rows and sources of the file as it was (`old`) are kept."""
    import json  # keeps json off check's start-up (a refresh writes the file)

    from gpu_audit.core.writer import write_atomic  # keeps tempfile off check's start-up

    kept = [_row_out(r) for r in (old.rows if old else ()) if r.provider != provider]
    sources = [s for s in (old.sources if old else ()) if s.name != source]
    body: dict[str, Any] = {
        "gpu_audit_interruptions": VERSION,
        "as_of": day,
        "unit": UNIT,
        "sources": [
            *({"name": s.name, "url": s.url, "date": s.date} for s in sources),
            {"name": source, "url": url, "date": day},
        ],
        "method": bundled().method,
        "rows": sorted([*kept, *rows], key=lambda r: (r["provider"], r["type"], r["region"])),
    }
    text = json.dumps(body, indent=1) + "\n"
    parse(output, json.loads(text))  # what is written reads back
    write_atomic(output, text)


def _row_out(row: Any) -> dict[str, Any]:
    return {
        "provider": row.provider,
        "type": row.type,
        "region": row.region,
        "per_hour": row.per_hour,
        "public": row.public,
        "source": row.source,
        "date": row.date,
    }
