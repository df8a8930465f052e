"""Reservations across audits: each audit's used and total count per reservation (schema 3), so
`history reservations` shows how full each ran, and a scan learns how long one has been empty."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from datetime import datetime

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Resource
from gpu_audit.history.damage import numbers
from gpu_audit.history.rows import iso

TABLE = """
CREATE TABLE reservations (
    audit_id INTEGER NOT NULL,
    provider TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT,
    type TEXT,
    instance_type TEXT,
    zone TEXT,
    total INTEGER,
    used INTEGER,
    unused_usd REAL,
    PRIMARY KEY (audit_id, provider, id)
) WITHOUT ROWID;
CREATE INDEX reservations_by_id ON reservations (provider, id)
"""
PRUNE = "DELETE FROM reservations WHERE audit_id = ?"


@record
class Use:
    """One reservation as one audit saw it."""

    generated_at: datetime
    audit_id: int
    provider: str
    id: str
    name: str | None
    type: str | None
    instance_type: str | None
    zone: str | None
    total: int | None
    used: int | None
    unused_usd: float | None


def insert(conn: sqlite3.Connection, audit_id: int, resources: Iterable[Resource]) -> None:
    """Record each reservation's type, place, total, used and unused dollars in this audit."""
    conn.executemany(
        "INSERT OR REPLACE INTO reservations VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            (
                audit_id,
                r.provider,
                r.id,
                r.name,
                r.reservation.type,
                r.instance_type,
                r.zone,
                r.reservation.total,
                r.reservation.used,
                r.reservation.unused_usd,
            )
            for r in resources
            if r.kind is Kind.RESERVATION
        ),
    )


def uses(
    conn: sqlite3.Connection, damaged: Callable[[object, Exception], None] | None = None
) -> list[Use]:
    """Every reservation in every audit, by reservation then oldest audit first; a row of a
    damaged audit (its time no time) is left out, said to `damaged`."""
    rows = conn.execute(
        "SELECT a.generated_at, r.* FROM reservations r JOIN audits a ON a.id = r.audit_id "
        "ORDER BY r.provider, r.id, a.generated_at, a.id"
    ).fetchall()
    out = []
    for row in rows:
        try:
            out.append(Use(_when(row[0]), *row[1:-3], *numbers(row[-3:], "IIF")))
        except (ValueError, TypeError, AttributeError) as exc:
            if damaged is None:
                raise
            damaged(row[1], exc)
    return out


def idle_hours(conn: sqlite3.Connection, now: datetime) -> dict[tuple[str, str], float]:
    """Per reservation seen before `now`: hours since the earliest audit of its latest run of
    audits with nothing on it (0 when the latest audit had something on it). A reservation the
    history never saw is not in the answer: this audit alone says nothing of how long."""
    rows = conn.execute(
        "SELECT r.provider, r.id, a.generated_at, r.used FROM reservations r "
        "JOIN audits a ON a.id = r.audit_id WHERE a.generated_at < ? "
        "ORDER BY r.provider, r.id, a.generated_at DESC, a.id DESC",
        (iso(now),),
    ).fetchall()
    empty_since: dict[tuple[str, str], datetime | None] = {}
    closed: set[tuple[str, str]] = set()
    for provider, ident, when, used in rows:
        key = (provider, ident.lower())
        if key in closed:
            continue
        if used:  # the run of empty audits ends here
            empty_since.setdefault(key, None)
            closed.add(key)
        else:
            empty_since[key] = _when(when)
    return {
        key: 0.0 if since is None else round(max(0.0, (now - since).total_seconds() / 3600), 2)
        for key, since in empty_since.items()
    }


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
