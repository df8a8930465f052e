"""JSON report, schema version 3: stable keys, validated against `report-v3.schema.json`."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import Any, TextIO

from gpu_audit.core.canonical import to_mapping
from gpu_audit.core.comparison import FindingHistory
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import (
    Finding,
    NotEvaluated,
    ScanResult,
    ShardStamp,
    Waiver,
)
from gpu_audit.core.savings import Summary, summarize
from gpu_audit.policy.loader import BUILTIN_PACKS, builtin_pack_path
from gpu_audit.report.fastjson import flat as jsonflat
from gpu_audit.report.fastjson import resources as jsonresource
from gpu_audit.report.fastjson import stream as jsonstream
from gpu_audit.report.fastjson.resources import bounded
from gpu_audit.report.resource_index import ResourceIndex
from gpu_audit.report.since import finding_history, summary_block
from gpu_audit.report.sweeps import sweeps_data

SCHEMA_VERSION = 3


def render(result: ScanResult) -> str:
    """The JSON report (schema version 3) as text."""
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
    summary = summarize(result)
    scope = result.scope
    index = ResourceIndex(result.resources)  # a finding names its resource by its index
    findings = (
        _findings(result, index)
        if lazy
        else [_finding(*item, index(item[0].resource)) for item in _with_history(result)]
    )
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
            "policy_files": [_pack_name(path) for path in scope.policy_files],
            "policy_versions": list(scope.policy_versions),
            **({"shard": _shard(scope.shard)} if scope.shard else {}),
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
        "findings": findings,
        "resources": jsonresource.texts(index.all())  # after the findings: any they added
        if lazy
        else [bounded(to_mapping(r)) for r in index.all()],
        "not_evaluated": _not_evaluated(result)
        if lazy
        else [_missing(n) for n in result.not_evaluated],
        "skipped": [
            {"path": s.path, "reason": s.reason, "error": s.error, "line": s.line}
            for s in result.skipped
        ],
        "coverage_gaps": [asdict(g) for g in result.coverage_gaps],
        "waivers": [
            {**_waiver(w.waiver), "state": w.state.value, "matched": w.matched}
            for w in result.waivers
        ],
        "summary": _summary(summary, summary_block(result.since, summary.jobs)),
        **({"sweeps": sweeps_data(result.sweeps)} if result.sweeps else {}),
    }


def _summary(summary: Summary, since: dict[str, Any] | None) -> dict[str, Any]:
    """The `summary` object. A check of job files speaks of jobs: its spend and savings are per
    hour and per run, and its monthly figures are null (files run nothing; a key is never
    dropped within version 3). A scan's summary has no job figures beyond its per-run savings."""
    monthly = not summary.jobs
    return {
        "resources": summary.resources,
        "findings": summary.findings_open,
        "waived": summary.findings_waived,
        "suppressed": summary.findings_suppressed,
        "by_severity": summary.by_severity,
        "by_rule": summary.by_rule,
        "not_evaluated": summary.not_evaluated,
        "monthly_cost_usd": summary.monthly_cost_usd if monthly else None,
        "unpriced_resources": summary.unpriced_resources,
        "monthly_savings_usd": summary.monthly_savings_usd if monthly else None,
        **(
            {}
            if monthly
            else {
                "hourly_cost_usd": summary.hourly_cost_usd,
                "run_cost_usd": summary.run_cost_usd,
                "jobs_with_run_cost": summary.jobs_with_run_cost,
                "hourly_savings_usd": summary.hourly_savings_usd,
                "jobs_with_hourly_savings": summary.jobs_with_hourly_savings,
            }
        ),
        "run_savings_usd": summary.run_savings_usd,
        "jobs_with_run_savings": summary.jobs_with_run_savings,
        "coverage_gaps": summary.coverage_gaps,
        "skipped": summary.skipped,
        "input_errors": summary.input_errors,
        "since": since,
    }


def _shard(stamp: ShardStamp) -> dict[str, Any]:
    """The JSON report's `scope.shard` object."""
    return {
        "index": stamp.index,
        "count": stamp.count,
        "run_id": stamp.run_id,
        "universe_digest": stamp.universe_digest,
        "universe": list(stamp.universe),
        "policy_digest": stamp.policy_digest,
        "price_basis": stamp.price_basis,
        **({"held": list(stamp.held)} if stamp.held is not None else {}),
    }


