"""A daily run with `--history` reads only the files that arrived since the last one and
matches a full read to the cent; `--full` reads everything again; a superseded file's
aggregates are dropped; the history keeps each run's forecast; a foreign file is refused."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.billing import daily_bill

DAY1 = date(2026, 8, 18)
DAY2 = DAY1 + timedelta(days=1)
SHORT = date(2026, 7, 20)  # a shorter quarter so far, for tests that read every file twice


def billing(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    result = CliRunner().invoke(main, ["billing", *args, "--period", "2026-Q3", "--format", "json"])
    body = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, body, result.stderr


def garble_keeping_size_and_time(path: Path) -> None:
    """Overwrite a file with bytes no reader can parse, with its size and mtime kept: a run
    that opens it fails, one that trusts the history does not."""
    stat = path.stat()
    path.write_bytes(b"\xff" * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def same_figures(a: dict[str, Any], b: dict[str, Any]) -> None:
    for key in ("totals", "breakdowns", "unused", "forecast", "anomalies", "waste_usd"):
        assert a[key] == b[key], key
    assert [f["resource_id"] for f in a["findings"]] == [f["resource_id"] for f in b["findings"]]


def test_the_next_day_opens_only_the_new_files_and_matches_a_full_read(tmp_path: Path) -> None:
    aws, gcp = daily_bill.build(tmp_path / "daily", DAY1)
    db = tmp_path / "history.db"
    first_now = f"{DAY2}T06:00:00Z"
    code, first, err = billing(str(aws), str(gcp), "--history", str(db), "--now", first_now)
    assert code == 0, err
    assert first and first["incremental"]["files_read"] == 2 + 49  # July, August; 49 GCP days
    assert first["incremental"]["files_reused"] == 0
    old_files = sorted(p for p in (*aws.rglob("*.parquet"), *gcp.rglob("*.parquet")))
    # one more day arrives: AWS rewrites August in a new execution (the old file stays on the
    # prefix, listed by no manifest), GCP writes a new export day's folder
    new_aws = daily_bill.write_aws_month(aws, 8, DAY2, execution="exec-0819")
    new_gcp = daily_bill.write_gcp_day(gcp, DAY2)
    for path in old_files:
        garble_keeping_size_and_time(path)
    now = f"{DAY2 + timedelta(days=1)}T06:00:00Z"
    code, second, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0, err  # no garbled file was opened
    assert second and second["incremental"] == {
        "history": str(db), "full": False, "files_read": 2, "files_reused": 1 + 49,
        "files_dropped": 1,  # the superseded August file
    }  # fmt: skip
    conn = sqlite3.connect(db)
    assert {row[0] for row in conn.execute("SELECT path FROM billing_files")} >= {
        str(new_aws),
        str(new_gcp),
    }
    # the same quarter written fresh and read whole, with no history
    full_aws, full_gcp = daily_bill.build(tmp_path / "fresh", DAY2)
    code, full, err = billing(str(full_aws), str(full_gcp), "--now", now)
    assert code == 0, err
    assert full
    same_figures(second, full)
    # what it rests on, by hand: the report's GPU figure is every GPU day to 19 August
    want = sum(daily_bill.spend(d) for d in daily_bill.days(daily_bill.Q3_FIRST, DAY2))
    assert second["totals"]["gpu"]["effective_usd"] == float(round(want, 2))
    # each run's forecast is kept, with the day it rests on
    kept = conn.execute(
        "SELECT recorded_at, last_day, forecast_usd FROM billing_forecasts "
        "WHERE dimension = 'total' ORDER BY rowid"
    ).fetchall()
    assert [(r[0][:10], r[1]) for r in kept] == [
        ("2026-08-19", "2026-08-18"),
        ("2026-08-20", "2026-08-19"),
    ]
    assert kept[1][2] == second["forecast"]["total"]["forecast_usd"]
    # and the second run sets the first one's forecast beside what it reads now
    assert first["past_forecasts"] == []
    assert [(p["last_day"], p["forecast_usd"]) for p in second["past_forecasts"]] == [
        ("2026-08-18", first["forecast"]["total"]["forecast_usd"])
    ]
    # --full opens every current file again (here the garbled ones: refused with one line)
    code, _, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now, "--full")
    assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_full_reads_every_file_again_and_gives_the_same_figures(tmp_path: Path) -> None:
    aws, gcp = daily_bill.build(tmp_path / "daily", SHORT)
    db = tmp_path / "history.db"
    now = f"{SHORT + timedelta(days=1)}T06:00:00Z"
    code, first, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0 and first, err
    files = first["incremental"]["files_read"]
    assert files > 10
    code, again, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now, "--full")
    assert code == 0 and again, err
    assert again["incremental"]["files_read"] == files and again["incremental"]["full"]
    code, cached, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0 and cached, err
    assert (cached["incremental"]["files_read"], cached["incremental"]["files_reused"]) == (
        0,
        files,
    )
    same_figures(first, again)
    same_figures(first, cached)


@pytest.mark.parametrize("kind", ["another program's SQLite", "text"])
def test_a_foreign_history_file_is_refused_and_left_as_it_was(tmp_path: Path, kind: str) -> None:
    aws, gcp = daily_bill.build(tmp_path / "daily", date(2026, 7, 20))
    db = tmp_path / "other.db"
    if kind == "text":
        db.write_text("not a database\n" * 20, encoding="utf-8")
    else:
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
        conn.close()
    before = db.read_bytes()
    code, _, err = billing(
        str(aws), str(gcp), "--history", str(db), "--now", "2026-07-21T00:00:00Z"
    )
    assert code == 2 and "not a gpu-audit history database" in err, err
    assert db.read_bytes() == before


def test_full_without_a_history_is_one_line(tmp_path: Path) -> None:
    aws, gcp = daily_bill.build(tmp_path / "daily", date(2026, 7, 10))
    code, _, err = billing(str(aws), str(gcp), "--full")
    assert code == 2 and err.strip().splitlines() == [
        "gpu-audit: error: --full re-reads the files a --history keeps: give --history DB"
    ]


def test_a_kept_day_group_reads_back_as_it_was_in_every_column(tmp_path: Path) -> None:
    """Every column of a file's daily groups (issue 44's figures too: month, invoice,
    commitment, list cost, per-row checks) survives the history's Parquet bytes and the DuckDB
    copy beside it exactly: ten decimal places at the 10^15 bound, microseconds in UTC, nulls,
    any text."""
    from gpu_audit.billing import daybook, daycache, duck
    from gpu_audit.billing.incremental import FRESH, _parquet
    from gpu_audit.billing.query import literal

    keys = ("team", "workload")
    conn = duck.connect()
    daybook.create(conn, keys, FRESH)
    daybook.create(conn, keys)
    types = dict(
        conn.execute(f"SELECT column_name, column_type FROM (DESCRIBE {FRESH})").fetchall()
    )
    values = []
    for number, (name, kind) in enumerate(types.items(), start=1):
        if kind.startswith("DECIMAL"):
            values.append(f"{literal(f'-99999999999999{number % 10}.0123456789')}::{kind}")
        elif kind == "TIMESTAMP WITH TIME ZONE":
            values.append(f"TIMESTAMPTZ '2026-08-{number % 28 + 1:02d} 03:04:05.123456+00'")
        elif kind == "DATE":
            values.append("DATE '2026-08-03'")
        elif kind == "BOOLEAN":
            values.append("true")
        elif kind in ("INTEGER", "BIGINT"):
            values.append(str(2**31 - number if kind == "INTEGER" else 2**62 + number))
        else:
            values.append(literal(f"{name}-{number} \"é' ∑\t"))
    conn.execute(f"INSERT INTO {FRESH} VALUES ({', '.join(values)})")
    conn.execute(
        f"INSERT INTO {FRESH} (cloud, currency, in_period, kind) "
        "VALUES ('gcp', 'USD', false, 'other')"
    )
    written = conn.execute(f"SELECT * FROM {FRESH} ORDER BY cloud").fetchall()
    blob = _parquet(conn, str(tmp_path / "fresh.parquet"))
    (tmp_path / "kept.parquet").write_bytes(blob)
    # the history's Parquet, copied into the DuckDB file beside it, read back by a run
    daycache.attach(conn, str(tmp_path / "history.db"))
    daycache.present(conn, "k", keys)
    daybook.create(conn, keys, daycache.STAGE, path=True)
    daycache.restore(conn, "/bill/f.parquet", str(tmp_path / "kept.parquet"))
    daycache.store(conn, "k", {"/bill/f.parquet": "d"}, [])
    daycache.days(conn, "k", ["/bill/f.parquet"])
    rows = f"SELECT * EXCLUDE (rid) FROM {daybook.TABLE} ORDER BY cloud"  # as the queries read them
    assert conn.execute(rows).fetchall() == written
    full, bare = written  # "cloud-1 …" sorts before "gcp"
    assert all(v is not None for v in full) and bare[4:] == (None,) * (len(types) - 4)


def test_the_kept_rows_are_read_where_they_are_beside_the_runs_own(tmp_path: Path) -> None:
    """The queries read the current files' kept rows in the copy beside the history (never
    copied into the run) and this run's own rows (a remote file's) together, each row with an
    id of its own; a kept file that is no longer current is not read."""
    from gpu_audit.billing import daybook, daycache, duck

    keys = ("team",)
    conn = duck.connect()
    daycache.attach(conn, str(tmp_path / "history.db"))
    daycache.present(conn, "k", keys)
    daybook.create(conn, keys)  # this run's own rows: one remote file's
    daybook.create(conn, keys, daycache.STAGE, path=True)
    row = "('gcp', 'USD', true, 'gpu', 1)"
    conn.execute(
        f"INSERT INTO {daybook.ROWS} (cloud, currency, in_period, kind, rows) VALUES {row}"
    )
    for path, count in (("/bill/a.parquet", 3), ("/bill/b.parquet", 2), ("/bill/gone.parquet", 4)):
        conn.execute(
            f"INSERT INTO {daycache.STAGE} (path, cloud, currency, in_period, kind, effective, "
            f"rows) SELECT ?, 'aws', 'USD', true, 'gpu', i, 1 FROM range({count}) t(i)",
            [path],
        )
    daycache.store(conn, "k", {"/bill/a.parquet": "1", "/bill/b.parquet": "2"}, [])  # all 9 kept
    daycache.days(conn, "k", ["/bill/a.parquet", "/bill/b.parquet"])
    counts = f"SELECT count(*), count(DISTINCT rid), sum(effective) FROM {daybook.TABLE}"
    assert conn.execute(counts).fetchone() == (6, 6, Decimal(4))  # 3 + 2 kept, 1 own
    assert conn.execute(f"SELECT count(*) FROM {daybook.ROWS}").fetchone() == (1,)
    groups = daybook.collapse(conn, keys)
    assert sorted((g.cloud, g.rows, g.effective) for g in groups) == [
        ("aws", 5, Decimal(4)),
        ("gcp", 1, Decimal(0)),
    ]
    listed = conn.execute("SELECT len(day_rows) FROM grouped ORDER BY gid").fetchall()
    assert sorted(n for (n,) in listed) == [1, 5]


def test_a_history_kept_by_an_older_version_is_read_again_not_misread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Aggregates kept in an older form (version 2: zlib JSON lists) are under another query
    key: the run reads every file again, keeps them anew and gives the full read's figures."""
    from gpu_audit.billing import incremental
    from gpu_audit.history.billing_cache import pack

    aws, gcp = daily_bill.build(tmp_path / "daily", SHORT)
    db = tmp_path / "history.db"
    now = f"{SHORT + timedelta(days=1)}T06:00:00Z"
    monkeypatch.setattr(incremental, "QUERY_VERSION", 2)
    code, first, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0 and first, err
    files = first["incremental"]["files_read"]
    assert files > 10
    monkeypatch.undo()
    conn = sqlite3.connect(db)
    with conn:  # what version 2 kept: JSON lists, no Parquet
        conn.execute("UPDATE billing_files SET aggregates = ?", (pack([["gcp", "USD"]]),))
    old_key = {row[0] for row in conn.execute("SELECT query_key FROM billing_files")}
    code, again, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0 and again, err
    assert (again["incremental"]["files_read"], again["incremental"]["files_reused"]) == (files, 0)
    code, full, err = billing(str(aws), str(gcp), "--now", now)
    assert code == 0 and full, err
    same_figures(again, full)
    keys = {row[0] for row in conn.execute("SELECT query_key FROM billing_files")}
    assert len(keys) == 2 and old_key < keys
    code, cached, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0 and cached and cached["incremental"]["files_reused"] == files, err
    same_figures(cached, full)


