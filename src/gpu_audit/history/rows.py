"""An audit's resource and finding rows, prepared a column at a time for `executemany`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import count, repeat
from operator import attrgetter
from typing import Any

from gpu_audit.model import FindingHistory, ScanResult, Waiver


def iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _column(name: str, items: Sequence[Any]) -> list[Any]:
    return list(map(attrgetter(name), items))


def insert(
    conn: sqlite3.Connection,
    audit_id: int,
    result: ScanResult,
    keys: Sequence[str],
    seq: dict[int, int],
    changes: Sequence[FindingHistory],
) -> None:
    """Insert the rows of `result`'s resources (`keys` their stable ids, `seq` their row by
    `id()`) and findings (`changes` their history); the tuples are zipped from columns."""
    resources = result.resources
    conn.executemany(
        "INSERT INTO resources VALUES (?,?,?,?,?,?,?,?,?)",
        zip(
            repeat(audit_id),
            count(),
            keys,
            *(
                _column(name, resources)
                for name in ("id", "provider", "account", "region", "location", "monthly_cost_usd")
            ),
        ),
    )
    findings = result.findings
    first_seen = _column("first_seen", changes)
    stamps = {when: iso(when) for when in set(first_seen)}
    conn.executemany(
        "INSERT INTO findings VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        zip(
            repeat(audit_id),
            count(),
            result.fingerprints,
            [seq[id(resource)] for resource in _column("resource", findings)],
            *(
                _column(name, findings)
                for name in ("rule_id", "severity", "field", "expected", "actual", "line")
            ),
            _column("monthly_savings_usd", findings),
            _waivers(_column("waiver", findings)),
            _column("suppressed", findings),
            map(stamps.__getitem__, first_seen),
            _column("audits_open", changes),
        ),
    )


def _waivers(held: list[Waiver | None]) -> list[str | None]:
    """Each finding's waiver as JSON (None: not waived), each waiver encoded once."""
    texts: dict[int, str] = {}
    out: list[str | None] = []
    for waiver in held:
        if waiver is None:
            out.append(None)
            continue
        text = texts.get(id(waiver))
        if text is None:
            text = texts[id(waiver)] = json.dumps(waiver_mapping(waiver), default=str)
        out.append(text)
    return out


def waiver_mapping(waiver: Waiver) -> dict[str, Any]:
    return {
        "rule": waiver.rule,
        "reason": waiver.reason,
        "owner": waiver.owner,
        "expires": iso(waiver.expires) if waiver.expires else None,
        "where": dict(waiver.where),
        "source": waiver.source,
    }
