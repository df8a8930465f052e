"""A recorded audit back as a ScanResult, so `history show` renders it in any format."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

from gpu_audit.core.resource import Kind, Severity
from gpu_audit.core.results import (
    CoverageGap,
    Finding,
    NotEvaluated,
    RuleInfo,
    ScanResult,
    Skipped,
    Waiver,
    WaiverState,
    WaiverStatus,
)
from gpu_audit.errors import InputError
from gpu_audit.history.compare import compare
from gpu_audit.history.damage import decoding
from gpu_audit.history.documents import decode_columns, decode_lines, unpack, unpack_checks
from gpu_audit.history.store import HistoryStore, _scope, parse_iso


def load_audit(store: HistoryStore, audit_id: int) -> ScanResult:
    """The audit `audit_id` as it was judged, compared again with the audit before it."""
    with store.errors():
        row = store.conn.execute(
            "SELECT generated_at, scope, rules, coverage_gaps, skipped, waivers, "
            "resource_documents FROM audits WHERE id = ?",
            (audit_id,),
        ).fetchone()
        if row is None:
            raise InputError(f"{store.path}: history: no audit with id {audit_id}")
        blobs = dict(
            store.conn.execute("SELECT name, body FROM documents WHERE audit_id = ?", (audit_id,))
        )
    with decoding(store.path, audit_id):
        return _decoded(store, row, blobs)


def _decoded(store: HistoryStore, row: Any, blobs: dict[str, bytes]) -> ScanResult:
    resources = unpack(row[6])
    rules = {r["id"]: _rule(r) for r in json.loads(row[2])}
    index = decode_columns(blobs["finding_index"])
    details = decode_columns(blobs["finding_details"])
    waivers: dict[str, Waiver] = {}
    findings = []
    monthly = index["monthly_savings_usd"]
    amounts, units = _own_savings(details, monthly)
    for rule_id, sev, rseq, saving, fld, exp, act, line, waiver, supp, amount, unit in zip(
        index["rule_id"],
        index["severity"],
        index["resource"],
        monthly,
        details["field"],
        details["expected"],
        details["actual"],
        details["line"],
        details["waiver"],
        details["suppressed"],
        amounts,
        units,
        strict=True,
    ):
        rule = rules.get(rule_id)
        title, remedy = (rule.title, rule.remediation) if rule else (rule_id, None)
        findings.append(
            Finding(
                rule_id=rule_id,
                severity=Severity(sev),
                title=title,
                resource=resources[rseq],
                field=fld,
                expected=exp,
                actual=act,
                line=line,
                monthly_savings_usd=saving,
                remediation=remedy,
                waiver=_waiver(waivers, waiver),
                suppressed=supp,
                saving_usd=amount,
                saving_unit=unit,
            )
        )
    not_evaluated = tuple(
        NotEvaluated(rule_id=rule, resource=resources[rseq], missing=missing)
        for rule, rseq, missing in unpack_checks(blobs["not_evaluated"])
    )
    generated_at, scope, _, gaps, skipped, statuses, _ = row
    result = ScanResult(
        generated_at=parse_iso(generated_at),
        scope=_scope(scope),
        rules=tuple(rules.values()),
        resources=tuple(resources),
        findings=tuple(findings),
        not_evaluated=not_evaluated,
        skipped=tuple(Skipped(**s) for s in json.loads(skipped)),
        coverage_gaps=tuple(CoverageGap(**g) for g in json.loads(gaps)),
        waivers=tuple(_status(s) for s in json.loads(statuses)),
        fingerprints=tuple(decode_lines(blobs["fingerprints"])),
    )
    since = compare(result, store.previous(result), f"history {store.path}")
    return replace(result, since=since)


def _own_savings(
    details: dict[str, list[Any]], monthly: list[float | None]
) -> tuple[list[Any], list[Any]]:
    """Each finding's saving in its own unit. Audits recorded before the unit was kept held
    only the monthly saving (a job's per-run saving was lost): that one, per month."""
    if "saving_unit" in details:
        return details["saving_usd"], details["saving_unit"]
    return monthly, [None if amount is None else "month" for amount in monthly]


def _rule(raw: dict[str, Any]) -> RuleInfo:
    raw = {**raw, "severity": Severity(raw["severity"])}
    raw["targets"] = tuple(Kind(t) for t in raw["targets"])
    raw["aliases"] = tuple(raw.get("aliases") or ())
    return RuleInfo(**raw)


def _make_waiver(raw: dict[str, Any]) -> Waiver:
    expires: datetime | None = parse_iso(raw["expires"]) if raw.get("expires") else None
    return Waiver(
        rule=raw["rule"],
        reason=raw["reason"],
        owner=raw["owner"],
        expires=expires,
        where=raw["where"],
        source=raw["source"],
    )


def _waiver(cache: dict[str, Waiver], text: str | None) -> Waiver | None:
    if text is None:
        return None
    held = cache.get(text)
    if held is None:
        held = cache[text] = _make_waiver(json.loads(text))
    return held


def _status(raw: dict[str, Any]) -> WaiverStatus:
    return WaiverStatus(
        waiver=_make_waiver(raw), state=WaiverState(raw["state"]), matched=raw["matched"]
    )
