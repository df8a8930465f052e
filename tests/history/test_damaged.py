"""Histories that are empty or damaged: `history list|trend|reservations` with nothing to list is
an empty table; a stored audit that does not decode (bad JSON, bad zlib, a missing key) is named
in one warning line and every command goes on with the other audits."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import pytest

from gpu_audit.history.store import HistoryStore
from tests.history.conftest import run


@pytest.mark.parametrize("command", ["list", "trend", "reservations"])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_nothing_to_list_is_no_traceback(tmp_path: Path, command: str, fmt: str) -> None:
    db = tmp_path / "audits.db"
    HistoryStore.open(str(db)).close()
    code, out, err = run("history", command, "--history", db, "--format", fmt)
    assert code == 0, err
    if fmt == "json":
        body = json.loads(out)
        assert next(v for k, v in body.items() if isinstance(v, list)) == []
    elif command == "reservations":  # says there is none, and in how many audits (issue 49)
        assert out.startswith("no reservation or Capacity Block in "), out
    else:
        assert out.splitlines()[1].startswith("---"), out


def _recorded(quarters: tuple[Path, list[Path]], tmp_path: Path) -> Path:
    policy, paths = quarters
    db = tmp_path / "audits.db"
    for path in paths:
        run("scan", "--inventory", path, "--policy", policy, "--history", db, "--fail-on", "none")
    return db


def _damage(db: Path, how: str, audit_id: int = 2) -> None:
    conn = sqlite3.connect(db)
    with conn:
        if how == "scope-json":
            conn.execute("UPDATE audits SET scope = '{bad' WHERE id = ?", (audit_id,))
        elif how == "scope-key":
            conn.execute("UPDATE audits SET scope = '{\"nope\": 1}' WHERE id = ?", (audit_id,))
        elif how == "time":
            conn.execute("UPDATE audits SET generated_at = 'soon' WHERE id = ?", (audit_id,))
        elif how == "count-bytes":  # SQLite keeps any type in any column
            conn.execute("UPDATE audits SET resolved = x'00ff' WHERE id = ?", (audit_id,))
        elif how == "amount-text":
            conn.execute("UPDATE audits SET monthly_cost_usd = '{}' WHERE id = ?", (audit_id,))
        elif how == "rules-json":
            conn.execute("UPDATE audits SET rules = '[' WHERE id = ?", (audit_id,))
        elif how == "zlib":
            conn.execute(
                "UPDATE documents SET body = x'00ff' WHERE audit_id = ? AND name <> 'fingerprints'",
                (audit_id,),
            )
            conn.execute("UPDATE audits SET resource_documents = x'00ff' WHERE id = ?", (audit_id,))
        elif how == "missing-key":
            body = zlib.compress(json.dumps({"columns": {}}).encode())
            conn.execute(
                "UPDATE documents SET body = ? WHERE audit_id = ? AND name LIKE '%_index'",
                (body, audit_id),
            )
        elif how == "missing-document":
            conn.execute("DELETE FROM documents WHERE audit_id = ?", (audit_id,))
    conn.close()


HOWS = [
    "scope-json", "scope-key", "time", "count-bytes", "amount-text", "rules-json", "zlib",
    "missing-key", "missing-document",
]  # fmt: skip


@pytest.mark.parametrize("how", HOWS)
def test_a_damaged_audit_is_named_and_the_rest_is_read(
    quarters: tuple[Path, list[Path]], tmp_path: Path, how: str
) -> None:
    db = _recorded(quarters, tmp_path)
    _damage(db, how)
    for command in (
        ["list"],
        ["trend"],
        ["reservations"],
        ["show", "3"],
        ["list", "--format", "json"],
    ):
        code, out, err = run("history", *command, "--history", db)
        assert code == 0, (command, err)
        assert "Traceback" not in err and "internal error" not in err
        for line in err.splitlines():
            assert line.startswith("gpu-audit: warning: ") and "audit 2 is damaged" in line, err
    code, out, err = run("history", "list", "--history", db, "--format", "json")
    ids = [a["id"] for a in json.loads(out)["audits"]]
    assert 1 in ids and 3 in ids
    if how in ("scope-json", "scope-key", "time", "count-bytes", "amount-text"):
        assert 2 not in ids and "audit 2 is damaged" in err


@pytest.mark.parametrize("how", ["rules-json", "zlib", "missing-key", "missing-document"])
def test_showing_the_damaged_audit_is_one_line(
    quarters: tuple[Path, list[Path]], tmp_path: Path, how: str
) -> None:
    db = _recorded(quarters, tmp_path)
    _damage(db, how)
    code, _, err = run("history", "show", "2", "--history", db)
    assert code == 2, err
    assert err.strip() == err.strip().splitlines()[0], err
    assert f"{db}: history: audit 2 is damaged (" in err


@pytest.mark.parametrize(
    "how", ["amount-text", "rules-json", "zlib", "missing-key", "missing-document"]
)
def test_a_scan_after_a_damaged_audit_compares_with_the_one_before(
    quarters: tuple[Path, list[Path]], tmp_path: Path, how: str
) -> None:
    policy, paths = quarters
    db = _recorded(quarters, tmp_path)
    _damage(db, how, audit_id=2)
    code, out, err = run(
        "scan", "--inventory", paths[2], "--policy", policy, "--history", db, "--fail-on", "none",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert "audit 2 is damaged" in err and "internal error" not in err
    assert json.loads(out)["summary"]["since"]["previous_at"] == "2026-05-31T06:00:00Z"  # audit 1


@pytest.mark.parametrize("how", ["zlib", "missing-key", "missing-document"])
def test_billing_joins_a_history_with_a_damaged_audit(
    quarters: tuple[Path, list[Path]], tmp_path: Path, how: str
) -> None:
    pytest.importorskip("duckdb")
    db = _recorded(quarters, tmp_path)
    _damage(db, how, audit_id=3)  # the latest: the one before it gives the findings
    demo = Path(__file__).resolve().parents[2] / "fixtures" / "billing" / "demo" / "gcp"
    code, out, err = run(
        "billing", demo, "--period", "2026-Q3", "--now", "2026-10-05T08:00:00Z", "--format",
        "json", "--history", db,
    )  # fmt: skip
    assert code == 0, err
    assert "audit 3 is damaged" in err and "internal error" not in err
    assert json.loads(out)["coverage"]["audits"] == 3


def test_a_damaged_reservation_row_is_named_and_the_rest_listed(tmp_path: Path) -> None:
    fleet = Path(__file__).resolve().parents[2] / "fixtures" / "inventory" / "reservations.yaml"
    db = tmp_path / "audits.db"
    for _ in range(2):
        run("scan", "--inventory", fleet, "--history", db, "--fail-on", "none", "-q")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE reservations SET used = x'00ff' WHERE audit_id = 1")
    conn.close()
    code, out, err = run("history", "reservations", "--history", db, "--format", "json")
    assert code == 0, err
    assert "audit 1 is damaged" in err and "internal error" not in err
    listed = json.loads(out)["reservations"]
    assert listed and {u["audit_id"] for u in listed} == {2}
