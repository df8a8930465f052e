"""The bill by day: the one query grouped also by the UTC day of each charge's start.

Forecasts and anomalies (billing/forecast.py, billing/anomaly.py) read this daily series; the
period's groups are the daily groups summed back (`collapse`), exactly, so one read of the
exports gives both and the period's figures are those of the plain query to the cent
(tests/billing/test_daily.py compares them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from operator import attrgetter
from typing import Any

from gpu_audit.billing import duck, query
from gpu_audit.billing.exports import ExportFiles, discover
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.query import GROUP_COLUMNS, SUM_COLUMNS, aggregate
from gpu_audit.core.frozen import record
from gpu_audit.errors import InputError


@record
class DayGroup:
    """One group of the query on one UTC day (`day` None: rows outside the period or not a
    GPU, which keep no day)."""

    day: date | None
    group: BilledGroup


def run_daily(
    paths: Sequence[str],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
) -> tuple[list[ExportFiles], list[DayGroup]]:
    """`duck.run`, grouped by day too (summed first, as there)."""
    exports, _, days = run_daily_groups(paths, period, tag_keys, gpu_types)
    return exports, days


def run_daily_groups(
    paths: Sequence[str],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
) -> tuple[list[ExportFiles], list[BilledGroup], list[DayGroup]]:
    """`run_daily` with the period's groups (`collapse` of the days, summed in DuckDB)."""
    conn = duck.connect()
    try:
        fs = duck.file_system(conn)
        exports = [discover(path, fs, period) for path in paths]
        current = [e for e in exports if e.files]
        found = duck.sources(conn, current) if current else []
        if not found:  # every manifest is of an earlier month
            raise InputError(duck.no_export(paths, period))
        groups, days = read_split(conn, current, found, period, tag_keys, gpu_types, paths)
        return exports, groups, days
    finally:
        conn.close()


def read_files(
    conn: Any,
    exports: Sequence[ExportFiles],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
    paths: Sequence[str],
    require_rows: bool = True,
) -> list[DayGroup]:
    """The daily groups of the given exports' files (an export with no files is skipped)."""
    exports = [e for e in exports if e.files]
    found = duck.sources(conn, exports) if exports else []
    if not found:  # every manifest is of an earlier month, or no file is new
        if require_rows:
            raise InputError(duck.no_export(paths, period))
        return []
    return read_split(conn, exports, found, period, tag_keys, gpu_types, paths, require_rows)[1]


def read_split(
    conn: Any,
    exports: Sequence[ExportFiles],
    found: Sequence[query.Source],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
    paths: Sequence[str],
    require_rows: bool = True,
) -> tuple[list[BilledGroup], list[DayGroup]]:
    """The period's groups (the days summed, in DuckDB) and the day groups (billing/split.py)."""
    from gpu_audit.billing import split

    relations = [query.summed_first(s, period, tag_keys, by_day=True) for s in found]
    sql = aggregate(relations, period, tag_keys, gpu_types, by_day=True)
    groups, days = split.read(conn, sql, exports, found, tag_keys, DayGroup)
    if require_rows and not any(g.in_period for g in groups):
        raise InputError(duck._no_rows(paths, period, conn, found))
    return groups, days


_COLUMNS = attrgetter(*GROUP_COLUMNS)
_COARSE = timedelta(hours=25)


def _key(group: BilledGroup) -> tuple[object, ...]:
    return (*_COLUMNS(group), tuple(sorted(group.tags.items())))


# a group's sums (every one of the query's but the first and last charge): days add up exactly
SUMMED = tuple(name for name in SUM_COLUMNS if name not in ("first_charge", "last_charge"))


def collapse(days: Iterable[DayGroup]) -> list[BilledGroup]:
    """The period's groups: each group's days summed (exact Decimals and row counts; first and
    last charge the earliest and latest)."""
    merged: dict[tuple[object, ...], list[Any]] = {}
    for item in days:
        g = item.group
        key = _key(g)
        acc = merged.get(key)
        if acc is None:
            merged[key] = [g, [getattr(g, name) for name in SUMMED], g.first_charge,
                           g.last_charge, 1]  # fmt: skip
            continue
        sums = acc[1]
        for i, name in enumerate(SUMMED):
            sums[i] += getattr(g, name)
        if g.first_charge is not None and (acc[2] is None or g.first_charge < acc[2]):
            acc[2] = g.first_charge
        if g.last_charge is not None and (acc[3] is None or g.last_charge > acc[3]):
            acc[3] = g.last_charge
        acc[4] += 1
    out = []
    for g, sums, first, last, count in merged.values():
        if count == 1:
            out.append(g)
            continue
        out.append(
            dataclasses.replace(
                g, **dict(zip(SUMMED, sums, strict=True)), first_charge=first, last_charge=last
            )
        )
    return out


def gpu_days(days: Iterable[DayGroup], with_unused: bool = False) -> list[DayGroup]:
    """USD GPU spend in the period with its day (GCP GPU machines' cores and memory included;
    reserved capacity left unused where `with_unused`)."""
    kinds = ("gpu", "gpu-machine", "unused") if with_unused else ("gpu", "gpu-machine")
    return [
        d
        for d in days
        if d.day is not None
        and d.group.in_period
        and d.group.currency == "USD"
        and d.group.kind in kinds
    ]


def coarse(group: BilledGroup) -> bool:
    """Rows charged over more than a day (a monthly or weekly export granularity): not a
    daily series."""
    if group.first_charge is None or group.last_charge is None:
        return False
    return group.last_charge - group.first_charge > _COARSE


def last_read(rows: Sequence[DayGroup], now: datetime) -> date:
    """The last day the rows cover, never after `now`'s (a month-to-date row says the month)."""
    ends = [
        (g.last_charge - timedelta(microseconds=1)).date()
        for g in (d.group for d in rows)
        if g.last_charge is not None
    ]
    starts = [d.day for d in rows if d.day is not None]
    latest = max([*ends, *starts])
    return max(min(latest, (now - timedelta(microseconds=1)).date()), max(starts))


def per_day(item: DayGroup, last: date) -> list[tuple[date, Decimal]]:
    """A group's effective cost by day: its own day, or, for a coarse group, spread evenly over
    the days it covers up to `last` (the last day read)."""
    assert item.day is not None
    g = item.group
    if not coarse(g) or g.last_charge is None:
        return [(item.day, g.effective)]
    stop = min((g.last_charge - timedelta(microseconds=1)).date(), last)
    count = max((stop - item.day).days + 1, 1)
    share = g.effective / count
    rest = g.effective - share * (count - 1)  # the parts add up to the group exactly
    return [(item.day + timedelta(days=i), share if i < count - 1 else rest) for i in range(count)]
