"""A saved JSON report as the previous audit: the same comparison without a database."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gpu_audit.core.comparison import TrendPoint
from gpu_audit.core.resource import Severity
from gpu_audit.core.yamlsrc import MAX_DATA_BYTES, load_json, read_text
from gpu_audit.errors import InputError
from gpu_audit.history.compare import PastFinding, PastResource, Previous
from gpu_audit.history.store import parse_iso


def load_baseline(path: str) -> Previous:
    """The previous audit from a gpu-audit JSON report (`--format json`)."""
    text = read_text(path, limit=MAX_DATA_BYTES)  # a fleet's report: as large as the fleet
    try:  # the shared strict reader: huge integers, NaN, depth and bad escapes are located
        document = load_json(path, text)
    except InputError as exc:
        raise InputError(f"{exc} (baseline)") from None
    tool = document.get("tool") if isinstance(document, dict) else None
    if not isinstance(tool, dict) or tool.get("name") != "gpu-audit":
        raise InputError(f"{path}:1: baseline: not a gpu-audit JSON report")
    try:
        return _previous(document)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"{path}: baseline: not a gpu-audit JSON report ({exc!r} missing or bad)"
        ) from None


def _resource(named: Any, listed: list[Any]) -> Mapping[str, Any]:
    """A finding's resource: its summary (version 2) or its index in `resources` (version 3)."""
    if isinstance(named, Mapping):
        return named
    if type(named) is not int or not 0 <= named < len(listed):
        raise ValueError(f"findings[].resource: {named!r} is not an index of resources")
    found: Mapping[str, Any] = listed[named]
    return found


def _previous(document: Mapping[str, Any]) -> Previous:
    generated_at = parse_iso(document["generated_at"])
    seen: dict[str, int] = {}
    first: list[str] = []
    audits: list[int] = []
    open_findings: dict[int, PastFinding] = {}
    titles = {}
    listed = document["resources"]
    for index, raw in enumerate(document["findings"]):
        fingerprint = raw.get("fingerprint")
        if not fingerprint:
            raise ValueError("findings[].fingerprint")
        first_seen = raw.get("first_seen") or document["generated_at"]
        seen[fingerprint] = index
        first.append(first_seen)
        audits.append(raw.get("audits_open") or 1)
        titles[raw["rule_id"]] = raw["title"]
        if raw.get("waiver") is not None or raw.get("suppressed") is not None:
            continue
        resource = _resource(raw["resource"], listed)
        open_findings[index] = PastFinding(
            fingerprint=fingerprint,
            rule_id=raw["rule_id"],
            severity=int(Severity.parse(raw["severity"])),
            resource_key=f"{resource['provider']}:{resource['id']}",
            resource_id=resource["id"],
            provider=resource["provider"],
            account=resource.get("account"),
            region=resource.get("region"),
            location=raw["location"],
            monthly_savings_usd=raw.get("monthly_savings_usd"),
            first_seen=first_seen,
        )
    resources = [
        PastResource(
            f"{raw['provider']}:{raw['id']}",
            raw["id"],
            raw["provider"],
            raw.get("account"),
            raw.get("region"),
            "/".join(
                [raw["provider"], raw.get("account") or "-", raw.get("region") or "-", raw["id"]]
            ),
            raw.get("monthly_cost_usd"),
        )
        for raw in document["resources"]
        if raw.get("kind") != "job"  # a job is not running capacity: a deleted file is not removed
    ]
    summary = document["summary"]
    cost, savings = summary["monthly_cost_usd"], summary["monthly_savings_usd"]
    if cost is None and savings is None:  # a check of job files: its figures are not monthly
        cost, savings = _spend(document["resources"]), 0.0
    cost, savings = float(cost), float(savings)
    since = summary.get("since") or {}
    trend = tuple(  # a check's amounts are null: its comparison is of findings
        TrendPoint(
            parse_iso(p["generated_at"]),
            p["monthly_cost_usd"] or 0.0,
            p["monthly_savings_usd"] or 0.0,
            p["savings_realised_usd"] or 0.0,
            p["findings"],
        )
        for p in since.get("trend") or ()
    ) or (TrendPoint(generated_at, cost, savings, 0.0, int(summary["findings"])),)
    return Previous(
        generated_at,
        cost,
        savings,
        seen,
        first,
        audits,
        {r.key: index for index, r in enumerate(resources)},
        lambda rows: [open_findings[i] for i in rows if i in open_findings],
        lambda rows: [resources[i] for i in rows],
        trend,
        titles,
    )


def _spend(resources: list[Any]) -> float:
    """The monthly figure a comparison holds for a report whose summary has none (a `check`):
    its resources' monthly costs, pods left out, as `compare.spend` counts a result's."""
    costs = (r.get("monthly_cost_usd") for r in resources if r.get("kind") != "pod")
    return round(sum(c for c in costs if isinstance(c, int | float) and 0 <= c < math.inf), 2)
