"""Schema 1 → 2: an audit's finding, resource and not-evaluated rows become column documents."""

from __future__ import annotations

import sqlite3

from gpu_audit.history.documents import encode_checks, encode_columns, encode_lines
from gpu_audit.history.rows import RESOURCE_COLUMNS

_FINDING_INDEX = (
    "fingerprint",
    "first_seen",
    "audits_open",
    "rule_id",
    "severity",
    "resource_seq",
    "monthly_savings_usd",
)
_FINDING_DETAILS = ("field", "expected", "actual", "line", "waiver", "suppressed")

TABLES = """
CREATE TABLE documents (
    audit_id INTEGER NOT NULL,
    name TEXT NOT NULL,  -- fingerprints, finding_index, finding_details, resource_index, …
    body BLOB NOT NULL,  -- zlib-compressed JSON, or lines of text (history/documents.py)
    PRIMARY KEY (audit_id, name)
);
CREATE TABLE not_evaluated_checks (
    audit_id INTEGER NOT NULL,
    rule_id TEXT NOT NULL,
    missing TEXT NOT NULL,
    checks INTEGER NOT NULL,
    PRIMARY KEY (audit_id, rule_id, missing)
) WITHOUT ROWID
"""


def to_2(conn: sqlite3.Connection) -> None:
    """Migrate schema 1 to 2 in place: each audit's finding, resource and not-evaluated rows become
    column documents, the old tables dropped."""
    for statement in TABLES.split(";"):
        conn.execute(statement)
    for (audit_id,) in conn.execute("SELECT id FROM audits").fetchall():
        for name, body in _documents(conn, audit_id).items():
            conn.execute("INSERT INTO documents VALUES (?,?,?)", (audit_id, name, body))
    conn.execute(
        "INSERT INTO not_evaluated_checks SELECT audit_id, rule_id, missing, count(*) "
        "FROM not_evaluated GROUP BY audit_id, rule_id, missing"
    )
    for table in ("not_evaluated", "findings", "resources"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("ALTER TABLE not_evaluated_checks RENAME TO not_evaluated")


def _documents(conn: sqlite3.Connection, audit_id: int) -> dict[str, bytes]:
    def columns(query: str, names: tuple[str, ...]) -> dict[str, list[object]]:
        found = conn.execute(query % ", ".join(names), (audit_id,)).fetchall()
        return {name: [row[i] for row in found] for i, name in enumerate(names)}

    resources = columns(
        "SELECT %s FROM resources WHERE audit_id = ? ORDER BY seq", ("key", *RESOURCE_COLUMNS)
    )
    index = columns("SELECT %s FROM findings WHERE audit_id = ? ORDER BY seq", _FINDING_INDEX)
    fingerprints = index.pop("fingerprint")
    index["resource"] = index.pop("resource_seq")
    details = columns("SELECT %s FROM findings WHERE audit_id = ? ORDER BY seq", _FINDING_DETAILS)
    index["open"] = [
        w is None and s is None
        for w, s in zip(details["waiver"], details["suppressed"], strict=True)
    ]
    checks = conn.execute(
        "SELECT rule_id, resource_seq, missing FROM not_evaluated WHERE audit_id = ? "
        "ORDER BY rowid",
        (audit_id,),
    ).fetchall()
    return {
        "resource_index": encode_columns(resources),
        "fingerprints": encode_lines(fingerprints),  # type: ignore[arg-type]
        "finding_index": encode_columns(index),
        "finding_details": encode_columns(details),
        "not_evaluated": encode_checks(
            [c[0] for c in checks], [c[1] for c in checks], [c[2] for c in checks]
        ),
    }
