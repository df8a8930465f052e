"""A wall-clock checkpoint interval as a framework states it, in minutes (docs/spot.md).

Lightning `ModelCheckpoint(train_time_interval=…)` takes a `timedelta`; its configs spell one as
`timedelta(hours=6)` in Python, `{_target_: datetime.timedelta, minutes: 30}` under Hydra, or a
string: `DD:HH:MM:SS` or `HH:MM:SS` (Lightning's `Timer` duration spelling), or `1 day, 0:30:00`
(`str(timedelta)`). A bare number says no unit, and a step count (`every_n_train_steps`, HF
`save_steps`) is not wall-clock time: neither is read. A templated value is unknown.
"""

from __future__ import annotations

import math
from typing import Any

from gpu_audit.core.lazyre import lazy
from gpu_audit.core.yamlsrc import is_templated

KEY = "train_time_interval"
KNOB = "checkpoint_interval_minutes"  # the `training.*` field it sets
_UNITS = {
    "weeks": 7 * 24 * 60.0,
    "days": 24 * 60.0,
    "hours": 60.0,
    "minutes": 1.0,
    "seconds": 1 / 60,
    "milliseconds": 1 / 60_000,
}
_CLOCK = lazy(
    r"(?:(?P<days>\d+)\s+days?,\s*)?(?:(?P<d4>\d+):)?(?P<h>\d+):(?P<m>\d{1,2}):"
    r"(?P<s>\d{1,2}(?:\.\d+)?)"
)
_KWARG = lazy(r"(\w+)\s*=\s*([^,)]+)")


class Templated(Exception):
    """The interval is filled in at run time (`${ckpt}`, `timedelta(minutes=cfg.every)`)."""


def _positive(minutes: float) -> float | None:
    if not math.isfinite(minutes) or minutes <= 0:
        return None
    return round(minutes, 6)


def from_text(text: str) -> float | None:
    """`00:30:00` → 30.0, `01:00:00:00` → 1440.0, `1 day, 0:30:00` → 1470.0; else None."""
    if is_templated(text):
        raise Templated(text)
    match = _CLOCK.fullmatch(text.strip().strip("\"'"))
    if match is None:
        return None
    days = float(match.group("days") or match.group("d4") or 0)
    minutes = days * 1440 + float(match.group("h")) * 60 + float(match.group("m"))
    return _positive(minutes + float(match.group("s")) / 60)


def from_mapping(value: dict[Any, Any]) -> float | None:
    """Hydra's `{_target_: datetime.timedelta, hours: 1}` (or the bare keyword mapping)."""
    target = value.get("_target_")
    if target is not None and not (isinstance(target, str) and target.endswith("timedelta")):
        return None
    total, seen = 0.0, False
    for key, amount in value.items():
        if key == "_target_":
            continue
        if key not in _UNITS:
            return None
        if isinstance(amount, str) and is_templated(amount):
            raise Templated(amount)
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            return None
        total += float(amount) * _UNITS[key]
        seen = True
    return _positive(total) if seen else None


def from_call(arguments: str) -> float | None:
    """The keyword arguments of `timedelta(...)` in a script: literals only, else templated."""
    total, seen = 0.0, False
    for key, amount in _KWARG.findall(arguments):
        if key not in _UNITS:
            return None
        try:
            number = float(amount.strip())
        except ValueError:
            raise Templated(amount.strip()) from None  # `cfg.save_every_n_min`: set at run time
        total += number * _UNITS[key]
        seen = True
    return _positive(total) if seen else None


def minutes_of(value: Any) -> float | None:
    """A config value's interval in minutes (None: not a wall-clock interval); raises
    Templated for a value set at run time."""
    if isinstance(value, dict):
        return from_mapping(value)
    if isinstance(value, str):
        return from_text(value)
    return None
