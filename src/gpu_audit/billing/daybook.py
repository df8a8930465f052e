"""The daily groups kept in a DuckDB table (`days`), not as a Python object per group and day:
the period's groups are summed back there, and the forecast's days and the anomalies' series
are worked out there, so a run's Python work grows with the resources, not resources × days.

The table's rows are the daily query's (billing/daily.py): its group columns, the tag values
(`t0`, `t1`, …), its sums and `day`. A history keeps each file's rows (billing/incremental.py,
billing/daycache.py), read back here in one query.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from gpu_audit.billing import duck, query
from gpu_audit.billing.daily import DayGroup
from gpu_audit.billing.exports import ExportFiles
from gpu_audit.billing.forecast import UNTAGGED
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.query import GROUP_COLUMNS, MONEY, SUM_COLUMNS, quote
from gpu_audit.core.frozen import record
from gpu_audit.errors import InputError

TABLE = "days"  # what the queries read: a view of the rows, each with its id (`rid`)
ROWS = "own_days"  # this run's own rows (a plain read's; a history's remote files')
_COUNTS = ("rows", "over_list_rows", "negative_rows")
_TYPES = {
    **{name: "VARCHAR" for name in GROUP_COLUMNS},
    "in_period": "BOOLEAN",
    "commitment_unused": "BOOLEAN",
    "gpus": "INTEGER",
    **{name: MONEY for name in SUM_COLUMNS},
    **{name: "BIGINT" for name in _COUNTS},
    "first_charge": "TIMESTAMPTZ",
    "last_charge": "TIMESTAMPTZ",
}
# rows charged over more than a day (a monthly or weekly granularity): `daily.coarse`
# (in microseconds: a TIMESTAMPTZ difference compared as an INTERVAL cost ~12 ms more a query on
# a year's ~80k day rows)
_COARSE = "COALESCE(epoch_us(last_charge) - epoch_us(first_charge) > 90000000000, false)"  # 25 h
_GPU = "day IS NOT NULL AND in_period AND currency = 'USD'"


@record
class Daily:
    """What the forecast and the anomalies read of the daily groups (billing/anomaly.py)."""

    forecast_days: tuple[DayGroup, ...]  # GPU spend per cloud, team and day (coarse rows apart)
    teams: dict[str, dict[date, Decimal]]  # each team's daily GPU spend (unused included)
    resources: dict[tuple[str, str], dict[date, Decimal]]  # only the series that may rise
    team_spend: dict[str, Decimal]  # each team's GPU spend, coarse rows and unused included
    last: date | None  # the last day of the series


def columns(tag_keys: Sequence[str]) -> list[str]:
    """The table's columns in order: the group key, one `tN` per tag key, the sums, the day."""
    return [*GROUP_COLUMNS, *(f"t{i}" for i in range(len(tag_keys))), *SUM_COLUMNS, "day"]


def create(
    conn: Any, tag_keys: Sequence[str], name: str = ROWS, path: bool = False, replace: bool = True
) -> None:
    """A table of daily groups (`path`: each row's export file first; `replace`: a temporary
    table made anew, else a kept one made where missing). This run's own table (`ROWS`) is
    also what the queries read (`TABLE`) until `expose` adds a history's kept rows."""
    types = {**_TYPES, "day": "DATE"}
    names = ["path", *columns(tag_keys)] if path else columns(tag_keys)
    listed = ", ".join(f"{quote(c)} {types.get(c, 'VARCHAR')}" for c in names)
    made = "CREATE OR REPLACE TEMP TABLE" if replace else "CREATE TABLE IF NOT EXISTS"
    conn.execute(f"{made} {name} ({listed})")
    if name == ROWS:
        expose(conn)


def expose(conn: Any, kept: str | None = None, files: str | None = None) -> None:
    """The view the queries read (`TABLE`): this run's rows and, with `kept` (a history's table
    of the files' rows, `path` first) and `files` (a table of the current files' `path`s),
    the current files' rows read where they are kept, never copied (copying a year's ~80k
    rows cost a daily run ~0.1 s; a scan of them ~3 ms). Each row has an id, `rid`, unique in
    the run (the kept table's and this run's rows numbered apart), that the series' joins use.
    """
    own = f"SELECT rowid AS rid, * FROM {ROWS}"
    if kept is not None and files is not None:
        own = (
            f"SELECT rowid AS rid, * EXCLUDE (path) FROM {kept} "
            f"WHERE path IN (SELECT path FROM {files}) "
            f"UNION ALL BY NAME SELECT -1 - rowid AS rid, * FROM {ROWS}"
        )
    conn.execute(f"CREATE OR REPLACE TEMP VIEW {TABLE} AS {own}")


