"""Write the quarter's files with the real engines: Parquet through DuckDB, gzip CSV through csv + gzip."""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

Schema = Sequence[tuple[str, str]]  # (column name, DuckDB type), in file order
Record = Mapping[str, Any]  # column name -> Decimal | str | datetime | dict | list | None


def _json_value(value: Any, sql_type: str) -> Any:
    """A value as the JSON reader will cast it to `sql_type`: amounts as text, so no float touches them."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        if sql_type == "TIMESTAMPTZ":
            return value.strftime("%Y-%m-%d %H:%M:%S+00")
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return value


def write_parquet(path: Path, schema: Schema, records: Sequence[Record]) -> None:
    """Write `records` to `path` (snappy Parquet) with exactly `schema`'s column names and types.

    The rows go to DuckDB as newline-delimited JSON read with explicit column types (a relation
    built from Python rows; a multi-row VALUES insert is ~20x slower), then `COPY ... (FORMAT
    parquet)` without bloom filters (they would make the demo's small files a tenth larger)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    names = {name for name, _ in schema}
    with tempfile.TemporaryDirectory(prefix="gpu-audit-quarter-") as tmp:
        rows_file = Path(tmp) / "rows.ndjson"
        with rows_file.open("w", encoding="utf-8") as f:
            for rec in records:
                unknown = set(rec) - names
                if unknown:
                    raise ValueError(f"{path.name}: columns not in the schema: {sorted(unknown)}")
                line = {n: _json_value(rec.get(n), t) for n, t in schema}
                f.write(json.dumps(line) + "\n")
        columns = ", ".join(f"'{n}': '{t}'" for n, t in schema)
        source = (
            f"SELECT * FROM read_json({_sql_text(rows_file)}, format = 'newline_delimited', "
            f"columns = {{{columns}}})"
        )
        options = "FORMAT parquet, COMPRESSION snappy, WRITE_BLOOM_FILTER false"
        _connection().execute(f"COPY ({source}) TO {_sql_text(path)} ({options})")


@functools.cache
def _connection() -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB for every file this process writes (a new one costs more than a COPY)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


def _sql_text(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def csv_text(value: Any) -> str:
    """How a FOCUS CSV spells a value: amounts in plain notation, empty for NULL."""
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def write_csv_gz(path: Path, columns: Sequence[str], records: Sequence[Record]) -> int:
    """Write a gzip CSV with a header (RFC 4180 quoting where a value needs it); returns its bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\r\n")
    writer.writerow(columns)
    for rec in records:
        writer.writerow([csv_text(rec.get(c)) for c in columns])
    # mtime=0: the same quarter gives byte-identical files, so the checked-in demo diffs cleanly
    data = gzip.compress(text.getvalue().encode("utf-8"), mtime=0)
    path.write_bytes(data)
    return len(data)
