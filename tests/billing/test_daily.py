"""The daily series sums back to the plain query's groups exactly, on every cloud's layout of
the synthetic quarter (monthly, weekly and hourly rows, corrections, superseded files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpu_audit.billing import duck
from gpu_audit.billing.daily import collapse, run_daily
from gpu_audit.billing.period import parse_period
from gpu_audit.billing.report import DEFAULT_TAGS, gpu_types, query_keys
from tests.billing.quarter import Quarter, build_quarter


@pytest.fixture(scope="module")
def quarter(tmp_path_factory: pytest.TempPathFactory) -> Quarter:
    return build_quarter(tmp_path_factory.mktemp("bill"))


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_the_days_sum_back_to_the_period_groups_exactly(quarter: Quarter, cloud: str) -> None:
    period = parse_period("2026-Q3")
    keys, types = query_keys(DEFAULT_TAGS), gpu_types()
    _, plain = duck.run([str(quarter.root / cloud)], period, keys, types)
    _, days = run_daily([str(quarter.root / cloud)], period, keys, types)
    assert len(days) > len(plain)  # GPU groups are split by day
    assert all(d.day is None for d in days if not d.group.in_period or d.group.kind == "other")
    assert sorted(map(repr, collapse(days))) == sorted(map(repr, plain))


def test_a_history_run_on_every_layout_matches_the_plain_read(
    quarter: Quarter, tmp_path: Path
) -> None:
    """AWS manifests and a superseded file, Azure month-to-date runs (gzip CSV and Parquet),
    GCP Parquet: the kept aggregates, read back, give the plain run's report to the cent."""
    import json

    from click.testing import CliRunner

    from gpu_audit.cli.main import main

    folders = [str(quarter.root / cloud) for cloud in ("aws", "azure", "gcp")]
    args = ["billing", *folders, "--period", "2026-Q3", "--format", "json",
            "--now", "2026-10-05T00:00:00Z"]  # fmt: skip
    db = str(tmp_path / "history.db")
    plain = CliRunner().invoke(main, args)
    cold = CliRunner().invoke(main, [*args, "--history", db])
    warm = CliRunner().invoke(main, [*args, "--history", db])
    assert plain.exit_code == cold.exit_code == warm.exit_code == 0, cold.stderr + warm.stderr
    bodies = [json.loads(r.stdout) for r in (plain, cold, warm)]
    for key in ("totals", "breakdowns", "unused", "other_currencies", "outside_period",
                "findings", "anomalies", "waste_usd"):  # fmt: skip
        assert bodies[0][key] == bodies[1][key] == bodies[2][key], key
    read = sum(s["files"] for s in bodies[0]["sources"])
    assert bodies[1]["incremental"]["files_read"] == read
    assert (bodies[2]["incremental"]["files_read"], bodies[2]["incremental"]["files_reused"]) == (
        0, read,
    )  # fmt: skip


def _whole(quarter: Quarter) -> tuple[list[Any], list[Any]]:
    """The daily aggregate fetched and decoded whole (every key on every day), as it was read
    before billing/split.py; and the split read of the same files."""
    from gpu_audit.billing import query
    from gpu_audit.billing.daily import DayGroup, read_split
    from gpu_audit.billing.exports import discover

    period = parse_period("2026-Q3")
    keys, types = query_keys(DEFAULT_TAGS), gpu_types()
    paths = [str(quarter.root / cloud) for cloud in ("aws", "azure", "gcp")]
    conn = duck.connect()
    exports = [discover(path, duck.file_system(conn), period) for path in paths]
    found = duck.sources(conn, exports)
    relations = [query.summed_first(s, period, keys, by_day=True) for s in found]
    sql = query.aggregate(relations, period, keys, types, by_day=True)
    rows = duck.fetch(conn, sql, exports, found, keys)
    whole = [DayGroup(row[-1], duck.group(row[:-1], keys)) for row in rows]
    return whole, read_split(conn, exports, found, period, keys, types, paths)[1]


def test_the_split_read_gives_the_days_decoded_whole(quarter: Quarter) -> None:
    """billing/split.py fetches each day as its sums and its period group's key hash: the day
    groups are those the daily aggregate gives decoded whole, field by field (exact decimals
    with their exponent, zoned times), on every cloud's layout."""
    whole, split = _whole(quarter)
    assert sorted(map(repr, split)) == sorted(map(repr, whole))
    assert len({d.day for d in split}) > 30 and any(d.day is None for d in split)


def test_keys_hashing_alike_are_read_whole(
    quarter: Quarter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two period groups whose keys' hashes collide: the days are fetched whole instead."""
    from gpu_audit.billing import split

    monkeypatch.setattr(split, "key_hash", lambda keys: "42")  # every group collides
    called: list[int] = []
    whole_read = split.whole
    monkeypatch.setattr(split, "whole", lambda *a: called.append(1) or whole_read(*a))
    whole, got = _whole(quarter)
    assert called and sorted(map(repr, got)) == sorted(map(repr, whole))
