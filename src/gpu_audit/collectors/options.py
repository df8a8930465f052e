"""Flags more than one provider declares, defined once so their help and bounds agree."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from gpu_audit.collectors.provider import Option
from gpu_audit.errors import ConfigError

CONCURRENCY = Option(
    "--concurrency", "concurrency", "Parallel work items.", kind=int, bounds=(1, 64)
)
WINDOW = Option(
    "--window", "window_hours", "Utilization window, hours.", kind=float, bounds=(1, 24 * 90)
)

REGION = Option(
    "--region", "regions", "Region to scan (repeatable; default: every region).", multiple=True
)

# Seconds one API call may take before it is retried or becomes a gap; providers map it onto
# their own field (AWS `read_timeout`, GCP `timeout`).
TIMEOUT = Option(
    "--timeout", "timeout", "Seconds to wait for each API call.", kind=float, bounds=(0.1, 600)
)


def check_patience(provider: str, section: Any, timeouts: Sequence[str] = ("timeout",)) -> None:
    """Every timeout a finite number of seconds above 0, and `max_attempts` at least 1: a NaN,
    infinite, zero or negative timeout would hang a scan or fail every call."""
    for key in timeouts:
        value = getattr(section, key)
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{provider}.{key}: {value!r}: expected seconds above 0")
    if section.max_attempts < 1:
        raise ConfigError(f"{provider}.max_attempts: {section.max_attempts} is below 1")


# Finished training jobs and tuning sweeps are read back this far (`scan --since`).
SINCE = Option(
    "--since",
    "since",
    "Read finished training jobs and tuning sweeps from this date (default: 90 days back).",
    metavar="DATE",
)
SINCE_DAYS = 90


def period_start(text: str | None, now: datetime) -> datetime:
    """The start of the period `--since` names (a date or an ISO time), else the start of the day
    90 days before now (UTC): one period all day, so each day's requests are the same."""
    if not text:
        start = (now - timedelta(days=SINCE_DAYS)).astimezone(UTC)
        return start.replace(hour=0, minute=0, second=0, microsecond=0)
    parsed = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    try:
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except OverflowError:  # `0001-01-01T00:00+05:00`, `9999-12-31T23:00-14:00`: no UTC time
        raise ValueError(f"{text}: outside the years 1 to 9999 in UTC") from None


def check_since(provider: str, section: Any) -> None:
    """`since` is a date (`2026-09-01`) or an ISO time, not in the future's far side of sense."""
    text = section.since
    if text is None:
        return
    try:
        start = period_start(str(text), datetime.now(UTC))
    except ValueError as exc:
        what = "outside the years 1 to 9999 in UTC" if "outside" in str(exc) else ""
        raise ConfigError(
            f"{provider}.since: {str(text)[:40]!r}: "
            f"{what or 'expected a date (2026-09-01) or an ISO time'}"
        ) from None
    if start.date() < date(2006, 1, 1):
        raise ConfigError(f"{provider}.since: {str(text)[:40]!r} is before any cloud ran a job")