def test_the_copy_beside_the_history_lost_or_damaged(tmp_path: Path) -> None:
    """The DuckDB copy of the daily groups (HISTORY.days) is only a copy: lost, the next run
    takes the groups from the history again (no export file opened) with the same figures;
    damaged, one line says which file and what to do, and the history is left as it was."""
    aws, gcp = daily_bill.build(tmp_path / "daily", date(2026, 7, 20))
    db = tmp_path / "history.db"
    now = "2026-07-21T06:00:00Z"
    code, first, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0 and first, err
    copy = Path(f"{db}.days")
    assert copy.is_file()
    copy.unlink()
    for path in (*aws.rglob("*.parquet"), *gcp.rglob("*.parquet")):
        garble_keeping_size_and_time(path)  # opened, any of them would fail the run
    code, again, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    assert code == 0 and again, err
    assert again["incremental"]["files_read"] == 0
    assert again["incremental"]["files_reused"] == first["incremental"]["files_read"]
    same_figures(first, again)
    copy.write_bytes(b"\x00garbled" * 512)
    before = db.read_bytes()
    code, _, err = billing(str(aws), str(gcp), "--history", str(db), "--now", now)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and str(copy) in lines[0], err
    assert "remove it" in lines[0] and "Traceback" not in err
    assert db.read_bytes() == before
