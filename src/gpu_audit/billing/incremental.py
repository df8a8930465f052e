"""A daily run that reads only what is new: `billing --history DB` keeps each export file's
daily aggregates (history/billing_cache.py) and the next run reads only the files that are new
or changed, reusing the others' aggregates, so its totals are a full run's to the cent.

The exports' own layouts say which files count (billing/exports.py): an AWS export refreshed
daily rewrites its month's file and manifest (the old file is superseded, its aggregates
dropped), Azure writes a new month-to-date run each day (the older run's files superseded), GCP a
new folder per export day (the new folder's files are read). A file is unchanged when its size
and modification time are those recorded (it is not opened), or, where only the time moved,
when its digest is. `--full` reads every file again. A remote prefix (`s3://`, …) is read
whole each run: its files cannot be stated here.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from hashlib import blake2b
from typing import Any

from gpu_audit.billing import duck
from gpu_audit.billing.daily import DayGroup, read_files
from gpu_audit.billing.exports import ExportFiles, discover
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.summary import cents
from gpu_audit.core.frozen import record
from gpu_audit.errors import InputError
from gpu_audit.history import billing_cache
from gpu_audit.history.billing_cache import KnownFile

QUERY_VERSION = 2  # bumped when the query's groups change: every file is read again


@record
class Reading:
    """What an incremental run read and reused."""

    history: str
    full: bool
    read: tuple[str, ...]  # files opened and aggregated by this run
    reused: int  # files whose recorded aggregates were used
    dropped: int  # superseded files whose aggregates were dropped


def query_key(period: Period, tag_keys: Sequence[str], gpu_types: Sequence[Any]) -> str:
    """A hex digest of what the query's answer depends on (query version, period, tag keys, GPU
    types): a cached aggregate is reused only under the same key."""
    text = repr(
        (QUERY_VERSION, period.name, period.start, period.end, list(tag_keys), sorted(gpu_types))
    )
    return blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def digest(path: str) -> str:
    """The BLAKE2b digest (hex) of a file's bytes, read in 1 MiB chunks."""
    h = blake2b(digest_size=20)
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def identity(export: ExportFiles, path: str) -> str:
    """The AWS execution, Azure run or GCP export day a file belongs to: its folder."""
    folder = posixpath.dirname(path)
    root = export.path.rstrip("/")
    return folder[len(root) :].lstrip("/") if folder.startswith(root) else folder


def encode(item: DayGroup) -> list[Any]:
    """A day group as a JSON list of `BilledGroup`'s fields in their order (decimals as exact
    text, times as ISO text), its day last."""
    g = item.group
    return [
        *(_encoded(getattr(g, f.name)) for f in _FIELDS),
        item.day.isoformat() if item.day else None,
    ]


def _encoded(value: Any) -> Any:  # Any: JSON of any shape
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return dict(value)
    return value


_FIELDS = dataclasses.fields(BilledGroup)
_DECIMALS = frozenset(f.name for f in _FIELDS if f.type in ("Decimal", Decimal))
_TIMES = frozenset(f.name for f in _FIELDS if "datetime" in str(f.type))


def decode(body: list[Any]) -> DayGroup:
    """`encode`'s list back, every field by its name (a list of another width is refused)."""
    if len(body) != len(_FIELDS) + 1:
        raise ValueError(f"a kept day group of {len(body)} values, not {len(_FIELDS) + 1}")
    values: dict[str, Any] = {}
    for f, value in zip(_FIELDS, body, strict=False):
        if value is not None and f.name in _DECIMALS:
            value = Decimal(value)
        elif value is not None and f.name in _TIMES:
            value = datetime.fromisoformat(value)
        values[f.name] = value
    day = body[-1]
    return DayGroup(date.fromisoformat(day) if day else None, BilledGroup(**values))