def _pack_name(path: str) -> str:
    """The shipped pack by its name (`runbook`, as `extends:` writes it), never the absolute
    path of this machine's installation; a policy file of the user's as given."""
    named = {builtin_pack_path(pack): pack for pack in BUILTIN_PACKS}
    return named.get(path, path)


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
    finding: Finding,
    fingerprint: str | None = None,
    change: FindingHistory | None = None,
    resource_index: int = 0,
) -> dict[str, Any]:
    resource = finding.resource
    path = resource.source.path
    return {
        "rule_id": finding.rule_id,
        "severity": finding.severity.label,
        "title": finding.title,
        "message": finding.message,
        "resource": resource_index,
        "line": None if path is None else finding.line,
        "location": resource.location if path is None else f"{path}:{finding.line}",
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


def _findings(result: ScanResult, index: ResourceIndex) -> Iterator[jsonstream.Raw]:
    """The `findings` array's items as `jsonstream` writes `_finding` (a test holds the two to
    the same text), without building them: a 100k-resource report has about 200k findings."""
    templates = jsonflat.Templates(_PAD, kept=_RULE_KEYS)  # by source, waiver and rule
    last: Resource | None = None
    at = 0  # the resource's index
    where = ""  # its location

    def fast(
        item: tuple[Finding, str | None, FindingHistory | None], out: list[Any]
    ) -> jsonflat.Template | None:
        nonlocal last, at, where
        finding, fingerprint, change = item
        resource = finding.resource
        if resource is not last:
            last, at, where = resource, index(resource), resource.location
        path = resource.source.path
        waiver = finding.waiver
        values = [finding.message, at]
        if path is None:
            values += (None, where)
        else:
            values += (finding.line, f"{path}:{finding.line}")
        field, unit, suppressed = finding.field, finding.saving_unit, finding.suppressed
        values += (
            finding.expected,
            finding.actual,
            _at_least_0(finding.monthly_savings_usd),
            _at_least_0(finding.saving_usd),
        )
        if waiver is not None:
            values += _waiver(waiver).values()
        if suppressed is not None:
            values.append(suppressed)
        values.append(fingerprint)
        if change is not None:
            values += finding_history(change).values()
        # What a rule's findings share is in the template: rule texts, field and saving unit,
        # and the nulls of no waiver, no suppression and no history.
        flags = (waiver is None, suppressed is None, change is None)
        shape = (
            *flags,
            field,
            unit,
            finding.rule_id,
            finding.severity,
            finding.title,
            finding.remediation,
        )
        kept = _KEPT[flags]
        template = templates.get(shape, lambda: _finding(*item, at), values, kept)
        if template is not None:
            out += values
        return template

    def slow(item: tuple[Finding, str | None, FindingHistory | None]) -> str:
        return _text(_finding(*item, index(item[0].resource)))

    return jsonflat.items(_with_history(result), _PAD, fast, slow)


def _not_evaluated(result: ScanResult) -> Iterator[jsonstream.Raw]:
    templates = jsonflat.Templates(_PAD)
    last: Resource | None = None
    where = ""  # its location: a resource's items are consecutive, ~1.5 each at 100k

    def fast(item: NotEvaluated, out: list[Any]) -> jsonflat.Template | None:
        nonlocal last, where
        resource = item.resource
        if resource is not last:
            last, where = resource, resource.location
        values = [resource.id, where]
        shape = (item.rule_id, resource.provider, item.missing)  # texts; held in the template
        template = templates.get(shape, lambda: _missing(item), values, _MISSING_KEPT)
        if template is not None:
            out += values
        return template

    return jsonflat.items(result.not_evaluated, _PAD, fast, lambda item: _text(_missing(item)))


def _missing(item: NotEvaluated) -> dict[str, Any]:
    return {
        "rule_id": item.rule_id,
        "resource_id": item.resource.id,
        "provider": item.resource.provider,
        "location": item.resource.location,
        "missing": item.missing,
    }


_MISSING_KEPT = ("rule_id", "provider", "missing")
_PAD = "    "  # the depth of the items of `findings`, `resources` and `not_evaluated`
_RULE_KEYS = frozenset(("rule_id", "severity", "title", "remediation"))
_KEPT = {  # by (no waiver, no suppression, no history): the keys whose values a template holds
    (no_waiver, no_suppression, no_history): frozenset(
        ("field", "saving_unit")
        + ("waiver",) * no_waiver
        + ("suppressed",) * no_suppression
        + tuple(finding_history(None)) * no_history
    )
    for no_waiver in (False, True)
    for no_suppression in (False, True)
    for no_history in (False, True)
}


def _text(item: dict[str, Any]) -> str:
    return jsonstream.text(item, _PAD)


def _at_least_0(value: float | None) -> float | None:
    return value if value is None or value >= 0 else None