def insert(
    conn: Any,
    sql: str,
    exports: Sequence[ExportFiles],
    found: Sequence[duck.Source],
    name: str = ROWS,
) -> None:
    """The daily query's rows into the table: a cell DuckDB cannot read or a sum out of a
    report's bounds is one located line (as `duck.fetch`)."""
    import duckdb  # the duckdb extra: off check's start-up

    try:
        conn.execute(f"INSERT INTO {name} SELECT * FROM ({sql})")
    except duckdb.Error as exc:
        raise InputError(duck.failure(conn, exc, exports, found)) from None
    amounts = [n for n in SUM_COLUMNS if n not in ("first_charge", "last_charge", "rows")]
    bad = [f"abs({quote(n)}) >= {duck.BOUND}" for n in amounts]
    bad += [
        f"(NOT isfinite({t}) OR year({t}) NOT BETWEEN 1 AND 9999)"
        for t in ("first_charge", "last_charge")
    ]
    row = conn.execute(f"SELECT 1 FROM {name} WHERE {' OR '.join(bad)} LIMIT 1").fetchone()
    if row:
        raise InputError(duck.locate_bad_value(conn, found, None))


def any_in_period(conn: Any, name: str = TABLE) -> bool:
    """Whether any row of the table falls in the period (False for an empty table)."""
    row = conn.execute(f"SELECT bool_or(in_period) FROM {name}").fetchone()
    return bool(row and row[0])


def collapse(conn: Any, tag_keys: Sequence[str]) -> list[BilledGroup]:
    """The period's groups: each group's days summed, exactly (DECIMAL sums), first and last
    charge the earliest and latest (as `daily.collapse`)."""
    keys = ", ".join(quote(c) for c in columns(tag_keys)[: len(GROUP_COLUMNS) + len(tag_keys)])
    sums = ", ".join(
        f"{'min' if n == 'first_charge' else 'max' if n == 'last_charge' else 'sum'}({quote(n)})"
        for n in SUM_COLUMNS
    )
    conn.execute(
        f"CREATE OR REPLACE TEMP TABLE grouped AS SELECT row_number() OVER () AS gid, * FROM "
        f"(SELECT {keys}, {sums}, list(rid) AS day_rows FROM {TABLE} GROUP BY ALL)"
    )
    rows = conn.execute("SELECT * EXCLUDE (gid, day_rows) FROM grouped ORDER BY gid").fetchall()
    return [duck.group(row, tag_keys) for row in rows]


