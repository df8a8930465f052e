"""An audit's findings and resources as column documents: what the next audit compares with.

Per audit, `fingerprints`, `finding_index` (first seen, audits, rule, severity, resource row,
saving, open) and `resource_index` (stable id, id, provider, account, region, location, cost)
are all a comparison reads; `finding_details` holds the rest `history show` needs. Columns are
lists built by one C-level getter each; a row per finding in SQLite cost ~1.5 s at 200k.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

from gpu_audit.core.comparison import FindingHistory
from gpu_audit.core.results import ScanResult, Waiver
from gpu_audit.history.documents import encode_columns, encode_lines

RESOURCE_COLUMNS = ("id", "provider", "account", "region", "location", "monthly_cost_usd")
# a finding's own values beyond the index; the saving in its unit (a job's per run) since 0.2
DETAIL_COLUMNS = ("field", "expected", "actual", "line", "saving_usd", "saving_unit")


def iso(value: datetime) -> str:
    """A time in UTC as ISO 8601 with a `Z`."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def column(name: str, items: Sequence[Any]) -> list[Any]:
    """The attribute `name` of each item, as a column."""
    return list(map(attrgetter(name), items))


def documents(
    result: ScanResult,
    keys: Sequence[str],
    seq: dict[int, int],
    changes: Sequence[FindingHistory],
) -> dict[str, bytes]:
    """The index and detail documents of `result` (`keys`: its resources' stable ids, `seq`
    their rows by `id()`, `changes`: its findings' history), by name."""
    resources = result.resources
    findings = result.findings
    first_seen = column("first_seen", changes)
    stamps = {when: iso(when) for when in set(first_seen)}
    waivers = column("waiver", findings)
    suppressed = column("suppressed", findings)
    resource_index = {
        "key": list(keys),
        **{name: column(name, resources) for name in RESOURCE_COLUMNS},
    }
    finding_index = {
        "first_seen": list(map(stamps.__getitem__, first_seen)),
        "audits_open": column("audits_open", changes),
        "rule_id": column("rule_id", findings),
        "severity": column("severity", findings),  # IntEnum: JSON writes the int
        "resource": list(map(seq.__getitem__, map(id, column("resource", findings)))),
        "monthly_savings_usd": column("monthly_savings_usd", findings),
        "open": [w is None and s is None for w, s in zip(waivers, suppressed, strict=True)],
    }
    details = {name: column(name, findings) for name in DETAIL_COLUMNS}
    details["waiver"] = _waivers(waivers)
    details["suppressed"] = suppressed
    return {
        "resource_index": encode_columns(resource_index),
        "fingerprints": encode_lines(result.fingerprints),
        "finding_index": encode_columns(finding_index),
        "finding_details": encode_columns(details),
    }


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
    """A waiver as the history stores it (its expiry as ISO 8601 UTC, None when it never
    expires)."""
    return {
        "rule": waiver.rule,
        "reason": waiver.reason,
        "owner": waiver.owner,
        "expires": iso(waiver.expires) if waiver.expires else None,
        "where": dict(waiver.where),
        "source": waiver.source,
    }
