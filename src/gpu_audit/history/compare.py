"""The comparison with the previous audit: new, persisting, resolved, removed, realised."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from datetime import datetime
from itertools import compress
from operator import attrgetter
from typing import NamedTuple

from gpu_audit.core.comparison import (
    Change,
    Comparison,
    FindingHistory,
    Removed,
    Resolved,
    TrendPoint,
)
from gpu_audit.core.fingerprint import resource_key
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Resource, Severity
from gpu_audit.core.results import CoverageGap, ScanResult
from gpu_audit.core.savings import total_savings

TREND_AUDITS = 8  # the trend shows this audit and the seven before it
_IS_OPEN = attrgetter("is_open")


class PastFinding(NamedTuple):
    """An open finding of the previous audit, as a resolved one is reported."""

    fingerprint: str
    rule_id: str
    severity: int
    resource_key: str
    resource_id: str
    provider: str
    account: str | None
    region: str | None
    location: str
    monthly_savings_usd: float | None
    first_seen: str  # ISO 8601


class PastResource(NamedTuple):
    key: str
    resource_id: str
    provider: str
    account: str | None
    region: str | None
    location: str
    monthly_cost_usd: float | None


@record
class Previous:
    """The previous audit, from the history store or a saved JSON report.

    `seen` maps every fingerprint of it to its row (`first_seen` and `audits_open` are by row)
    and `resource_keys` every resource's stable id to its row: that is all that is held of ~200k
    findings. The details of what is gone are read for those rows only (`findings_of` yields the
    open ones).
    """

    generated_at: datetime
    monthly_cost_usd: float
    monthly_savings_usd: float
    seen: Mapping[str, int]
    first_seen: Sequence[str]  # ISO 8601
    audits_open: Sequence[int]
    resource_keys: Mapping[str, int]
    findings_of: Callable[[list[int]], Iterable[PastFinding]]
    resources_of: Callable[[list[int]], Iterable[PastResource]]
    trend: tuple[TrendPoint, ...] = ()  # the audits before, oldest first, the previous one last
    titles: Mapping[str, str] = field(default_factory=dict)  # rule id → title


def compare(
    result: ScanResult, previous: Previous | None, source: str, keys: Sequence[str] | None = None
) -> Comparison:
    """Judge each finding of `result` against `previous` (None: the first audit); `keys`: the
    resources' stable ids, when the caller has them already."""
    fingerprints = result.fingerprints
    now = result.generated_at
    opens = list(map(_IS_OPEN, result.findings))
    if previous is None:
        changes = [FindingHistory(change=Change.NEW, first_seen=now, audits_open=1)] * len(
            fingerprints
        )
        new = sum(opens)
    else:
        changes, new = _judged(fingerprints, opens, previous, now)
    open_findings = list(compress(result.findings, opens))
    cost, savings = spend(result.resources), total_savings(open_findings)
    if previous is None:
        point = TrendPoint(
            generated_at=now,
            monthly_cost_usd=cost,
            monthly_savings_usd=savings,
            savings_realised_usd=0.0,
            findings_open=len(open_findings),
        )
        return Comparison(
            source=source, previous_at=None, changes=tuple(changes), new=new, trend=(point,)
        )
    persisting = len(open_findings) - new
    gaps = result.coverage_gaps
    past = previous.seen
    rows = [past[fp] for fp in past.keys() - set(fingerprints)]
    gone = [f for f in previous.findings_of(sorted(rows)) if not _unseen(f, gaps)]
    known = previous.resource_keys
    keys = keys if keys is not None else list(map(resource_key, result.resources))
    ended = known.keys() - set(keys)
    resolved = sorted(
        (_resolved(f, previous.titles, f.resource_key in ended) for f in gone),
        key=lambda r: (
            r.gone_with_resource,  # what a fix realised first
            -(r.monthly_savings_usd or 0.0),
            r.location,
            r.rule_id,
        ),
    )
    rows = [known[key] for key in ended]
    removed = sorted(
        (
            Removed(
                resource_id=r.resource_id,
                provider=r.provider,
                location=r.location,
                monthly_cost_usd=r.monthly_cost_usd,
            )
            for r in previous.resources_of(sorted(rows))
            if not _unseen(r, gaps)
        ),
        key=lambda r: (-(r.monthly_cost_usd or 0.0), r.location),
    )
    realised = _realised([f for f in gone if f.resource_key not in ended])
    point = TrendPoint(
        generated_at=now,
        monthly_cost_usd=cost,
        monthly_savings_usd=savings,
        savings_realised_usd=realised,
        findings_open=len(open_findings),
    )
    return Comparison(
        source=source,
        previous_at=previous.generated_at,
        changes=tuple(changes),
        new=new,
        persisting=persisting,
        resolved=tuple(resolved),
        removed=tuple(removed),
        previous_cost_usd=previous.monthly_cost_usd,
        previous_savings_usd=previous.monthly_savings_usd,
        savings_realised_usd=realised,
        trend=(*previous.trend, point)[-TREND_AUDITS:],
    )