def run_incremental(
    paths: Sequence[str],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
    history: str,
    now: datetime,
    full: bool = False,
) -> tuple[list[ExportFiles], list[DayGroup], Reading]:
    """Discover the exports' current files, read the new and changed ones, reuse the rest."""
    from gpu_audit.history import schema  # keeps history.schema off `billing`'s start-up
    from gpu_audit.history.store import HistoryStore  # keeps history.store off `billing`'s start-up

    if os.path.exists(history):  # made where missing; an empty file is refused, never filled
        schema.check_file(history, create=False)
    store = HistoryStore.open(history)  # a foreign or newer file is refused, untouched
    conn = duck.connect()
    try:
        fs = duck.file_system(conn)
        # local paths absolute: the history knows a file by one name from any directory
        local = [path if "://" in path else os.path.abspath(path) for path in paths]
        exports = [discover(path, fs, period) for path in local]
        key = query_key(period, tag_keys, gpu_types)
        with store.errors():
            known = billing_cache.known(store.conn, key)
        days: list[DayGroup] = []
        fresh: list[KnownFile] = []
        read: list[str] = []
        reused = 0
        for export in exports:
            for name in export.files:
                if "://" in name:  # remote: read whole, never recorded
                    days += _read(conn, export, name, period, tag_keys, gpu_types, paths)
                    read.append(name)
                    continue
                stat = os.stat(name)
                old = None if full else known.get(name)
                if old and old.size == stat.st_size and old.mtime_ns == stat.st_mtime_ns:
                    days += [decode(b) for b in billing_cache.unpack(old.aggregates)]
                    reused += 1
                    continue
                sha = digest(name)
                if old and old.size == stat.st_size and old.digest == sha:
                    days += [decode(b) for b in billing_cache.unpack(old.aggregates)]
                    fresh.append(_known(export, name, stat, sha, old.aggregates))
                    reused += 1
                    continue
                got = _read(conn, export, name, period, tag_keys, gpu_types, paths)
                days += got
                read.append(name)
                blob = billing_cache.pack([encode(d) for d in got])
                fresh.append(_known(export, name, stat, sha, blob))
        current = {name for e in exports for name in e.files}
        roots = {e.path for e in exports}
        dropped = [f.path for f in known.values() if f.export in roots and f.path not in current]
        if not any(d.group.in_period for d in days):
            raise InputError(f"{', '.join(paths)}: no rows charged in {period.name}")
        with store.transaction() as tx:
            billing_cache.replace_files(tx, key, now.isoformat(), fresh, dropped)
        return exports, days, Reading(history, full, tuple(read), reused, len(dropped))
    finally:
        conn.close()
        store.close()


def _known(
    export: ExportFiles, name: str, stat: os.stat_result, sha: str, blob: bytes
) -> KnownFile:
    return KnownFile(
        path=name,
        export=export.path,
        cloud=export.cloud,
        identity=identity(export, name),
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        digest=sha,
        aggregates=blob,
    )


def _read(
    conn: Any,
    export: ExportFiles,
    name: str,
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
    paths: Sequence[str],
) -> list[DayGroup]:
    one = ExportFiles(path=export.path, cloud=export.cloud, files=(name,), version=export.version)
    return read_files(conn, [one], period, tag_keys, gpu_types, paths, require_rows=False)


def remember_forecast(history: str, report: Any) -> None:
    """Keep the run's forecast (every line) in the history, beside the ones before it."""
    from gpu_audit.history.store import HistoryStore  # keeps history.store off `billing`'s start-up

    f = report.forecast
    if f is None:
        return
    lines = [("total", f.total), *(("cloud", p) for p in f.clouds)]
    lines += [(f"tag:{f.team_key}", p) for p in f.teams]
    rows = [
        billing_cache.ForecastRow(
            recorded_at=report.generated_at.isoformat(),
            period=f.period,
            last_day=f.last_day.isoformat(),
            dimension=dimension,
            key=p.key,
            to_date_usd=float(cents(p.to_date)),
            forecast_usd=float(cents(p.forecast)),
            low_usd=float(cents(p.low)),
            high_usd=float(cents(p.high)),
            method=f.method,
        )
        for dimension, p in lines
    ]
    store = HistoryStore.open(history)
    try:
        with store.transaction() as tx:
            billing_cache.add_forecast(tx, rows)
    finally:
        store.close()


def past_forecasts(history: str, period: Period) -> tuple[billing_cache.ForecastRow, ...]:
    """The totals earlier runs forecast for `period` (oldest first), to set beside what was
    spent; none where the history does not exist yet."""
    from gpu_audit.history.store import HistoryStore  # keeps history.store off `billing`'s start-up

    if not os.path.exists(history):
        return ()
    store = HistoryStore.open(history)
    try:
        with store.errors():
            rows = billing_cache.forecasts(store.conn, period.name)
    finally:
        store.close()
    return tuple(r for r in rows if r.dimension == "total")
