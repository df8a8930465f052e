"""Reading config values the way every job parser does: text, booleans, numbers and durations."""

from __future__ import annotations

import math
import re
from typing import Any

from gpu_audit.core.lazyre import lazy
from gpu_audit.core.yamlsrc import as_bool as as_bool  # one reading of a flag (the knobs' too)
from gpu_audit.core.yamlsrc import is_templated

_SHELL_VAR = lazy(r"\$[A-Za-z_]\w*", needs=("$",))
_SECONDS = lazy(r"^\s*(\d+(?:\.\d+)?)s\s*$")  # protobuf Duration JSON: `3600s`, `1.5s`
_UNITS = lazy(r"(\d+(?:\.\d+)?)\s*([smhdw])", re.IGNORECASE)  # `1h30m`, `2d`, `90s`
_UNIT_HOURS = {"s": 1 / 3600, "m": 1 / 60, "h": 1, "d": 24, "w": 168}


def text(value: Any) -> str | None:
    """A usable string; None for absent, non-string, blank or templated (`${X}`, `{{ x }}`) text."""
    return value if isinstance(value, str) and value.strip() and not is_templated(value) else None


def literal(value: Any) -> str | None:
    """`text`, also None for `$VAR` (left for envsubst): request bodies filled in by a shell."""
    found = text(value)
    return None if found is None or _SHELL_VAR.search(found) else found


def as_number(value: Any) -> float | None:
    """A number, or a numeric string; anything else (templated, text) → None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and not is_templated(value):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


class NotWhole(ValueError):
    """A count (nodes, replicas, parallelism) that is not a whole number, at its line: the job
    loader reports it as one located line."""

    def __init__(self, key: str, value: float, line: int | None) -> None:
        super().__init__(f"{key}: expected a whole number, got {value:g}")
        self.key, self.value, self.line = key, value, line


def as_count(value: Any, key: str, line: int | None) -> float | None:
    """`as_number` for a count: a fraction (`parallelism: 0.5`) is refused (`NotWhole`)."""
    number = as_number(value)
    if number is not None and math.isfinite(number) and not float(number).is_integer():
        raise NotWhole(key, number, line)
    return number


def seconds_to_hours(value: Any) -> float | None:
    """A number of seconds (`attemptDurationSeconds`, `MaxRuntimeInSeconds`) as hours."""
    seconds = as_number(value)
    return None if seconds is None else seconds / 3600


def duration_hours(value: Any) -> float | None:
    """A Duration as hours: `3600s` (protobuf JSON), or a number of seconds."""
    if isinstance(value, str) and (match := _SECONDS.match(value)):
        return float(match.group(1)) / 3600
    return seconds_to_hours(value)


def unit_hours(value: Any) -> float | None:
    """A duration written with units (`1h30m`, `2d`, `90s`) as hours; a bare number is seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value / 3600
    parts = _UNITS.findall(str(value))
    return sum(float(n) * _UNIT_HOURS[u.lower()] for n, u in parts) if parts else None
