"""A shard report's `sweeps` read back for `merge`: each value checked, a bad one is one line
naming the file and the key (`merge: shard-1.json: sweeps[0].trials[3].instances: ...`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import Enum
from typing import Any, TypeVar

from gpu_audit.core.resource import Capacity
from gpu_audit.core.runs import Outcome, Sweep, TrialRun
from gpu_audit.errors import ConfigError

E = TypeVar("E", bound=Enum)

_KINDS = ("tuning", "training")


class _Reader:
    """Typed reads of one mapping, each failure located at `where.key`."""

    def __init__(self, path: str, where: str, raw: Any) -> None:
        self.path = path
        self.where = where
        if not isinstance(raw, dict):
            raise self.error("", "expected an object")
        self.raw: Mapping[str, Any] = raw

    def error(self, key: str, what: str) -> ConfigError:
        """A ConfigError naming the shard file and the key's place in it."""
        at = f"{self.where}.{key}" if key else self.where
        return ConfigError(f"merge: {self.path}: {at}: {what}")

    def text(self, key: str, optional: bool = False) -> Any:  # Any: JSON of any shape
        """The string at `key` (None when absent and `optional`); ConfigError otherwise."""
        value = self.raw.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.error(key, "expected a string")
        return value

    def number(self, key: str) -> float | None:
        """A finite number of at least 0 at `key` as a float, None when absent; ConfigError
        otherwise."""
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, "expected a number")
        if not math.isfinite(value) or value < 0:
            raise self.error(key, "expected a finite number of at least 0")
        return float(value)

    def count(self, key: str, optional: bool = True) -> int | None:
        """A whole number of at least 0 at `key` (None when absent and `optional`); ConfigError
        otherwise."""
        value = self.raw.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(key, "expected a whole number of at least 0")
        return value

    def time(self, key: str, optional: bool = True) -> datetime | None:
        """An ISO 8601 time at `key` in UTC (a naive one taken as UTC; None when absent and
        `optional`); ConfigError otherwise."""
        value = self.text(key, optional)
        if value is None:
            return None
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
        except (ValueError, OverflowError):  # not a time, or one past year 9999 in UTC
            raise self.error(key, "expected an ISO 8601 time") from None

    def choice(self, key: str, kind: type[E]) -> E:
        """The member of the enum `kind` named by the string at `key`; ConfigError listing the
        choices otherwise."""
        value = self.text(key)
        try:
            return kind(value)
        except ValueError:
            known = ", ".join(str(k.value) for k in kind)
            raise self.error(key, f"expected one of {known}") from None


def _trial(path: str, where: str, raw: Any) -> TrialRun:
    read = _Reader(path, where, raw)
    return TrialRun(
        id=read.text("id"),
        name=read.text("name"),
        outcome=read.choice("outcome", Outcome),
        instance_type=read.text("instance_type", optional=True),
        instances=read.count("instances", optional=False) or 0,
        capacity=read.choice("capacity", Capacity),
        hourly_usd=read.number("hourly_usd"),
        billable_seconds=read.number("billable_seconds"),
        training_seconds=read.number("training_seconds"),
        gpus_per_instance=read.count("gpus_per_instance"),
        interruptions=read.count("interruptions"),
        restarts=read.count("restarts"),
        lost_seconds=read.number("lost_seconds"),
        checkpoint=read.text("checkpoint", optional=True),
        started=read.time("started"),
        ended=read.time("ended"),
        failure=read.text("failure", optional=True),
        price_source=read.text("price_source", optional=True),
        spot_discount=read.number("spot_discount"),
        resume_seconds=read.number("resume_seconds"),
        resumes=read.count("resumes"),
        startup_seconds=read.number("startup_seconds"),
        input_mode=read.text("input_mode", optional=True),
    )


def _sweep(path: str, where: str, raw: Any) -> Sweep:
    read = _Reader(path, where, raw)
    kind = read.text("kind")
    if kind not in _KINDS:
        raise read.error("kind", "expected one of " + ", ".join(_KINDS))
    trials = read.raw.get("trials")
    if not isinstance(trials, list):
        raise read.error("trials", "expected a list")
    since = read.time("since", optional=False)
    assert since is not None
    return Sweep(
        provider=read.text("provider"),
        service=read.text("service"),
        kind=kind,
        id=read.text("id"),
        name=read.text("name"),
        account=read.text("account", optional=True),
        region=read.text("region", optional=True),
        state=read.text("state"),
        since=since,
        trials=tuple(_trial(path, f"{where}.trials[{i}]", t) for i, t in enumerate(trials)),
        ceiling_gpu_hours=read.number("ceiling_gpu_hours"),
        ceiling_commit=read.text("ceiling_commit", optional=True),
        ceiling_file=read.text("ceiling_file", optional=True),
        ceiling_note=read.text("ceiling", optional=True),
    )


def read_sweeps(path: str, raw: Any) -> list[Sweep]:
    """The sweeps of one shard report (none when it has no `sweeps` key)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError(f"merge: {path}: sweeps: expected a list")
    return [_sweep(path, f"sweeps[{i}]", item) for i, item in enumerate(raw)]
