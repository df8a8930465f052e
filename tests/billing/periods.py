"""The quarter's calendar and amounts: charge-period slices, the two flavours, 6-decimal money."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

SIX = Decimal("0.000001")


@dataclass(frozen=True)
class Flavour:
    """How dense the quarter is. Full: daily usage rows and a 4-instance forgotten cluster with daily
    rows. Demo: monthly usage rows and a 2-instance cluster with weekly rows (small enough to check in)."""

    demo: bool
    usage_step: int | None  # days per usage row; None: one row per month
    cluster_size: int
    cluster_step: int  # days per forgotten-cluster row


FULL = Flavour(demo=False, usage_step=1, cluster_size=4, cluster_step=1)
DEMO = Flavour(demo=True, usage_step=None, cluster_size=2, cluster_step=7)


def utc(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def month_start(year: int, month: int) -> date:
    return date(year, month, 1)


def next_month(d: date) -> date:
    return date(d.year + d.month // 12, d.month % 12 + 1, 1)


def slices(first: date, stop: date, step: int | None) -> list[tuple[datetime, datetime]]:
    """[first, stop) cut into charge periods of `step` days (None: whole months), never across a
    month boundary, so every row sits in the billing period of its ChargePeriodStart. A remainder
    of fewer than 3 days before a month's end joins the week before it (a week of 8 to 9 days)."""
    out = []
    cur = first
    while cur < stop:
        end = min(stop, next_month(cur))
        if step is not None and (step < 7 or (end - cur).days >= step + 3):
            end = cur + timedelta(days=step)
        out.append((utc(cur), utc(end)))
        cur = end
    return out


def days(period: tuple[datetime, datetime]) -> int:
    return (period[1] - period[0]).days


def money(rng: random.Random, low: str, high: str) -> Decimal:
    """A uniformly drawn amount in [low, high] with 6 decimals."""
    lo, hi = int(Decimal(low) / SIX), int(Decimal(high) / SIX)
    return Decimal(rng.randint(lo, hi)) * SIX


def rate(rng: random.Random, low: str, high: str) -> Decimal:
    """A unit price with 4 decimals: times quarter-hours it stays within 6 decimals, exactly."""
    q = Decimal("0.0001")
    return Decimal(rng.randint(int(Decimal(low) / q), int(Decimal(high) / q))) * q


def busy_hours(
    rng: random.Random, period: tuple[datetime, datetime], share: float = 0.0
) -> Decimal:
    """Hours of use in `period`, in quarter hours: all of it, less up to `share` of it idle."""
    quarters = days(period) * 96
    idle = rng.randint(0, int(quarters * share)) if share else 0
    return Decimal(quarters - idle) / 4


def six(value: Decimal) -> Decimal:
    """`value` with exactly 6 decimals; refuses to round (every amount here is exact)."""
    out = value.quantize(SIX)
    if out != value:
        raise ValueError(f"{value} has more than 6 decimals")
    return out
