"""The daily series sums back to the plain query's groups exactly, on every cloud's layout of
the synthetic quarter (monthly, weekly and hourly rows, corrections, superseded files)."""

from __future__ import annotations

from pathlib import Path

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
