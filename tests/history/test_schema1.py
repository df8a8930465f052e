"""A database written by the first gpu-audit with a history (schema 1) is migrated on open and
reads as it was written: `data/schema1.db` holds the two demo audits, recorded by that version
(fingerprints, findings, not-evaluated checks and comparison counts are read from its tables
before the migration and compared with what the migrated file gives)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from gpu_audit.history import schema
from gpu_audit.history.load import load_audit
from gpu_audit.history.rows import iso
from gpu_audit.history.store import HistoryStore
from tests.history.conftest import run

SCHEMA1 = Path(__file__).parent / "data" / "schema1.db"


def _as_written(db: Path) -> dict[int, dict[str, object]]:
    conn = sqlite3.connect(db)
    out: dict[int, dict[str, object]] = {}
    for audit_id, new, persisting, resolved, removed in conn.execute(
        "SELECT id, new, persisting, resolved, removed FROM audits ORDER BY id"
    ).fetchall():
        where = (audit_id,)
        out[audit_id] = {
            "counts": (new, persisting, resolved, removed),
            "findings": conn.execute(
                "SELECT fingerprint, rule_id, resource_seq, expected, actual, waiver IS NULL, "
                "first_seen, audits_open FROM findings WHERE audit_id = ? ORDER BY seq",
                where,
            ).fetchall(),
            "checks": conn.execute(
                "SELECT rule_id, resource_seq, missing FROM not_evaluated WHERE audit_id = ? "
                "ORDER BY rowid",
                where,
            ).fetchall(),
            "resources": conn.execute(
                "SELECT id FROM resources WHERE audit_id = ? ORDER BY seq", where
            ).fetchall(),
        }
    conn.close()
    return out


def test_a_schema1_database_migrates_and_reads_as_written(tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    shutil.copyfile(SCHEMA1, db)
    written = _as_written(db)
    assert [len(w["checks"]) for w in written.values()] == [42, 44]  # type: ignore[arg-type]
    store = HistoryStore.open(str(db), create=False)
    assert store.conn.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
    for audit_id, was in written.items():
        result = load_audit(store, audit_id)
        rows = {id(r): i for i, r in enumerate(result.resources)}
        assert [(r.id,) for r in result.resources] == was["resources"]
        assert [
            (
                fp,
                f.rule_id,
                rows[id(f.resource)],
                f.expected,
                f.actual,
                f.waiver is None,
                iso(c.first_seen),
                c.audits_open,
            )
            for f, fp, c in zip(
                result.findings,
                result.fingerprints,
                result.since.changes,  # type: ignore[union-attr]
                strict=True,
            )
        ] == was["findings"]
        assert [(n.rule_id, rows[id(n.resource)], n.missing) for n in result.not_evaluated] == (
            was["checks"]
        )
        since = result.since
        assert since is not None
        counts = (since.new, since.persisting, len(since.resolved), len(since.removed))
        assert counts == was["counts"] or audit_id == 1  # the first: recorded uncompared
    checks = "SELECT audit_id, sum(checks) FROM not_evaluated GROUP BY audit_id"
    assert store.conn.execute(checks).fetchall() == [(1, 42), (2, 44)]
    store.close()
    code, out, err = run("history", "show", "2", "--format", "json", "--history", db)
    assert code == 0 and '"resolved"' in out, err