def _judged(
    fingerprints: Sequence[str], opens: list[bool], previous: Previous, now: datetime
) -> tuple[list[FindingHistory], int]:
    """Each finding's history, and how many open ones are new. One FindingHistory is shared by
    all findings first seen on the same date and open for as many audits."""
    fresh = FindingHistory(change=Change.NEW, first_seen=now, audits_open=1)
    first_seen, audits_open = previous.first_seen, previous.audits_open
    made: dict[tuple[str, int], FindingHistory] = {}
    befores = list(map(previous.seen.get, fingerprints))
    changes = []
    for row in befores:
        if row is None:
            changes.append(fresh)
            continue
        key = first_seen[row], audits_open[row]
        change = made.get(key)
        if change is None:
            change = made[key] = FindingHistory(
                change=Change.PERSISTING, first_seen=parse_time(key[0]), audits_open=key[1] + 1
            )
        changes.append(change)
    new = sum(1 for shown, row in zip(opens, befores, strict=True) if shown and row is None)
    return changes, new


def spend(resources: Sequence[Resource]) -> float:
    """Monthly spend as the summary counts it: nodes and instances (a pod's GPUs are part of its
    node's cost), priced, finite and not negative."""
    costs = (r.monthly_cost_usd for r in resources if r.kind is not Kind.POD)
    return round(sum(c for c in costs if c is not None and 0 <= c < math.inf), 2)


def _resolved(f: PastFinding, titles: Mapping[str, str], ended: bool = False) -> Resolved:
    return Resolved(
        gone_with_resource=ended,
        fingerprint=f.fingerprint,
        rule_id=f.rule_id,
        severity=Severity(f.severity),
        title=titles.get(f.rule_id, f.rule_id),
        resource_id=f.resource_id,
        location=f.location,
        monthly_savings_usd=f.monthly_savings_usd,
        first_seen=parse_time(f.first_seen),
    )


def parse_time(text: str) -> datetime:
    """A stored ISO 8601 time as a datetime (`Z` read as UTC)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _realised(gone: list[PastFinding]) -> float:
    """Savings of findings resolved on a resource still there (one that ended took its findings
    with it: nothing was fixed); as with savings found, per resource the largest counts."""
    best: dict[str, float] = {}
    for item in gone:
        key = item.resource_key
        best[key] = max(best.get(key, 0.0), item.monthly_savings_usd or 0.0)
    return round(sum(best.values(), 0.0), 2)


def _unseen(resource: PastFinding | PastResource, gaps: tuple[CoverageGap, ...]) -> bool:
    """A resource in a region or account this scan could not read is not gone: it is unseen."""
    return any(
        gap.provider == resource.provider
        and (gap.account is None or gap.account == resource.account)
        and (gap.region is None or gap.region == resource.region)
        for gap in gaps
    )