def daily(
    conn: Any,
    groups: Sequence[BilledGroup],
    tag_keys: Sequence[str],
    team_key: str | None,
    may_rise: Callable[[Any, str, date], list[int]],
    resource_key: Callable[[BilledGroup], tuple[str, str]],
) -> Daily:
    """The forecast's days and the anomalies' series, after `collapse` (its `grouped` table;
    `groups` are its rows in order). `may_rise`: the series (of a table `series (sid, day, v)`)
    that may hold a rise, found by the engine; only those come back to Python."""
    team = f"NULLIF(t{tag_keys.index(team_key)}, '')" if team_key in tag_keys else "NULL"
    rising = f"{_GPU} AND kind IN ('gpu', 'gpu-machine', 'unused')"
    # One pass over the days (five queries took a year's ~80k rows ~0.1 s): the GPU spend per
    # cloud, team and day, unused capacity and coarse rows apart (a coarse row by its charge
    # times, as the forecast reads it); each figure below is a sum of these exact sums.
    rows = conn.execute(
        f"SELECT cloud, {team}, day, kind = 'unused', {_COARSE}, "
        f"CASE WHEN {_COARSE} THEN first_charge END, CASE WHEN {_COARSE} THEN last_charge END, "
        f"sum(effective), max(last_charge) FROM {TABLE} WHERE {rising} GROUP BY ALL"
    ).fetchall()
    team_name = team_key or ""
    forecast_days: list[DayGroup] = []
    spend: dict[str, Decimal] = defaultdict(Decimal)
    teams: dict[str, dict[date, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    last: date | None = None
    for cloud, tag, day, unused, coarse, first, end, amount, latest in rows:
        spend[tag or UNTAGGED] += amount or Decimal(0)
        if not coarse:
            teams[tag or UNTAGGED][day] += amount or Decimal(0)
            last = day if last is None or day > last else last
        if not unused:  # the forecast's days: GPU usage, a coarse row by its charge period
            charged = (first, end) if coarse else (latest, latest)
            forecast_days.append(DayGroup(day, _slim(cloud, team_name, tag, amount, *charged)))
    resources = _resources(conn, groups, tag_keys, rising, last, may_rise, resource_key)
    return Daily(tuple(forecast_days), teams, resources, spend, last)


def _resources(
    conn: Any,
    groups: Sequence[BilledGroup],
    tag_keys: Sequence[str],
    rising: str,
    last: date | None,
    may_rise: Callable[[Any, str, date], list[int]],
    resource_key: Callable[[BilledGroup], tuple[str, str]],
) -> dict[tuple[str, str], dict[date, Decimal]]:
    """Each resource's daily series, of the resources whose series may rise."""
    if last is None:
        return {}
    wanted = ("gpu", "gpu-machine", "unused")
    keys: dict[tuple[str, str], int] = {}
    gids: list[int] = []
    sids: list[int] = []
    for gid, g in enumerate(groups, start=1):
        if g.in_period and g.currency == "USD" and g.kind in wanted:
            gids.append(gid)
            sids.append(keys.setdefault(resource_key(g), len(keys)))
    if not gids:
        return {}
    conn.execute(
        "CREATE OR REPLACE TEMP TABLE sids AS SELECT unnest(?::BIGINT[]) AS gid, "
        "unnest(?::BIGINT[]) AS sid",
        [gids, sids],
    )
    conn.execute(
        "CREATE OR REPLACE TEMP TABLE series AS SELECT s.sid, d.day, sum(d.effective) AS v "
        f"FROM (SELECT rid AS r, day, effective FROM {TABLE} WHERE {rising} AND NOT "
        f"{_COARSE}) d JOIN (SELECT gid, unnest(day_rows) AS r FROM grouped) g ON d.r = g.r "
        "JOIN sids s ON s.gid = g.gid GROUP BY ALL"
    )
    chosen = may_rise(conn, "series", last)
    if not chosen:
        return {}
    back = {sid: key for key, sid in keys.items()}
    out: dict[tuple[str, str], dict[date, Decimal]] = defaultdict(dict)
    for sid, day, value in conn.execute(
        "SELECT sid, day, v FROM series WHERE sid IN (SELECT unnest(?::BIGINT[]))", [chosen]
    ).fetchall():
        out[back[sid]][day] = value if value is not None else Decimal(0)
    return dict(out)


def _slim(
    cloud: str,
    team_key: str,
    team: str | None,
    effective: Decimal | None,
    first: datetime | None,
    last: datetime | None,
) -> BilledGroup:
    """A day's GPU spend of one cloud and team, as the forecast reads a group."""
    return BilledGroup(
        cloud=cloud,
        currency="USD",
        in_period=True,
        kind="gpu",
        reason=None,
        account=None,
        region=None,
        instance_type=None,
        gpu_model=None,
        gpus=None,
        gcp_gpu=None,
        capacity=None,
        service=None,
        usage_kind=None,
        resource_id=None,
        reservation_id=None,
        tags={team_key: team} if team_key and team else {},
        effective=effective if effective is not None else Decimal(0),
        billed=Decimal(0),
        quantity=Decimal(0),
        gpu_hours=Decimal(0),
        corrections=Decimal(0),
        rows=0,
        first_charge=first,
        last_charge=last,
    )


def load(
    conn: Any,
    exports: Sequence[ExportFiles],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
    paths: Sequence[str],
    require_rows: bool = True,
    name: str = ROWS,
) -> None:
    """The daily groups of the given exports' files into the table (an export with no files
    is skipped), by the one query (`daily.read_files`'s, summed first)."""
    exports = [e for e in exports if e.files]
    found = duck.sources(conn, exports) if exports else []
    if not found:  # every manifest is of an earlier month, or no file is new
        if require_rows:
            raise InputError(duck.no_export(paths, period))
        return
    relations = [query.summed_first(s, period, tag_keys, by_day=True) for s in found]
    sql = query.aggregate(relations, period, tag_keys, gpu_types, by_day=True)
    insert(conn, sql, exports, found, name)
    if require_rows and not any_in_period(conn, name):
        raise InputError(duck._no_rows(paths, period, conn, found))
