"""Rises in a team's or a resource's daily GPU spend far outside its own recent history.

Method (docs/billing.md, "Anomalies"): each series is a team's (the `team` tag, or the first
`--tag`; untagged spend is a series of its own) or a billed resource's USD GPU spend per UTC day
(reserved capacity left unused included), from its first day with spend to the bill's last day
read, a day without rows counting $0. A day's baseline is the median of the same weekday in the
`WEEKS` weeks before it (days of the series only), so a steady weekday/weekend pattern is its own
baseline; its spread is 1.4826 × their median absolute deviation, at least a tenth of the
baseline and $1. With fewer than `MIN_WEEKS` such days there is no baseline: a series' first
days are never a rise. A day is above its baseline when it exceeds it by more than `SPREADS`
spreads; a rise starts there and goes on while each day stays above the baseline its weekday had
before the rise began (frozen, so a cluster left running never becomes its own baseline).
A series' rise is its largest by dollars above the baseline so far; one still going on at the
last day read is forecast to the period's end at the mean daily excess of its last 7 days.
Whether a rise is an anomaly is the policy's (rule `billed-spend-rise`: its percentage and
dollars), not this module's.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from statistics import median
from typing import Any

from gpu_audit.billing.daily import DayGroup, coarse, gpu_days
from gpu_audit.billing.daybook import Daily
from gpu_audit.billing.forecast import UNTAGGED, last_day
from gpu_audit.billing.judge import resource_key
from gpu_audit.billing.period import Period
from gpu_audit.billing.summary import cents
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Resource, SourceRef
from gpu_audit.core.sections import Billing

WEEKS = 4
MIN_WEEKS = 2
SPREADS = Decimal(3)
MAD_SCALE = Decimal("1.4826")
FLOOR_SHARE = Decimal("0.1")
FLOOR_USD = Decimal(1)
TAIL_DAYS = 7


@record
class Rise:
    """A run of days above a series' baseline."""

    series: str  # `team` or `resource`
    key: str  # the team (UNTAGGED) or the resource's `cloud:id`
    start: date
    end: date  # its last day above the baseline
    baseline: Decimal  # the daily baseline of its first day
    peak_pct: Decimal  # the largest day's excess, % of its baseline (at least the first day's, $1)
    above: Decimal  # dollars above the baseline so far
    forecast: Decimal  # dollars above the baseline by the period's end
    ongoing: bool  # still above at the last day read


def _stats(values: Sequence[Decimal]) -> tuple[Decimal, Decimal]:
    base = Decimal(median(values))
    mad = Decimal(median([abs(v - base) for v in values]))
    return base, max(MAD_SCALE * mad, FLOOR_SHARE * base, FLOOR_USD)


def _history(series: dict[date, Decimal], day: date, first: date) -> list[Decimal]:
    back = [day - timedelta(days=7 * k) for k in range(1, WEEKS + 1)]
    return [series.get(d, Decimal(0)) for d in back if d >= first]


