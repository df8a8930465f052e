"""The previous audit, from its index documents: what a comparison reads of it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from itertools import compress, count
from typing import Any

from gpu_audit.history.compare import PastFinding, PastResource, Previous
from gpu_audit.history.documents import decode_columns
from gpu_audit.history.rows import RESOURCE_COLUMNS
from gpu_audit.model import TrendPoint


def previous(
    generated_at: datetime,
    cost: float,
    savings: float,
    trend: tuple[TrendPoint, ...],
    titles: Mapping[str, str],
    finding_index: bytes,
    resource_index: bytes,
) -> Previous:
    findings = decode_columns(finding_index)
    resources = decode_columns(resource_index)
    fingerprints = findings["fingerprint"]
    seen = dict(
        zip(
            fingerprints,
            zip(findings["first_seen"], findings["audits_open"], count(), strict=False),
            strict=True,
        )
    )
    keys = resources["key"]

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
        dict(zip(keys, range(len(keys)), strict=True)),
        findings_of,
        resources_of,
        trend,
        titles,
    )


def _resource(columns: dict[str, list[Any]], row: int) -> tuple[Any, ...]:
    """id, provider, account, region, location, monthly cost of resource `row`."""
    return tuple(columns[name][row] for name in RESOURCE_COLUMNS)
