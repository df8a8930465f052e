"""A database written by the first gpu-audit with a history (schema 1) is migrated on open and
renders as a database written now: `data/schema1.db` holds the two demo audits, recorded then."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from gpu_audit.history import schema
from tests.conftest import ROOT
from tests.history.conftest import run

SCHEMA1 = Path(__file__).parent / "data" / "schema1.db"
INVENTORIES = ("fixtures/inventory/demo.yaml", "fixtures/inventory/demo-next.yaml")


def _shown(db: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(db.parent)  # the reports name the database as given: the same name
    outputs = []
    for args in (("list",), ("trend",), *(("show", str(i), "--format", f) for i in (1, 2)
                                            for f in ("json", "markdown"))):  # fmt: skip
        code, out, err = run("history", *args, "--history", db.name)
        assert code == 0, err
        # the shipped policies were elsewhere when it was written
        outputs.append(re.sub(r"[^\s\"(]*runbook\.yaml", "runbook.yaml", out))
    return outputs


def test_a_schema1_database_migrates_and_shows_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the scope holds the paths as given, relative to the repository
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old = tmp_path / "old" / "history.db"
    shutil.copyfile(SCHEMA1, old)
    fresh = tmp_path / "new" / "history.db"
    for inventory in INVENTORIES:
        code, _, err = run(
            "scan", "--inventory", inventory, "--policy", "fixtures/inventory/demo-policy.yaml",
            "--history", fresh, "--fail-on", "none", "-q",
        )  # fmt: skip
        assert code == 0, err
    assert _shown(old, monkeypatch) == _shown(fresh, monkeypatch)
    conn = sqlite3.connect(old)
    assert conn.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
    counted = "SELECT audit_id, sum(checks) FROM not_evaluated GROUP BY audit_id"
    assert conn.execute(counted).fetchall() == [(1, 42), (2, 44)]
    assert conn.execute(counted).fetchall() == sqlite3.connect(fresh).execute(counted).fetchall()
    conn.close()
