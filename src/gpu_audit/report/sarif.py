"""SARIF 2.1.0 for code scanning: rules from the policies, one result per finding.

Job findings point at the offending key (`physicalLocation`, a URI relative to `%SRCROOT%`,
the working directory); instance findings name the resource (`logicalLocations`). Waived and
inline-suppressed findings stay in the log with a `suppressions` entry, as SARIF intends.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path, PurePath
from typing import Any, TextIO
from urllib.parse import quote

from gpu_audit.core.resource import Kind, Severity
from gpu_audit.core.results import Finding, RuleInfo, ScanResult
from gpu_audit.report.fastjson import flat as jsonflat
from gpu_audit.report.fastjson import stream as jsonstream
from gpu_audit.report.markdown_text import prose

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/gpu-audit/gpu-audit"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "gpuAuditFinding/v1"
_LEVELS = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}


def render(result: ScanResult) -> str:
    buffer = io.StringIO()
    write(result, buffer)
    return buffer.getvalue()


def write(result: ScanResult, stream: TextIO) -> None:
    """The log to `stream`, one result encoded at a time as it is written."""
    jsonstream.dump(log(result, Path.cwd(), lazy=True), stream)


def log(result: ScanResult, root: Path, lazy: bool = False) -> dict[str, Any]:
    """The SARIF log; job paths are made relative to `root` where they lie under it.

    With `lazy`, the results are a generator (for `jsonstream.dump`), not a list."""
    rules = list(result.rules)
    index = {rule.id: i for i, rule in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "gpu-audit",
                "fullName": f"gpu-audit {result.tool_version}",  # Azure DevOps requires it
                "version": result.tool_version,
                "semanticVersion": result.tool_version,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(rule) for rule in rules],
            }
        },
        # `category/run`: GitHub keys a run's alerts by the category (the part before the last
        # `/`), and Advanced Security for Azure DevOps rejects a run without an id
        "automationDetails": {"id": f"gpu-audit/{result.scope.command}/{_run_id(result)}"},
        "originalUriBaseIds": {
            SRCROOT: {"description": {"text": "The directory gpu-audit ran in."}}
        },
        "invocations": [_invocation(result, root)],
        "results": _results(result, index, root)
        if lazy
        else [
            _result(f, index.get(f.rule_id), root, fingerprint)
            for f, fingerprint in zip(result.findings, _fingerprints(result), strict=True)
        ],
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _run_id(result: ScanResult) -> str:
    return result.generated_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rule(rule: RuleInfo) -> dict[str, Any]:
    help_text = rule.remediation or rule.title
    tags = ["gpu", "cost", *(f"target:{t.value}" for t in rule.targets)]
    if rule.savings:
        tags.append(f"savings:{rule.savings}")
    out: dict[str, Any] = {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.description or rule.title},
        "help": {"text": help_text, "markdown": prose(help_text)},
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"severity": rule.severity.label, "tags": tags},
    }
    # each alias once (a policy may repeat one; SARIF wants the ids unique), never the id itself
    aliases = list(dict.fromkeys(a for a in rule.aliases if a != rule.id))
    if aliases:
        out["deprecatedIds"] = aliases
    return out


def _fingerprints(result: ScanResult) -> tuple[str, ...]:
    """The findings' fingerprints (docs/history.md): the audit's, or worked out here for a
    result built by hand."""
    if result.fingerprints:
        return result.fingerprints
    from gpu_audit.core.fingerprint import fingerprints

    return fingerprints(result.findings)


_PAD = "        "  # the depth of the items of `runs[0].results`
_RULE_KEYS = frozenset(("ruleId", "level", "ruleIndex"))


def _results(result: ScanResult, index: dict[str, int], root: Path) -> Iterator[jsonstream.Raw]:
    """The `results` array's items as `jsonstream` writes `_result` (a test holds the two to the
    same text), encoded in batches: a finding on a job, waived or suppressed inline takes the
    plain path; the others (all of a 100k-instance scan's) fill a template per rule."""
    templates = jsonflat.Templates(_PAD, kept=_RULE_KEYS)  # by rule

    def fast(item: tuple[Finding, str], out: list[Any]) -> jsonflat.Template | None:
        finding, fingerprint = item
        resource = finding.resource
        if finding.waiver is not None or finding.suppressed is not None:
            return None
        if resource.kind is Kind.JOB and resource.source.path:
            return None
        rule_id, severity = finding.rule_id, finding.severity
        rule_index = index.get(rule_id)
        gpu = resource.gpu
        values = [
            finding.message,
            resource.id,
            resource.location,
            "resource",
            fingerprint,
            _LABELS[severity],
            finding.field,
            finding.expected,
            finding.actual,
            finding.monthly_savings_usd,
            finding.saving_usd,
            finding.saving_unit,
            resource.monthly_cost_usd,
            resource.instance_type,
            gpu.model,
            gpu.count,
        ]
        template = templates.get(
            (rule_id, severity, rule_index),
            lambda: _result(finding, rule_index, root, fingerprint),
            values,
        )
        if template is not None:
            out += values
        return template

    def slow(item: tuple[Finding, str]) -> str:
        finding, fingerprint = item
        return jsonstream.text(
            _result(finding, index.get(finding.rule_id), root, fingerprint), _PAD
        )

    findings = zip(result.findings, _fingerprints(result), strict=True)
    return jsonflat.items(findings, _PAD, fast, slow)


_LABELS = {severity: severity.label for severity in Severity}


def _result(
    finding: Finding, rule_index: int | None, root: Path, fingerprint: str
) -> dict[str, Any]:
    resource = finding.resource
    field = finding.field  # worked out on demand from the requirement: ask once
    out: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "level": _LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [_location(finding, root)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        "properties": {
            "severity": finding.severity.label,
            "field": field,
            "expected": finding.expected,
            "actual": finding.actual,
            "monthlySavingsUsd": finding.monthly_savings_usd,
            "savingUsd": finding.saving_usd,
            "savingUnit": finding.saving_unit,
            "monthlyCostUsd": resource.monthly_cost_usd,
            "instanceType": resource.instance_type,
            "gpu": {"model": resource.gpu.model, "count": resource.gpu.count},
        },
    }
    if rule_index is not None:
        out["ruleIndex"] = rule_index
    suppressions = _suppressions(finding)
    if suppressions:
        out["suppressions"] = suppressions
    return out


def _location(finding: Finding, root: Path) -> dict[str, Any]:
    resource = finding.resource
    if resource.kind is Kind.JOB and resource.source.path:
        physical: dict[str, Any] = {"artifactLocation": artifact(resource.source.path, root)}
        line = finding.line or resource.source.line
        if line and line >= 1:
            physical["region"] = {"startLine": line}
        logical = {"name": resource.name or resource.id, "kind": "object"}
        logical["fullyQualifiedName"] = f"{resource.provider}/{logical['name']}"
        return {"physicalLocation": physical, "logicalLocations": [logical]}
    return {
        "logicalLocations": [
            {"name": resource.id, "fullyQualifiedName": resource.location, "kind": "resource"}
        ]
    }


def artifact(path: str, root: Path) -> dict[str, Any]:
    """A relative `%SRCROOT%` URI for paths under `root`, an absolute file URI for others."""
    pure = Path(path)
    if not pure.is_absolute():
        return {"uri": _uri(PurePath(os.path.normpath(path))), "uriBaseId": SRCROOT}
    try:
        return {"uri": _uri(pure.relative_to(root)), "uriBaseId": SRCROOT}
    except ValueError:
        return {"uri": pure.as_uri()}


def _uri(path: PurePath) -> str:
    return quote(path.as_posix(), safe="/")


def _invocation(result: ScanResult, root: Path) -> dict[str, Any]:
    """Inputs that were skipped and clouds that were not read, as tool notifications."""
    notes: list[dict[str, Any]] = []
    for skipped in result.skipped:
        physical: dict[str, Any] = {"artifactLocation": artifact(skipped.path, root)}
        if skipped.line and skipped.line >= 1:
            physical["region"] = {"startLine": skipped.line}
        notes.append(
            {
                "level": "error" if skipped.error else "note",
                "message": {"text": skipped.reason},
                "locations": [{"physicalLocation": physical}],
            }
        )
    for gap in result.coverage_gaps:
        notes.append(
            {
                "level": "error",
                "message": {"text": f"{gap.provider} {gap.scope}: {gap.error}: {gap.message}"},
            }
        )
    return {
        "executionSuccessful": not result.input_errors and not result.partial,
        "toolExecutionNotifications": notes,
    }


def _suppressions(finding: Finding) -> list[dict[str, Any]]:
    if finding.waiver is not None:
        waiver = finding.waiver
        expires = f", expires {waiver.expires:%Y-%m-%d}" if waiver.expires else ""
        return [
            {
                "kind": "external",
                "status": "accepted",
                "justification": f"{waiver.reason} (owner {waiver.owner}{expires})",
                "properties": {"owner": waiver.owner, "source": waiver.source},
            }
        ]
    if finding.suppressed is not None:
        return [{"kind": "inSource", "status": "accepted", "justification": finding.suppressed}]
    return []
