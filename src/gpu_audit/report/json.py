"""JSON report, schema version 2: stable keys, validated against `report-v2.schema.json`."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any, TextIO

from gpu_audit.canonical import to_mapping
from gpu_audit.fields import FIELDS
from gpu_audit.model import Finding, FindingHistory, ScanResult, Waiver
from gpu_audit.report import jsonstream
from gpu_audit.report.since import finding_history, summary_block
from gpu_audit.report.summary import summarize

SCHEMA_VERSION = 2


def render(result: ScanResult) -> str:
    buffer = io.StringIO()
    write(result, buffer)
    return buffer.getvalue()


def write(result: ScanResult, stream: TextIO) -> None:
    """The report to `stream`; findings and resources are encoded one at a time as written."""
    jsonstream.dump(_document(result, lazy=True), stream)


def document(result: ScanResult) -> dict[str, Any]:
    """The report as plain data (what `write` writes, non-finite numbers aside)."""
    return _document(result, lazy=False)


def _document(result: ScanResult, lazy: bool) -> dict[str, Any]:
    each: Callable[[Iterable[Any]], Iterable[Any]] = iter if lazy else list
    summary = summarize(result)
    scope = result.scope
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "gpu-audit", "version": result.tool_version},
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
        "findings": (_finding_text(*item) for item in _with_history(result))
        if lazy
        else [_finding(*item) for item in _with_history(result)],
        "resources": each(_bounded(to_mapping(r)) for r in result.resources),
        "not_evaluated": each(
            {
                "rule_id": n.rule_id,
                "resource_id": n.resource.id,
                "provider": n.resource.provider,
                "location": n.resource.location,
                "missing": n.missing,
            }
            for n in result.not_evaluated
        ),
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
            "run_savings_usd": summary.run_savings_usd,
            "jobs_with_run_savings": summary.jobs_with_run_savings,
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


def _with_history(result: ScanResult) -> Iterable[tuple[Finding, str | None, Any]]:
    """Each finding with its fingerprint and its change since the last audit (or None)."""
    count = len(result.findings)
    changes = result.since.changes if result.since else (None,) * count
    return zip(result.findings, result.fingerprints or (None,) * count, changes, strict=True)


def _finding(
    finding: Finding, fingerprint: str | None = None, change: FindingHistory | None = None
) -> dict[str, Any]:
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
                "count": _at_least_0(resource.gpu.count),
                "memory_gib": _at_least_0(resource.gpu.memory_gib),
            },
            "source": source,
        },
        "location": resource.location if source is None else f"{source['path']}:{finding.line}",
        "field": finding.field,
        "expected": finding.expected,
        "actual": finding.actual,
        "monthly_savings_usd": _at_least_0(finding.monthly_savings_usd),
        "saving_usd": _at_least_0(finding.saving_usd),
        "saving_unit": finding.saving_unit,
        "waiver": _waiver(finding.waiver) if finding.waiver else None,
        "suppressed": finding.suppressed,
        "remediation": finding.remediation,
        "fingerprint": fingerprint,
        **finding_history(change),
    }


_S = jsonstream.scalar


def _finding_text(
    finding: Finding, fingerprint: str | None = None, change: FindingHistory | None = None
) -> jsonstream.Raw:
    """`_finding` encoded as it sits in the report's `findings` array, without building it: a
    report of 100k resources has about 200k findings (a test holds the two to the same text)."""
    resource = finding.resource
    gpu = resource.gpu
    path = resource.source.path
    if path is None:
        source, location = "null", resource.location
    else:
        source = f'{{\n{_P3}"path": {_S(path)},\n{_P3}"line": {_S(finding.line)}\n{_P2}}}'
        location = f"{path}:{finding.line}"
    waiver = "null" if not finding.waiver else jsonstream.text(_waiver(finding.waiver), _P1)
    history = finding_history(change)
    return jsonstream.Raw(
        f'{{\n{_P1}"rule_id": {_S(finding.rule_id)},'
        f'\n{_P1}"severity": {_S(finding.severity.label)},'
        f'\n{_P1}"title": {_S(finding.title)},\n{_P1}"message": {_S(finding.message)},'
        f'\n{_P1}"resource": {{\n{_P2}"id": {_S(resource.id)},\n{_P2}"name": {_S(resource.name)},'
        f'\n{_P2}"kind": {_S(resource.kind.value)},\n{_P2}"provider": {_S(resource.provider)},'
        f'\n{_P2}"account": {_S(resource.account)},\n{_P2}"region": {_S(resource.region)},'
        f'\n{_P2}"instance_type": {_S(resource.instance_type)},\n{_P2}"gpu": {{'
        f'\n{_P3}"model": {_S(gpu.model)},\n{_P3}"count": {_S(_at_least_0(gpu.count))},'
        f'\n{_P3}"memory_gib": {_S(_at_least_0(gpu.memory_gib))}\n{_P2}}},'
        f'\n{_P2}"source": {source}\n{_P1}}},\n{_P1}"location": {_S(location)},'
        f'\n{_P1}"field": {_S(finding.field)},\n{_P1}"expected": {_S(finding.expected)},'
        f'\n{_P1}"actual": {_S(finding.actual)},'
        f'\n{_P1}"monthly_savings_usd": {_S(_at_least_0(finding.monthly_savings_usd))},'
        f'\n{_P1}"saving_usd": {_S(_at_least_0(finding.saving_usd))},'
        f'\n{_P1}"saving_unit": {_S(finding.saving_unit)},'
        f'\n{_P1}"waiver": {waiver},\n{_P1}"suppressed": {_S(finding.suppressed)},'
        f'\n{_P1}"remediation": {_S(finding.remediation)},'
        f'\n{_P1}"fingerprint": {_S(fingerprint)},\n{_P1}"change": {_S(history["change"])},'
        f'\n{_P1}"first_seen": {_S(history["first_seen"])},'
        f'\n{_P1}"audits_open": {_S(history["audits_open"])}\n{_P0}}}'
    )


_P0, _P1, _P2, _P3 = (" " * n for n in (4, 6, 8, 10))  # depths inside `findings`


# (section or None, key, minimum, maximum) of every bounded number in the resource mapping
_BOUNDS = tuple(
    (spec.group, spec.key, spec.minimum, spec.maximum)
    for spec in FIELDS.values()
    if spec.minimum is not None or spec.maximum is not None
)


def _bounded(mapping: dict[str, Any]) -> dict[str, Any]:
    """The mapping with numbers outside their field's bounds as null, so the document always
    validates (the input edge refuses such values; a report never carries one)."""
    for group, key, low, high in _BOUNDS:
        holder = mapping[group] if group else mapping
        value = holder.get(key)
        if value is not None and not (
            (low is None or value >= low) and (high is None or value <= high)
        ):
            holder[key] = None
    return mapping


def _at_least_0(value: float | None) -> float | None:
    return value if value is None or value >= 0 else None
