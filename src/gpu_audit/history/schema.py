"""The history database file: recognised by its header, versioned, migrated forward on open."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable

from gpu_audit.errors import InputError
from gpu_audit.history import billing_cache, reservations, sweeps
from gpu_audit.history.upgrade import to_2

APPLICATION_ID = 0x47505541  # "GPUA" in the SQLite header's application_id
SCHEMA_VERSION = 5
_MAGIC = b"SQLite format 3\x00"


# version → the statements (or the function) that bring the previous version to it; never edit
# a shipped entry.
MIGRATIONS: dict[int, str | Callable[[sqlite3.Connection], None]] = {
    1: """
    CREATE TABLE audits (
        id INTEGER PRIMARY KEY,
        generated_at TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        scope_key TEXT NOT NULL,
        scope TEXT NOT NULL,
        rules TEXT NOT NULL,
        coverage_gaps TEXT NOT NULL,
        skipped TEXT NOT NULL,
        waivers TEXT NOT NULL,
        resources INTEGER NOT NULL,
        findings_open INTEGER NOT NULL,
        not_evaluated INTEGER NOT NULL,
        new INTEGER,
        persisting INTEGER,
        resolved INTEGER,
        removed INTEGER,
        monthly_cost_usd REAL NOT NULL,
        monthly_savings_usd REAL NOT NULL,
        savings_realised_usd REAL NOT NULL,
        resource_documents BLOB NOT NULL  -- every resource in full (history/documents.py)
    );
    CREATE INDEX audits_by_scope ON audits (scope_key, generated_at);
    CREATE TABLE resources (
        audit_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        key TEXT NOT NULL,
        id TEXT NOT NULL,
        provider TEXT NOT NULL,
        account TEXT,
        region TEXT,
        location TEXT NOT NULL,
        monthly_cost_usd REAL,
        PRIMARY KEY (audit_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE findings (
        audit_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        resource_seq INTEGER NOT NULL,
        rule_id TEXT NOT NULL,
        severity INTEGER NOT NULL,
        field TEXT,
        expected TEXT NOT NULL,
        actual TEXT NOT NULL,
        line INTEGER,
        monthly_savings_usd REAL,
        waiver TEXT,
        suppressed TEXT,
        first_seen TEXT NOT NULL,
        audits_open INTEGER NOT NULL,
        PRIMARY KEY (audit_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE not_evaluated (
        audit_id INTEGER NOT NULL,
        rule_id TEXT NOT NULL,
        resource_seq INTEGER NOT NULL,
        missing TEXT NOT NULL
    );
    CREATE INDEX not_evaluated_by_audit ON not_evaluated (audit_id);
    """,
    2: to_2,
    3: reservations.TABLE,  # each audit's used and total count per reservation
    4: sweeps.TABLE,  # each sweep file a check read: its GPU-hours bound and commit
    5: billing_cache.TABLE,  # each export file billing read, its aggregates; each forecast
}


def check_file(path: str, create: bool = True) -> None:
    """Refuse, without opening it for writing, a file that is not a history database we can
    read: a foreign or corrupt file, one written by a newer gpu-audit, a FIFO or device (which
    would block or never end), and, where nothing is to be recorded (`create=False`), an empty
    file: every open of a history goes through here."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO or device)"
            raise InputError(f"{path}: history: {what}; refused")
        with open(path, "rb") as handle:
            header = handle.read(100)
    except FileNotFoundError:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise InputError(f"{path}: history: no such directory {directory}") from None
        return
    except OSError as exc:
        raise InputError(f"{path}: history: cannot read: {exc.strerror}") from None
    if not header and create:
        return  # an empty file (mktemp) becomes a new database where an audit is recorded
    if not header:
        raise InputError(
            f"{path}: history: an empty file, not a gpu-audit history database; refused "
            "(record an audit into it first: gpu-audit scan --history)"
        )
    if len(header) < 100 or not header.startswith(_MAGIC):
        raise InputError(f"{path}: history: not a gpu-audit history database (not SQLite)")
    application_id = int.from_bytes(header[68:72], "big")
    version = int.from_bytes(header[60:64], "big")
    if application_id != APPLICATION_ID:
        raise InputError(f"{path}: history: not a gpu-audit history database (another SQLite file)")
    _check_version(path, version)


def _check_version(path: str, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{path}: history: written by a newer gpu-audit (schema {version}; this version "
            f"reads up to {SCHEMA_VERSION}); upgrade gpu-audit, the file was not changed"
        )


def migrate(
    path: str,
    conn: sqlite3.Connection,
    migrations: dict[int, str | Callable[[sqlite3.Connection], None]] = MIGRATIONS,
) -> None:
    """Bring the database to the latest schema, in one transaction (a concurrent opener waits)."""
    target = max(migrations)
    if conn.execute("PRAGMA user_version").fetchone()[0] >= target:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        _check_version(path, version)
        if version == 0:
            application_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if application_id not in (0, APPLICATION_ID) or tables:
                raise InputError(f"{path}: history: not a gpu-audit history database")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for step in range(version + 1, target + 1):
            migration = migrations[step]
            if callable(migration):
                migration(conn)
                continue
            for statement in migration.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {target}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
