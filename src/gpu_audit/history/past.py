"""The previous audit, from its index documents: what a comparison reads of it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from itertools import compress, count
from typing import Any

from gpu_audit.core.comparison import TrendPoint
from gpu_audit.history.compare import PastFinding, PastResource, Previous
from gpu_audit.history.documents import decode_columns, decode_lines
from gpu_audit.history.rows import RESOURCE_COLUMNS

_FINDING_COLUMNS = (
    "open",
    "resource",
    "rule_id",
    "severity",
    "monthly_savings_usd",
    "first_seen",
    "audits_open",
)


def previous(
    generated_at: datetime,
    cost: float,
    savings: float,
    trend: tuple[TrendPoint, ...],
    titles: Mapping[str, str],
    documents: dict[str, bytes],
) -> Previous:
    """The previous audit from its `fingerprints`, `finding_index` and `resource_index`."""
    fingerprints = decode_lines(documents["fingerprints"])
    findings = decode_columns(documents["finding_index"])
    resources = decode_columns(documents["resource_index"])
    seen = dict(zip(fingerprints, count(), strict=False))  # ints: nothing for the GC to track
    keys = resources["key"]
    for name in _FINDING_COLUMNS:  # a damaged audit fails here, not half-way through a report
        findings[name]
    for name in RESOURCE_COLUMNS:
        resources[name]

    def findings_of(rows: list[int]) -> Iterator[PastFinding]:
        opened = findings["open"]
        for row in compress(rows, (opened[r] for r in rows)):
            at = findings["resource"][row]
            ident, provider, account, region, location, _ = _resource(resources, at)
            yield PastFinding(
                fingerprints[row],
                findings["rule_id"][row],
                findings["severity"][row],
                keys[at],
                ident,
                provider,
                account,
                region,
                location,
                findings["monthly_savings_usd"][row],
                findings["first_seen"][row],
            )

    def resources_of(rows: list[int]) -> Iterator[PastResource]:
        for row in rows:
            yield PastResource(keys[row], *_resource(resources, row))

    return Previous(
        generated_at,
        cost,
        savings,
        seen,
        findings["first_seen"],
        findings["audits_open"],
        dict(zip(keys, range(len(keys)), strict=True)),
        findings_of,
        resources_of,
        trend,
        titles,
    )


def _resource(columns: dict[str, list[Any]], row: int) -> tuple[Any, ...]:
    """id, provider, account, region, location, monthly cost of resource `row`."""
    return tuple(columns[name][row] for name in RESOURCE_COLUMNS)
