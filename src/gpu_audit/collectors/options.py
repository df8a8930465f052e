"""Flags more than one provider declares, defined once so their help and bounds agree."""

from __future__ import annotations

import math
from collections.abc import Sequence
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
