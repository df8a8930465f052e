"""Findings and resources against the previous audit: new, persisting, resolved, removed, trend."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Severity


class Change(StrEnum):
    NEW = "new"
    PERSISTING = "persisting"


@record
class FindingHistory:
    """A finding against the previous audit: `new`, or `persisting` since `first_seen`."""

    change: Change
    first_seen: datetime
    audits_open: int  # audits this finding has been in, this one included


@record(kw_only=True)
class Resolved:
    """A finding of the previous audit that is gone now, with the saving it stood for."""

    fingerprint: str
    rule_id: str
    severity: Severity
    title: str
    resource_id: str
    location: str
    monthly_savings_usd: float | None
    first_seen: datetime
    # its resource is gone too (an instance that ended): not a saving realised by a fix
    gone_with_resource: bool = False


@record(kw_only=True)
class Removed:
    """A resource of the previous audit that is gone now, with what it cost."""

    resource_id: str
    provider: str
    location: str
    monthly_cost_usd: float | None


@record
class TrendPoint:
    """One audit in the trend: spend, savings found (open) and savings realised (resolved)."""

    generated_at: datetime
    monthly_cost_usd: float
    monthly_savings_usd: float
    savings_realised_usd: float
    findings_open: int


@record
class KnobChange:
    """A knob of a resource that changed since the previous audit, with its GPUs' busy % (DCGM's
    engine activity where measured, else the utilization average) then and now."""

    location: str
    knob: str
    was: str | None  # None: not stated
    now: str | None
    busy_before: float | None
    busy_after: float | None


@record(kw_only=True)
class Comparison:
    """What changed since the previous audit of the same scope, as plain data reporters read.

    `changes` runs parallel to `ScanResult.findings`. With no previous audit, `previous_at` is
    None and every finding is new.
    """

    source: str  # "history FILE" or "baseline FILE"
    previous_at: datetime | None
    changes: tuple[FindingHistory, ...]
    new: int = 0  # open findings only, as every count
    persisting: int = 0
    resolved: tuple[Resolved, ...] = ()
    removed: tuple[Removed, ...] = ()
    previous_cost_usd: float | None = None
    previous_savings_usd: float | None = None
    savings_realised_usd: float = 0.0
    trend: tuple[TrendPoint, ...] = ()  # oldest first, this audit last
    knob_changes: tuple[KnobChange, ...] = ()  # with a history: knobs changed (docs/knobs.md)
