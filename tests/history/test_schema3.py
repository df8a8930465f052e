"""A history written by schema 3 (before `check --history` kept sweep estimates) opens, is
upgraded in place, keeps its audits, and records a check's sweep bound: the schema-1 demo file
brought to schema 3 by the migrations that version shipped, then used by this one."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.history import schema
from tests.conftest import FIXTURES

SCHEMA1 = Path(__file__).parent / "data" / "schema1.db"


def _schema3(tmp_path: Path) -> Path:
    db = tmp_path / "history.db"
    shutil.copyfile(SCHEMA1, db)
    conn = sqlite3.connect(db, isolation_level=None)
    schema.migrate(str(db), conn, {v: schema.MIGRATIONS[v] for v in (1, 2, 3)})
    assert conn.execute("PRAGMA user_version").fetchone() == (3,)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "sweep_estimates" not in tables
    conn.close()
    return db


def test_a_schema3_history_upgrades_and_records_a_checks_sweep_bound(tmp_path: Path) -> None:
    db = _schema3(tmp_path)
    listed = CliRunner().invoke(main, ["history", "list", "--history", str(db), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    tuning = FIXTURES / "sweeps" / "vertex-hpt-timeout.yaml"  # 30 trials × 2 h × 1 L4
    checked = CliRunner().invoke(main, ["check", str(tuning), "--history", str(db), "-q"])
    assert checked.exit_code in (0, 1), checked.output
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
    assert conn.execute("SELECT count(*) FROM audits").fetchone() == (3,)  # two demo audits + it
    assert conn.execute("SELECT name, format, gpu_hours FROM sweep_estimates").fetchall() == [
        ("l4-lr-sweep", "vertex", 60.0)
    ]
    # A second check; `history prune` drops the first one's estimates with it.
    again = CliRunner().invoke(main, ["check", str(tuning), "--history", str(db), "-q"])
    assert again.exit_code in (0, 1), again.output
    latest = conn.execute("SELECT max(id) FROM audits").fetchone()[0]
    pruned = CliRunner().invoke(main, ["history", "prune", "--history", str(db), "--keep", "1"])
    assert pruned.exit_code == 0, pruned.output
    assert conn.execute("SELECT audit_id FROM sweep_estimates").fetchall() == [(latest,)]
