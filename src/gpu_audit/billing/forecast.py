"""The period's GPU spend forecast to its end from the days read so far (docs/billing.md).

Method (`mean of the last 14 days`): for each cloud, the GPU spend to date (the report's GPU
figure) plus the mean daily GPU spend of the last 14 days that cloud's exports hold (days with
no spend count as $0; fewer days where fewer were read) times the days left after its last day
read. Per team and in total the clouds' projections are added, so the teams and the clouds add
up to the total. The band beside the figure takes, instead of the 14-day mean, the lowest and
the highest mean of 7 consecutive days in the window (a week holds one weekend, so a steady
weekday/weekend pattern stays inside it). A period already over has no forecast.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal

from gpu_audit.billing.daily import DayGroup, gpu_days, last_read, per_day
from gpu_audit.billing.period import Period
from gpu_audit.core.frozen import record

WINDOW_DAYS = 14
BAND_DAYS = 7
METHOD = "spend to date + mean daily GPU spend of the last 14 days read × days left"
UNTAGGED = "(untagged)"

Series = dict[date, Decimal]


@record
class Window:
    """The days one cloud's projection rests on."""

    cloud: str
    first: date  # first day of the window
    last: date  # the last day read
    days_left: int  # days of the period after `last`


@record
class Projection:
    """One line of the forecast: to date, the daily mean it rests on, the figure and its band."""

    key: str  # a cloud, a team (UNTAGGED for spend without the tag) or `total`
    to_date: Decimal
    daily_mean: Decimal
    forecast: Decimal
    low: Decimal
    high: Decimal


@record
class Forecast:
    period: str
    method: str
    last_day: date  # the latest day read (of any cloud)
    window_days: int  # the days the mean rests on (the longest cloud window)
    days_left: int  # after the latest day read
    windows: tuple[Window, ...]
    total: Projection
    clouds: tuple[Projection, ...]
    teams: tuple[Projection, ...]
    team_key: str | None
    daily: tuple[tuple[date, Decimal], ...]  # the bill's GPU spend per day read


def last_day(period: Period) -> date:
    """The period's last UTC day (its end is exclusive)."""
    return (period.end - timedelta(days=1)).date()


def forecast(
    days: Sequence[DayGroup], period: Period, now: datetime, team_key: str | None
) -> Forecast | None:
    """The forecast, or None when the period is over at `now` (or nothing was read)."""
    rows = gpu_days(days)
    if now >= period.end or not rows:
        return None
    end = last_day(period)
    by_cloud: dict[str, Series] = defaultdict(lambda: defaultdict(Decimal))
    by_team: dict[str, dict[str, Series]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(Decimal))
    )
    reads = {
        cloud: last_read([d for d in rows if d.group.cloud == cloud], now)
        for cloud in {d.group.cloud for d in rows}
    }
    for item in rows:
        g = item.group
        team = (g.tags.get(team_key) if team_key else None) or UNTAGGED
        for day, amount in per_day(item, reads[g.cloud]):
            by_cloud[g.cloud][day] += amount
            by_team[team][g.cloud][day] += amount
    start = period.start.date()
    windows: dict[str, Window] = {}
    for cloud, series in sorted(by_cloud.items()):
        read = reads[cloud]
        first = max(read - timedelta(days=WINDOW_DAYS - 1), start, min(series))
        windows[cloud] = Window(cloud, first, read, max((end - read).days, 0))
    if all(w.days_left == 0 for w in windows.values()):
        return None  # every day of the period is read: the figure is the spend
    clouds = [_project(cloud, {cloud: s}, windows) for cloud, s in sorted(by_cloud.items())]
    teams = [_project(team, per, windows) for team, per in by_team.items()]
    teams.sort(key=lambda p: (-p.forecast, p.key))
    total = _project("total", by_cloud, windows)
    latest = max(w.last for w in windows.values())
    bill: Series = defaultdict(Decimal)
    for series in by_cloud.values():
        for day, amount in series.items():
            bill[day] += amount
    daily = tuple((d, bill.get(d, Decimal(0))) for d in _days(start, latest))
    return Forecast(
        period=period.name,
        method=METHOD,
        last_day=latest,
        window_days=max((w.last - w.first).days + 1 for w in windows.values()),
        days_left=(end - latest).days,
        windows=tuple(windows.values()),
        total=total,
        clouds=tuple(clouds),
        teams=tuple(teams),
        team_key=team_key,
        daily=daily,
    )


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def _project(
    key: str, per_cloud: Mapping[str, Series], windows: Mapping[str, Window]
) -> Projection:
    to_date = mean = ahead = low = high = Decimal(0)
    for cloud, series in per_cloud.items():
        w = windows[cloud]
        to_date += sum(series.values(), Decimal(0))
        values = [series.get(d, Decimal(0)) for d in _days(w.first, w.last)]
        cloud_mean = sum(values, Decimal(0)) / len(values)
        span = min(BAND_DAYS, len(values))
        runs = [sum(values[i : i + span], Decimal(0)) / span for i in range(len(values) - span + 1)]
        mean += cloud_mean
        ahead += cloud_mean * w.days_left
        low += min(runs) * w.days_left
        high += max(runs) * w.days_left
    return Projection(key, to_date, mean, to_date + ahead, to_date + low, to_date + high)
