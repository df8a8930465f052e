"""The daily aggregate read in two parts: the period's groups whole, the days as their sums only.

A daily read (billing/daily.py) has a group per resource and day: 1.6 million at ten million
rows, each with twenty-odd keys that are the same on every day of its period group. Fetched and
decoded whole, they cost four times the query (benchmarks/README.md). Here the daily aggregate
is kept in DuckDB (a temporary table), the period's groups are summed from it there (exactly, as
`collapse` sums them), and each day comes back as its period group's key hash, its day and its
sums; a day's `BilledGroup` is its period group with the day's sums. The day groups are those of
`aggregate(..., by_day=True)` decoded whole; where two period groups' hashes collide, they are
read whole (`whole`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from gpu_audit.billing import duck
from gpu_audit.billing.exports import ExportFiles
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.query import GROUP_COLUMNS, Source, quote

TABLE = "gpu_audit_days"
# a day group (billing/daily.py's `DayGroup`, passed in: that module reads through this one)
D = TypeVar("D")
# the sums of `aggregate` by the names it gives them, in `query.SUM_COLUMNS`' order
_SUMS = (
    ("effective", "SUM"), ("billed", "SUM"), ("quantity", "SUM"), ("gpu_hours", "SUM"),
    ("corrections", "SUM"), ("row_count", "SUM"), ("first_charge", "MIN"),
    ("last_charge", "MAX"), ("list", "SUM"), ("over_list_rows", "SUM"),
    ("negative_rows", "SUM"),
)  # fmt: skip
_ZERO = Decimal(0)


def read(
    conn: Any,
    sql: str,
    exports: Sequence[ExportFiles],
    found: Sequence[Source],
    tag_keys: Sequence[str],
    day_group: Callable[[date | None, BilledGroup], D],
) -> tuple[list[BilledGroup], list[D]]:
    """The period's groups and the day groups of `sql` (`aggregate(..., by_day=True)`)."""
    keys = [quote(name) for name in (*GROUP_COLUMNS, *(f"tag:{key}" for key in tag_keys))]
    hashed = key_hash(keys)
    duck.fetch(conn, f"CREATE OR REPLACE TEMP TABLE {TABLE} AS {sql}", exports, found, ())
    try:
        sums = ", ".join(f"{how}({name}) AS {name}" for name, how in _SUMS)
        period = duck.fetch(
            conn,
            f"SELECT {', '.join(keys)}, {sums}, {hashed} FROM {TABLE} GROUP BY ALL",
            exports, found, tag_keys,
        )  # fmt: skip
        groups = [duck.group(row[:-1], tag_keys) for row in period]
        by_hash = {row[-1]: g for row, g in zip(period, groups, strict=True)}
        if len(by_hash) < len(groups):  # two groups' keys hash alike: read the days whole
            return groups, whole(conn, exports, found, tag_keys, day_group)
        _in_bounds(conn, found)
        day_rows = duck.fetch(
            conn,
            f"SELECT {', '.join(_wire(name) for name, _ in _SUMS)}, charge_day, {hashed} "
            f"FROM {TABLE} WHERE charge_day IS NOT NULL",
            exports, found, (),
        )  # fmt: skip
    finally:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    with_days = {row[-1] for row in day_rows}
    days = [day_group(None, g) for h, g in by_hash.items() if h not in with_days]
    parts = {h: _parts(by_hash[h]) for h in with_days}
    zone = next((g.first_charge.tzinfo for g in groups if g.first_charge), None)
    times = _Times(zone)
    days += [day_group(row[-2], _day(parts[row[-1]], row, times)) for row in day_rows]
    return groups, days


def key_hash(keys: Sequence[str]) -> str:
    """The SQL of a group's keys' hash (DuckDB's 64-bit `hash` of them all)."""
    return f"hash({', '.join(keys)})"


def _wire(name: str) -> str:
    """A day's sum as it is fetched: amounts as text, times as epoch microseconds (DuckDB's
    own conversion to Decimal and to zoned datetimes costs 1-2 microseconds a cell; `Decimal`
    of the text is the same value with the same exponent)."""
    if name in ("first_charge", "last_charge"):
        return f"epoch_us({name})"
    if name in ("row_count", "over_list_rows", "negative_rows"):
        return name
    return f"CAST({name} AS VARCHAR)"


class _Times(dict[int, datetime]):
    """Epoch microseconds → the zoned datetime DuckDB returns, each made once (hourly rows
    have a few thousand distinct times)."""

    def __init__(self, zone: Any) -> None:
        super().__init__()
        self.epoch = datetime(1970, 1, 1, tzinfo=UTC).astimezone(zone) if zone else None

    def __missing__(self, micros: int) -> datetime:
        assert self.epoch is not None  # a day has a charge, so some period group has a time
        moment = self[micros] = self.epoch + timedelta(microseconds=micros)
        return moment


_FIELDS = tuple(f.name for f in dataclasses.fields(BilledGroup))
_HEAD, _MID = _FIELDS.index("effective"), _FIELDS.index("month")  # keys, sums, keys, sums
assert _FIELDS[_MID - 1] == "last_charge" and _FIELDS[_MID + 5] == "list"
_BUILD: Any = BilledGroup  # called positionally, in the field order asserted above


def _parts(base: BilledGroup) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A period group's keys, in the order of `BilledGroup`'s fields: before its sums, between."""
    values = tuple(getattr(base, name) for name in _FIELDS)
    return values[:_HEAD], values[_MID : _MID + 5]


def _day(
    parts: tuple[tuple[Any, ...], tuple[Any, ...]], row: Sequence[Any], times: _Times
) -> BilledGroup:
    """A day's group: its period group's keys, the day's sums (as `duck.group` reads them),
    built positionally (`dataclasses.replace` costs five times as much per day)."""
    effective, billed, quantity, gpu_hours, corrections, count, first, last, listed = row[:9]
    head, mid = parts
    group: BilledGroup = _BUILD(
        *head,
        _ZERO if effective is None else Decimal(effective),
        _ZERO if billed is None else Decimal(billed),
        _ZERO if quantity is None else Decimal(quantity),
        _ZERO if gpu_hours is None else Decimal(gpu_hours),
        _ZERO if corrections is None else Decimal(corrections),
        int(count),
        None if first is None else times[first],
        None if last is None else times[last],
        *mid,
        _ZERO if listed is None else Decimal(listed),
        int(row[9] or 0),
        int(row[10] or 0),
    )
    return group


def _in_bounds(conn: Any, found: Sequence[Source]) -> None:
    """A day's sums within a report's bounds (`duck.in_bounds`, checked on every day group in
    DuckDB; the times are: a day's first and last charge are its period group's extremes)."""
    from gpu_audit.errors import InputError

    names = [name for name, how in _SUMS if how == "SUM" and name != "row_count"]
    test = " OR ".join(f"abs({name}) >= {duck.BOUND}" for name in names)
    if conn.execute(f"SELECT 1 FROM {TABLE} WHERE {test} LIMIT 1").fetchone():
        raise InputError(duck.locate_bad_value(conn, found, None))


def whole(
    conn: Any,
    exports: Sequence[ExportFiles],
    found: Sequence[Source],
    tag_keys: Sequence[str],
    day_group: Callable[[date | None, BilledGroup], D],
) -> list[D]:
    """The day groups fetched and decoded whole (every key on every day)."""
    rows = duck.fetch(conn, f"SELECT * FROM {TABLE}", exports, found, tag_keys)
    return [day_group(row[-1], duck.group(row[:-1], tag_keys)) for row in rows]
