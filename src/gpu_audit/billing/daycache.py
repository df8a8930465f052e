"""The daily groups a history keeps, also in a DuckDB file beside it (`HISTORY.days`), so that a
daily run reads a year's groups from one table instead of a Parquet blob per export file.

The history's own rows stay the record (billing/incremental.py: each file's path, size, digest
and its groups as Parquet); this file is their copy in the engine's format, one table per query
key (`d_<key>`: the file's path, then the daily groups' columns) and a table of the digest each
file's rows were read from. A file whose copy is missing, or of another digest (the file lost,
or a run stopped between the two writes), is copied again from the history's Parquet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpu_audit.billing import daybook
from gpu_audit.billing.query import literal
from gpu_audit.errors import InputError

KEPT = "kept"
STAGE = "staged_days"  # the rows to keep this run: the files read, and copies restored
CURRENT = "current_files"  # the paths of the files the exports hold now


def path_of(history: str) -> str:
    """The DuckDB copy's path beside the history file (`HISTORY.days`)."""
    return f"{history}.days"


def attach(conn: Any, history: str) -> None:
    """Open (or make) the copy beside the history: a file that is no DuckDB database, or one
    in use, is one line."""
    import duckdb  # the duckdb extra: off check's start-up

    name = path_of(history)
    try:
        conn.execute(f"ATTACH {literal(name)} AS {KEPT}")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {KEPT}.files (query_key VARCHAR, path VARCHAR, "
            "digest VARCHAR, PRIMARY KEY (query_key, path))"
        )
    except duckdb.Error as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"{name}: the daily groups kept beside the history cannot be opened ({text[:160]}); "
            "remove it and the next run copies them again from the history"
        ) from None


def table(key: str) -> str:
    """The attached copy's table of daily groups kept under one query key."""
    return f"{KEPT}.d_{key}"


def present(conn: Any, key: str, tag_keys: Sequence[str]) -> dict[str, str]:
    """The files whose rows are kept for this query key, with the digest they were read from."""
    daybook.create(conn, tag_keys, table(key), path=True, replace=False)
    rows = conn.execute(
        f"SELECT path, digest FROM {KEPT}.files WHERE query_key = ?", [key]
    ).fetchall()
    return {path: digest for path, digest in rows}


def restore(conn: Any, name: str, parquet: str) -> None:
    """A file's rows, from its Parquet kept in the history, into the staged rows."""
    conn.execute(
        f"INSERT INTO {STAGE} BY NAME SELECT ? AS path, * FROM read_parquet({literal(parquet)})",
        [name],
    )


def store(conn: Any, key: str, digests: dict[str, str], dropped: Sequence[str]) -> None:
    """Replace the staged files' rows (and drop the superseded files'), in one transaction."""
    gone = [*digests, *dropped]
    if not gone:
        return
    conn.execute("BEGIN TRANSACTION")
    try:
        for target in (table(key), f"{KEPT}.files"):
            where = "" if target == table(key) else "query_key = ? AND "
            conn.execute(
                f"DELETE FROM {target} WHERE {where}path IN (SELECT unnest(?::VARCHAR[]))",
                [*([key] if where else []), gone],
            )
        conn.execute(f"INSERT INTO {table(key)} BY NAME SELECT * FROM {STAGE}")
        conn.execute(
            f"INSERT INTO {KEPT}.files SELECT ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[])",
            [key, list(digests), list(digests.values())],
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def days(conn: Any, key: str, files: Sequence[str]) -> None:
    """The current files' kept rows, beside this run's own, as the table the queries read
    (read where they are kept: `daybook.expose`)."""
    conn.execute(
        f"CREATE OR REPLACE TEMP TABLE {CURRENT} AS SELECT unnest(?::VARCHAR[]) AS path",
        [list(files)],
    )
    daybook.expose(conn, table(key), CURRENT)
