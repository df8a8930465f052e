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

import os
import posixpath
from collections.abc import Sequence
from datetime import datetime
from hashlib import blake2b
from typing import Any

from gpu_audit.billing import daybook, daycache, duck
from gpu_audit.billing.exports import ExportFiles, discover
from gpu_audit.billing.period import Period
from gpu_audit.billing.query import literal
from gpu_audit.billing.summary import cents
from gpu_audit.core.frozen import record
from gpu_audit.errors import InputError
from gpu_audit.history import billing_cache
from gpu_audit.history.billing_cache import KnownFile

# bumped when the query's groups or the kept aggregates' form change: every file is read again
# (3: each file's daily groups kept as Parquet, not JSON lists)
QUERY_VERSION = 3


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


def run_incremental(
    conn: Any,
    paths: Sequence[str],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
    history: str,
    now: datetime,
    full: bool = False,
) -> tuple[list[ExportFiles], Reading]:
    """Discover the exports' current files, read the new and changed ones, reuse the rest:
    every file's daily groups end in `conn`'s table of them (billing/daybook.py)."""
    import tempfile  # keeps tempfile off `billing`'s start-up without --history

    from gpu_audit.history import schema  # keeps history.schema off `billing`'s start-up
    from gpu_audit.history.store import HistoryStore  # keeps history.store off `billing`'s start-up

    if os.path.exists(history):  # made where missing; an empty file is refused, never filled
        schema.check_file(history, create=False)
    store = HistoryStore.open(history)  # a foreign or newer file is refused, untouched
    try:
        fs = duck.file_system(conn)
        # local paths absolute: the history knows a file by one name from any directory
        local = [path if "://" in path else os.path.abspath(path) for path in paths]
        exports = [discover(path, fs, period) for path in local]
        key = query_key(period, tag_keys, gpu_types)
        with store.errors():
            known = billing_cache.known(store.conn, key)
        daycache.attach(conn, history)
        copied = daycache.present(conn, key, tag_keys)
        daybook.create(conn, tag_keys)
        daybook.create(conn, tag_keys, FRESH)
        daybook.create(conn, tag_keys, daycache.STAGE, path=True)
        fresh: list[KnownFile] = []
        read: list[str] = []
        reused: list[str] = []
        staged: dict[str, str] = {}  # file → the digest its staged rows are of
        with tempfile.TemporaryDirectory(prefix="gpu-audit-days-") as scratch:
            for export in exports:
                for name in export.files:
                    if "://" in name:  # remote: read whole, never recorded
                        _read(conn, export, name, period, tag_keys, gpu_types, paths)
                        conn.execute(f"INSERT INTO {daybook.ROWS} SELECT * FROM {FRESH}")
                        read.append(name)
                        continue
                    stat = os.stat(name)
                    old = None if full else known.get(name)
                    same = old and old.size == stat.st_size and old.mtime_ns == stat.st_mtime_ns
                    sha = "" if same or not old else digest(name)
                    if old and (same or (old.size == stat.st_size and old.digest == sha)):
                        blob = b""  # the history's copy, read where it is needed
                        if not same or copied.get(name) != old.digest:
                            with store.errors():
                                blob = billing_cache.aggregates_of(store.conn, key, name)
                        if not same:
                            fresh.append(_known(export, name, stat, sha, blob))
                        if copied.get(name) != old.digest:  # the copy lost: from the history
                            kept = os.path.join(scratch, f"{len(staged)}.parquet")
                            with open(kept, "wb") as handle:
                                handle.write(blob)
                            daycache.restore(conn, name, kept)
                            staged[name] = old.digest
                        reused.append(name)
                        continue
                    sha = sha or digest(name)
                    _read(conn, export, name, period, tag_keys, gpu_types, paths)
                    blob = _parquet(conn, os.path.join(scratch, "fresh.parquet"))
                    conn.execute(f"INSERT INTO {daycache.STAGE} SELECT ?, * FROM {FRESH}", [name])
                    staged[name] = sha
                    read.append(name)
                    fresh.append(_known(export, name, stat, sha, blob))
        current = {name for e in exports for name in e.files}
        roots = {e.path for e in exports}
        dropped = [f.path for f in known.values() if f.export in roots and f.path not in current]
        daycache.store(conn, key, staged, dropped)  # the copy first: the history says it holds
        daycache.days(conn, key, [n for n in current if "://" not in n])
        if not daybook.any_in_period(conn):
            raise InputError(f"{', '.join(paths)}: no rows charged in {period.name}")
        with store.transaction() as tx:
            billing_cache.replace_files(tx, key, now.isoformat(), fresh, dropped)
        return exports, Reading(history, full, tuple(read), len(reused), len(dropped))
    finally:
        store.close()


FRESH = "fresh_days"  # one file's daily groups, as read


def _parquet(conn: Any, path: str) -> bytes:
    """The file just read's daily groups as Parquet bytes (exact decimals, UTC times)."""
    conn.execute(f"COPY {FRESH} TO {literal(path)} (FORMAT parquet, COMPRESSION zstd)")
    with open(path, "rb") as handle:
        return handle.read()


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
) -> None:
    """One file's daily groups into the `FRESH` table (emptied first)."""
    one = ExportFiles(path=export.path, cloud=export.cloud, files=(name,), version=export.version)
    conn.execute(f"DELETE FROM {FRESH}")
    daybook.load(conn, [one], period, tag_keys, gpu_types, paths, False, FRESH)


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
