"""JSON report, schema version 1: stable keys, validated against `report-v1.schema.json`."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from gpu_audit import __version__
from gpu_audit.canonical import to_mapping
from gpu_audit.model import Finding, ScanResult, Waiver
from gpu_audit.report.since import finding_history, summary_block
from gpu_audit.report.summary import summarize

SCHEMA_VERSION = 1


def render(result: ScanResult) -> str:
    return json.dumps(document(result), indent=2, ensure_ascii=False) + "\n"


def document(result: ScanResult) -> dict[str, Any]:
    summary = summarize(result)
    scope = result.scope
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "gpu-audit", "version": __version__},
        "generated_at": _iso(result.generated_at),
        "partial": result.partial,
        "scope": {
            "command": scope.command,
            "providers": list(scope.providers),
            "accounts": list(scope.accounts),
            "regions": list(scope.regions),
            "files": list(scope.files),
            "policy_files": list(scope.policy_files),
            "policy_versions": list(scope.policy_versions),
        },
        "rules": [
            {
                "id": rule.id,
                "title": rule.title,
                "severity": rule.severity.label,
                "targets": [t.value for t in rule.targets],
                "savings": rule.savings,
                "remediation": rule.remediation,
            }
            for rule in result.rules
        ],
        "findings": [
            {**_finding(f), "fingerprint": fingerprint, **finding_history(change)}
            for f, fingerprint, change in zip(
                result.findings, _fill(result.fingerprints, result), _changes(result), strict=True
            )
        ],
        "resources": [to_mapping(r) for r in result.resources],
        "not_evaluated": [
            {
                "rule_id": n.rule_id,
                "resource_id": n.resource.id,
                "provider": n.resource.provider,
                "location": n.resource.location,
                "missing": n.missing,
            }
            for n in result.not_evaluated
        ],
        "skipped": [
            {"path": s.path, "reason": s.reason, "error": s.error, "line": s.line}
            for s in result.skipped
        ],
        "coverage_gaps": [asdict(g) for g in result.coverage_gaps],
        "waivers": [
            {**_waiver(w.waiver), "state": w.state.value, "matched": w.matched}
            for w in result.waivers
        ],
        "summary": {
            "resources": summary.resources,
            "findings": summary.findings_open,
            "waived": summary.findings_waived,
            "suppressed": summary.findings_suppressed,
            "by_severity": summary.by_severity,
            "by_rule": summary.by_rule,
            "not_evaluated": summary.not_evaluated,
            "monthly_cost_usd": summary.monthly_cost_usd,
            "unpriced_resources": summary.unpriced_resources,
            "monthly_savings_usd": summary.monthly_savings_usd,
            "coverage_gaps": summary.coverage_gaps,
            "skipped": summary.skipped,
            "input_errors": summary.input_errors,
            "since": summary_block(result.since),
        },
    }


def _iso(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def _waiver(waiver: Waiver) -> dict[str, Any]:
    return {
        "rule": waiver.rule,
        "reason": waiver.reason,
        "owner": waiver.owner,
        "expires": _iso(waiver.expires),
        "source": waiver.source,
    }


def _fill(values: tuple[Any, ...], result: ScanResult) -> tuple[Any, ...]:
    return values or (None,) * len(result.findings)


def _changes(result: ScanResult) -> tuple[Any, ...]:
    return result.since.changes if result.since else (None,) * len(result.findings)


def _finding(finding: Finding) -> dict[str, Any]:
    resource = finding.resource
    source = None
    if resource.source.path is not None:
        source = {"path": resource.source.path, "line": finding.line}
    return {
        "rule_id": finding.rule_id,
        "severity": finding.severity.label,
        "title": finding.title,
        "message": finding.message,
        "resource": {
            "id": resource.id,
            "name": resource.name,
            "kind": resource.kind.value,
            "provider": resource.provider,
            "account": resource.account,
            "region": resource.region,
            "instance_type": resource.instance_type,
            "gpu": {
                "model": resource.gpu.model,
                "count": resource.gpu.count,
                "memory_gib": resource.gpu.memory_gib,
            },
            "source": source,
        },
        "location": resource.location if source is None else f"{source['path']}:{finding.line}",
        "field": finding.field,
        "expected": finding.expected,
        "actual": finding.actual,
        "monthly_savings_usd": finding.monthly_savings_usd,
        "waiver": _waiver(finding.waiver) if finding.waiver else None,
        "suppressed": finding.suppressed,
        "remediation": finding.remediation,
    }
