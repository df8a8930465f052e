"""The period a billing report covers: `2026-Q3`, `2026-08`, or `--from/--to` dates, half-open."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from gpu_audit.core.frozen import record
from gpu_audit.errors import ConfigError

_QUARTER = re.compile(r"(\d{4})-?Q([1-4])", re.IGNORECASE)
_MONTH = re.compile(r"(\d{4})-(\d{2})")


@record
class Period:
    """[start, end) in UTC, and the name reports show (`2026-Q3`, `2026-08`,
    `2026-07-01..2026-09-30`)."""

    name: str
    start: datetime
    end: datetime

    def months(self) -> tuple[str, ...]:
        """The billing months (`YYYY-MM`) the period touches."""
        months = []
        year, month = self.start.year, self.start.month
        while year <= 9999 and datetime(year, month, 1, tzinfo=UTC) < self.end:
            months.append(f"{year:04d}-{month:02d}")
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        return tuple(months)

    @property
    def days(self) -> float:
        """The period's length in days (fractional for `--from/--to` times)."""
        return (self.end - self.start).total_seconds() / 86400


def _month_start(year: int, month: int) -> datetime:
    if not 1 <= year <= 9999:
        raise ConfigError(f"--period: year {year} is out of range")
    return datetime(year, month, 1, tzinfo=UTC)


def _next_month(year: int, month: int, count: int = 1) -> datetime:
    month += count
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    if year > 9999:
        return datetime.max.replace(tzinfo=UTC)
    return datetime(year, month, 1, tzinfo=UTC)


def parse_period(text: str | None, start: str | None = None, end: str | None = None) -> Period:
    """`--period 2026-Q3` or `--period 2026-08`, or `--from 2026-07-01 --to 2026-09-30` (both
    days included); exactly one of the two forms."""
    if text and (start or end):
        raise ConfigError("give --period or --from/--to, not both")
    if text:
        value = text.strip()
        if match := _QUARTER.fullmatch(value):
            year, quarter = int(match[1]), int(match[2])
            first = _month_start(year, 3 * quarter - 2)
            return Period(f"{year:04d}-Q{quarter}", first, _next_month(year, 3 * quarter - 2, 3))
        if (match := _MONTH.fullmatch(value)) and 1 <= int(match[2]) <= 12:
            year, month = int(match[1]), int(match[2])
            return Period(
                f"{year:04d}-{month:02d}", _month_start(year, month), _next_month(year, month)
            )
        raise ConfigError(
            f"--period: expected a quarter (2026-Q3) or a month (2026-08), got {value[:40]!r}"
        )
    if not (start and end):
        raise ConfigError("give --period 2026-Q3 (or a month, 2026-08), or both --from and --to")
    since, until = _day("--from", start), _day("--to", end)
    if until < since:
        raise ConfigError(f"--to {until} is before --from {since}")
    begin = datetime(since.year, since.month, since.day, tzinfo=UTC)
    stop = datetime(until.year, until.month, until.day, tzinfo=UTC)
    after = stop + timedelta(days=1) if until < date.max else datetime.max.replace(tzinfo=UTC)
    return Period(f"{since}..{until}", begin, after)


def _day(option: str, text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"{option}: expected a date (2026-07-01), got {text[:40]!r}") from None
