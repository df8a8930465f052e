"""The history file: refused untouched when foreign, corrupt or newer; migrated forward;
concurrent recordings both land; a killed writer leaves the previous state."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpu_audit.history import schema
from gpu_audit.history.store import HistoryStore
from tests.conftest import ROOT
from tests.history.conftest import DATES, run


def _scan(policy: Path, inventory: Path, db: Path, when: str = DATES[0]) -> tuple[int, str, str]:
    return run(
        "scan", "--inventory", inventory, "--policy", policy, "--history", db, "--now", when,
        "--fail-on", "none", "-q",
    )  # fmt: skip


def _recorded(quarters: tuple[Path, list[Path]], tmp_path: Path) -> Path:
    policy, paths = quarters
    db = tmp_path / "history.db"
    assert _scan(policy, paths[0], db)[0] == 0
    return db


def _refused(quarters: tuple[Path, list[Path]], db: Path, expected: str) -> None:
    before = db.read_bytes()
    policy, paths = quarters
    code, _, err = _scan(policy, paths[1], db, DATES[1])
    assert code == 2
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err
    assert db.read_bytes() == before
    code, _, err = run("history", "list", "--history", db)
    assert code == 2 and expected in err
    assert db.read_bytes() == before


def test_a_foreign_sqlite_file_is_refused_untouched(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('not ours')")
    conn.commit()
    conn.close()
    _refused(quarters, db, "not a gpu-audit history database (another SQLite file)")


def test_a_file_that_is_not_sqlite_is_refused_untouched(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    db = tmp_path / "notes.db"
    db.write_text("policies:\n  - runbook\n" * 20)
    _refused(quarters, db, "not a gpu-audit history database (not SQLite)")


@pytest.mark.parametrize("damage", ["schema page", "truncated"])
def test_a_corrupt_database_is_refused_untouched(
    quarters: tuple[Path, list[Path]], tmp_path: Path, damage: str
) -> None:
    db = _recorded(quarters, tmp_path)
    data = bytearray(db.read_bytes())
    if damage == "schema page":
        data[100:4000] = bytes((i * 7 + 3) % 256 for i in range(3900))
    else:
        data = data[: len(data) // 3]
    db.write_bytes(bytes(data))
    _refused(quarters, db, "history: unreadable database")


def test_a_newer_database_is_refused_untouched(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    db = _recorded(quarters, tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    conn.close()
    _refused(quarters, db, f"written by a newer gpu-audit (schema {schema.SCHEMA_VERSION + 1};")


def test_a_missing_directory_or_database_is_one_line(tmp_path: Path) -> None:
    code, _, err = run("history", "list", "--history", tmp_path / "none.db")
    assert (
        code == 2
        and err == f"gpu-audit: error: {tmp_path / 'none.db'}: history: no such database\n"
    )
    code, _, err = run("history", "show", "1", "--history", tmp_path / "no" / "such.db")
    assert code == 2 and "history: no such directory" in err
    assert not (tmp_path / "none.db").exists()


def test_an_unknown_audit_id_is_one_line(quarters: tuple[Path, list[Path]], tmp_path: Path) -> None:
    db = _recorded(quarters, tmp_path)
    code, _, err = run("history", "show", "7", "--history", db)
    assert code == 2 and err.strip().endswith("history: no audit with id 7")
    code, out, _ = run("history", "show", "1", "--history", db, "--format", "json")
    assert code == 0 and '"rule_id": "spot-for-training"' in out


def test_migrations_run_forward_and_keep_the_data(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    db = _recorded(quarters, tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    next_version = schema.SCHEMA_VERSION + 1
    later = {**schema.MIGRATIONS, next_version: "ALTER TABLE audits ADD COLUMN note TEXT"}
    schema.migrate(str(db), conn, later)
    assert conn.execute("PRAGMA user_version").fetchone() == (next_version,)
    assert conn.execute("SELECT count(*), max(note) FROM audits").fetchone() == (1, None)
    conn.close()
    with pytest.raises(Exception, match="newer gpu-audit"):
        HistoryStore.open(str(db))  # this version reads up to SCHEMA_VERSION


def test_the_database_is_in_wal_mode(quarters: tuple[Path, list[Path]], tmp_path: Path) -> None:
    db = _recorded(quarters, tmp_path)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA application_id").fetchone() == (schema.APPLICATION_ID,)
    conn.close()


def _cli(*args: object) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "gpu_audit", *map(str, args)]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _holder(db: Path, body: str) -> subprocess.Popen[str]:
    """A second process holding the database's write lock, saying `locked` once it has it."""
    code = (
        "import sys, time\n"
        "from gpu_audit.history.store import HistoryStore\n"
        f"store = HistoryStore.open({str(db)!r})\n"
        "with store.transaction() as conn:\n" + textwrap.indent(body, "    ") + "\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )


def test_two_concurrent_recordings_both_land(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    policy, paths = quarters
    db = tmp_path / "history.db"
    scans = [
        _cli(
            "scan",
            "--inventory",
            paths[i],
            "--policy",
            policy,
            "--history",
            db,
            "--now",
            DATES[i],
            "--fail-on",
            "none",
            "-q",
        )
        for i in (0, 1)
    ]
    for process in scans:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    # and one writer waits for another's transaction instead of failing
    holder = _holder(db, 'print("locked", flush=True)\ntime.sleep(1.5)')
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    waiting = _cli("scan", "--inventory", paths[2], "--policy", policy, "--history", db,
                   "--now", DATES[2], "--fail-on", "none", "-q")  # fmt: skip
    _, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, err
    holder.communicate(timeout=60)
    assert holder.returncode == 0
    store = HistoryStore.open(str(db), create=False)
    audits = store.audits()
    assert len(audits) == 3
    assert audits[2].persisting is not None and audits[2].persisting > 0
    store.close()


def test_a_writer_killed_mid_transaction_leaves_the_previous_state(
    quarters: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    db = _recorded(quarters, tmp_path)
    conn = sqlite3.connect(db)
    documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    conn.close()
    assert documents > 0
    body = (
        'conn.execute("DELETE FROM documents")\n'
        'conn.execute("DELETE FROM audits")\n'
        'print("locked", flush=True)\n'
        "time.sleep(60)"
    )
    holder = _holder(db, body)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate(timeout=30)
    store = HistoryStore.open(str(db), create=False)
    assert len(store.audits()) == 1
    assert store.conn.execute("SELECT count(*) FROM documents").fetchone()[0] == documents
    store.close()
    policy, paths = quarters
    assert _scan(policy, paths[1], db, DATES[1])[0] == 0  # and the next audit records