def _before(series: dict[date, Decimal], day: date, start: date, first: date) -> list[Decimal]:
    """The same weekday's values in the `WEEKS` weeks before `start`."""
    back = day - timedelta(days=7 * (((day - start).days // 7) + 1))
    weeks = [back - timedelta(days=7 * k) for k in range(WEEKS)]
    return [series.get(d, Decimal(0)) for d in weeks if d >= first]


def rises(
    series: dict[date, Decimal], last: date, days_left: int, kind: str, key: str
) -> list[Rise]:
    """The rises of one series (day → spend) up to `last`."""
    if not series:
        return []
    first = min(series)
    found: list[Rise] = []
    start: date | None = None
    frozen: dict[int, tuple[Decimal, Decimal]] = {}
    excess: list[Decimal] = []
    peak = Decimal(0)
    base0 = Decimal(0)
    day = first
    while day <= last:
        value = series.get(day, Decimal(0))
        if start is not None:
            weekday = day.weekday()
            if weekday not in frozen:  # the weekday's baseline before the rise began
                hist = _before(series, day, start, first)
                frozen[weekday] = (
                    _stats(hist) if len(hist) >= MIN_WEEKS else frozen[start.weekday()]
                )
            base, spread = frozen[weekday]
            if value - base > SPREADS * spread:
                excess.append(value - base)
                peak = max(peak, (value - base) * 100 / max(base, base0, FLOOR_USD))
                day += timedelta(days=1)
                continue
            found.append(_rise(kind, key, start, excess, base0, peak, False, 0))
            start = None
        hist = _history(series, day, first)
        if len(hist) >= MIN_WEEKS:
            base, spread = _stats(hist)
            if value - base > SPREADS * spread:
                start, frozen, excess = day, {day.weekday(): (base, spread)}, [value - base]
                peak, base0 = (value - base) * 100 / max(base, FLOOR_USD), base
        day += timedelta(days=1)
    if start is not None:
        found.append(_rise(kind, key, start, excess, base0, peak, True, days_left))
    return found


def _rise(
    kind: str,
    key: str,
    start: date,
    excess: list[Decimal],
    base: Decimal,
    peak: Decimal,
    ongoing: bool,
    days_left: int,
) -> Rise:
    above = sum(excess, Decimal(0))
    tail = excess[-TAIL_DAYS:]
    ahead = sum(tail, Decimal(0)) / len(tail) * days_left if ongoing else Decimal(0)
    end = start + timedelta(days=len(excess) - 1)
    return Rise(kind, key, start, end, base, peak, above, above + ahead, ongoing)


def _largest(found: Iterable[Rise]) -> Rise | None:
    return max(found, key=lambda r: (r.above, r.start), default=None)


def from_days(days: Sequence[DayGroup], team_key: str | None) -> Daily:
    """The anomalies' and the forecast's inputs from day groups in Python (billing/daybook.py
    works out the same in the engine, for a bill's worth of them)."""
    rows = [d for d in gpu_days(days, with_unused=True) if not coarse(d.group)]
    teams: dict[str, dict[date, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    resources: dict[tuple[str, str], dict[date, Decimal]] = defaultdict(
        lambda: defaultdict(Decimal)
    )
    for item in rows:
        assert item.day is not None
        g = item.group
        team = (g.tags.get(team_key) if team_key else None) or UNTAGGED
        teams[team][item.day] += g.effective
        resources[resource_key(g)][item.day] += g.effective
    spend: dict[str, Decimal] = defaultdict(Decimal)
    for item in gpu_days(days, with_unused=True):
        team = (item.group.tags.get(team_key) if team_key else None) or UNTAGGED
        spend[team] += item.group.effective
    last = max((item.day for item in rows if item.day is not None), default=None)
    return Daily(tuple(gpu_days(days)), teams, resources, spend, last)


def may_rise(conn: Any, table: str, last: date) -> list[int]:
    """The series (`sid`) of `table (sid, day, v)` with a day that could start a rise: the test
    `rises` makes on a day outside a rise, in doubles with a margin so that it never misses one
    (the exact test stays `rises`', in Decimals, on these series only)."""
    lags = ", ".join(f"lag(v, {7 * k}) OVER w" for k in range(1, WEEKS + 1))
    spread = (
        f"greatest({MAD_SCALE} * list_aggregate(list_transform(h, lambda x: abs(x - base)), "
        f"'median'), {FLOOR_SHARE} * base, {FLOOR_USD})"
    )
    sql = f"""
WITH bounds AS (SELECT sid, min(day) AS first FROM {table} GROUP BY sid),
dense AS (SELECT sid, CAST(unnest(generate_series(first, ?::DATE, INTERVAL 1 DAY)) AS DATE)
          AS day FROM bounds),
filled AS (SELECT d.sid, d.day, COALESCE(CAST(s.v AS DOUBLE), 0) AS v
           FROM dense d LEFT JOIN {table} s ON s.sid = d.sid AND s.day = d.day),
lagged AS (SELECT sid, v, list_filter([{lags}], lambda x: x IS NOT NULL) AS h FROM filled
           WINDOW w AS (PARTITION BY sid ORDER BY day)),
based AS (SELECT sid, v, h, list_aggregate(h, 'median') AS base FROM lagged
          WHERE len(h) >= {MIN_WEEKS})
SELECT DISTINCT sid FROM based
WHERE v - base > {SPREADS} * {spread} - 1e-6 * (abs(v) + abs(base) + 1)
"""
    return [int(row[0]) for row in conn.execute(sql, [last]).fetchall()]


def detect(daily: Daily, period: Period) -> tuple[dict[str, Rise], dict[tuple[str, str], Rise]]:
    """Each team's and each resource's largest rise (where it has one)."""
    last = daily.last
    if last is None:
        return {}, {}
    left = max((last_day(period) - last).days, 0)
    by_team = {
        team: rise
        for team, series in sorted(daily.teams.items())
        if (rise := _largest(rises(series, last, left, "team", team)))
    }
    by_resource = {
        key: rise
        for key, series in sorted(daily.resources.items())
        if (rise := _largest(rises(series, last, left, "resource", f"{key[0]}:{key[1]}")))
    }
    return by_team, by_resource


def _fields(billing: Billing, rise: Rise) -> Billing:
    return dataclasses.replace(
        billing,
        rise_start=datetime(rise.start.year, rise.start.month, rise.start.day, tzinfo=UTC),
        rise_usd=float(cents(rise.above)),
        rise_forecast_usd=float(cents(rise.forecast)),
        rise_pct=float(round(rise.peak_pct, 1)),
        rise_days=(rise.end - rise.start).days + 1,
    )


def with_rises(
    resources: Sequence[Resource],
    daily: Daily,
    period: Period,
    team_key: str | None,
) -> tuple[tuple[Resource, ...], tuple[Rise, ...]]:
    """The billed resources with their rise's fields, plus one resource of kind `spend` per
    team with a rise, for the policy engine; and every rise found, for the reports."""
    by_team, by_resource = detect(daily, period)
    out: list[Resource] = []
    for r in resources:
        rise = by_resource.get((r.provider, r.id))
        out.append(dataclasses.replace(r, billing=_fields(r.billing, rise)) if rise else r)
    spend = daily.team_spend
    for team, rise in by_team.items():
        billing = Billing(period=period.name, effective_usd=float(cents(spend[team])))
        out.append(
            Resource(
                kind=Kind.SPEND,
                provider="billing",
                id=f"team:{team}" if team != UNTAGGED else "team:untagged",
                tags={team_key: team} if team_key and team != UNTAGGED else {},
                billing=_fields(billing, rise),
                source=SourceRef(note=f"the daily GPU spend of team {team} in {period.name}"),
            )
        )
    return tuple(out), (*by_team.values(), *by_resource.values())
