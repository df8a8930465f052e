"""The daily series sums back to the plain query's groups exactly, on every cloud's layout of
the synthetic quarter (monthly, weekly and hourly rows, corrections, superseded files)."""

from __future__ import annotations

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
