"""What `billing --history` keeps between runs (schema 5): each export file it read, with the
file's daily aggregates, so the next run reads only new or changed files; and each run's
forecast, so a later audit can set it beside what was spent.

A file is known by its path, size, modification time and BLAKE2b digest, and by its identity in
the export (the AWS execution, the Azure run or the GCP export day: the folder the file lies in);
its aggregates are kept per `query_key` (the period, the tags and the catalog the query ran
with): the file's daily groups as Parquet bytes (billing/incremental.py; before query version 3,
zlib-compressed JSON lists, which a run no longer reads: their key is another; the column's
comment below, made by schema 5, says the older form).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from gpu_audit.core.frozen import record

TABLE = """
CREATE TABLE billing_files (
    query_key TEXT NOT NULL,  -- digest of the period, tags and catalog the aggregates are for
    export TEXT NOT NULL,  -- the PATH given to `billing`
    path TEXT NOT NULL,  -- the data file
    cloud TEXT NOT NULL,
    identity TEXT NOT NULL,  -- the AWS execution, Azure run or GCP export day (its folder)
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    digest TEXT NOT NULL,  -- BLAKE2b-160 of the file's bytes
    read_at TEXT NOT NULL,
    aggregates BLOB NOT NULL,  -- the file's daily groups (zlib JSON, exact decimals as text)
    PRIMARY KEY (query_key, path)
);
CREATE TABLE billing_forecasts (
    recorded_at TEXT NOT NULL,  -- the run's time (`--now`)
    period TEXT NOT NULL,
    last_day TEXT NOT NULL,  -- the last day read
    dimension TEXT NOT NULL,  -- total, cloud or tag:<key>
    key TEXT NOT NULL,
    to_date_usd REAL NOT NULL,
    forecast_usd REAL NOT NULL,
    low_usd REAL NOT NULL,
    high_usd REAL NOT NULL,
    method TEXT NOT NULL
);
CREATE INDEX billing_forecasts_by_period ON billing_forecasts (period, recorded_at)
"""


@record
class KnownFile:
    """A data file as the last run that read it saw it."""

    path: str
    export: str
    cloud: str
    identity: str
    size: int
    mtime_ns: int
    digest: str
    aggregates: bytes


@record
class ForecastRow:
    recorded_at: str
    period: str
    last_day: str
    dimension: str
    key: str
    to_date_usd: float
    forecast_usd: float
    low_usd: float
    high_usd: float
    method: str


def pack(groups: Sequence[list[Any]]) -> bytes:
    """A file's aggregate rows as compact JSON, zlib-compressed (level 6)."""
    return zlib.compress(json.dumps(groups, separators=(",", ":")).encode("utf-8"), 6)


def unpack(blob: bytes) -> list[list[Any]]:
    """The aggregate rows `pack` stored."""
    body = json.loads(zlib.decompress(blob).decode("utf-8"))
    assert isinstance(body, list)
    return body


def known(conn: sqlite3.Connection, query_key: str) -> dict[str, KnownFile]:
    """The files kept for this query key, without their aggregates (`aggregates` is empty:
    `aggregates_of` reads a file's where they are needed)."""
    rows = conn.execute(
        "SELECT path, export, cloud, identity, size, mtime_ns, digest, X'' "
        "FROM billing_files WHERE query_key = ?",
        (query_key,),
    ).fetchall()
    return {row[0]: KnownFile(*row) for row in rows}


def aggregates_of(conn: sqlite3.Connection, query_key: str, path: str) -> bytes:
    """One kept file's aggregates (its Parquet bytes) under the query key; empty when none."""
    row = conn.execute(
        "SELECT aggregates FROM billing_files WHERE query_key = ? AND path = ?",
        (query_key, path),
    ).fetchone()
    return bytes(row[0]) if row else b""


def replace_files(
    conn: sqlite3.Connection,
    query_key: str,
    read_at: str,
    kept: Iterable[KnownFile],
    dropped: Iterable[str],
) -> None:
    """Store the files read (new or changed) and drop the superseded ones, in one transaction
    (the caller's)."""
    conn.executemany(
        "DELETE FROM billing_files WHERE query_key = ? AND path = ?",
        ((query_key, path) for path in dropped),
    )
    conn.executemany(
        "INSERT OR REPLACE INTO billing_files VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            (
                query_key,
                f.export,
                f.path,
                f.cloud,
                f.identity,
                f.size,
                f.mtime_ns,
                f.digest,
                read_at,
                f.aggregates,
            )
            for f in kept
        ),
    )


def add_forecast(conn: sqlite3.Connection, rows: Iterable[ForecastRow]) -> None:
    """Record forecast rows (one per dimension and key) in `billing_forecasts`."""
    conn.executemany(
        "INSERT INTO billing_forecasts VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            (
                r.recorded_at,
                r.period,
                r.last_day,
                r.dimension,
                r.key,
                r.to_date_usd,
                r.forecast_usd,
                r.low_usd,
                r.high_usd,
                r.method,
            )
            for r in rows
        ),
    )


def forecasts(conn: sqlite3.Connection, period: str) -> list[ForecastRow]:
    """Every forecast recorded for `period`, oldest first."""
    rows = conn.execute(
        "SELECT recorded_at, period, last_day, dimension, key, to_date_usd, forecast_usd, "
        "low_usd, high_usd, method FROM billing_forecasts WHERE period = ? "
        "ORDER BY recorded_at, rowid",
        (period,),
    ).fetchall()
    return [ForecastRow(*row) for row in rows]
