"""SARIF 2.1.0 for code scanning: rules from the policies, one result per finding.

Job findings point at the offending key (`physicalLocation`, a URI relative to `%SRCROOT%`,
the working directory; the file's first line when no key is to blame); instance findings name the
resource (`logicalLocations`) and point at the rule they break, in its policy file, for code
scanning wants a file and a line for every result (Microsoft's SARIF Multitool rules GH1001,
GH1003 and GHAzDO1016/1017). Waived and inline-suppressed findings stay in the log with a
`suppressions` entry, as SARIF intends. In an Azure Pipelines run the log carries the pipeline's
identity (`report.pipeline`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from datetime import UTC
from pathlib import Path, PurePath
from typing import Any, TextIO
from urllib.parse import quote

from gpu_audit.core.fingerprint import fingerprints
from gpu_audit.core.resource import Kind, Severity
from gpu_audit.core.results import Finding, RuleInfo, ScanResult
from gpu_audit.core.stamps import stamp
from gpu_audit.report.fastjson import flat as jsonflat
from gpu_audit.report.fastjson import stream as jsonstream
from gpu_audit.report.markdown_text import prose
from gpu_audit.report.pipeline import detect

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
    """The SARIF log as text."""
    buffer = io.StringIO()
    write(result, buffer)
    return buffer.getvalue()


def write(result: ScanResult, stream: TextIO) -> None:
    """The log to `stream`, one result encoded at a time as it is written."""
    jsonstream.dump(log(result, Path.cwd(), lazy=True), stream)


def log(
    result: ScanResult,
    root: Path,
    lazy: bool = False,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The SARIF log; job paths are made relative to `root` where they lie under it; `environ`
    (default: this process's) tells whether it runs in an Azure Pipeline.

    With `lazy`, the results are a generator (for `jsonstream.dump`), not a list."""
    rules = list(result.rules)
    index = {rule.id: i for i, rule in enumerate(rules)}
    bases: dict[str, Any] = {SRCROOT: {"description": {"text": "The directory gpu-audit ran in."}}}
    places = _rule_places(rules, root, bases)
    category = f"gpu-audit/{result.scope.command}"
    pipeline = detect(os.environ if environ is None else environ)
    # `category/run`: GitHub keys a run's alerts by the category (the part before the last `/`);
    # Advanced Security for Azure DevOps wants the pipeline's id, and rejects a run without one
    automation = (
        pipeline.automation_details(category)
        if pipeline
        else {"id": f"{category}/{_run_id(result)}"}
    )
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
        "automationDetails": automation,
        "originalUriBaseIds": bases,
        "invocations": [_invocation(result, root)],
        "results": _results(result, index, root, places)
        if lazy
        else [
            _result(f, index.get(f.rule_id), root, fingerprint, places.get(f.rule_id))
            for f, fingerprint in zip(result.findings, _fingerprints(result), strict=True)
        ],
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule_places(
    rules: list[RuleInfo], root: Path, bases: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Each rule's `physicalLocation`: its line in its policy file. A policy file under `root` is
    a `%SRCROOT%` URI; one elsewhere (the shipped pack, installed) is named relative to its own
    folder, which `bases` gains as a base id: code scanning refuses an absolute path outside the
    checkout (GH1006)."""
    places: dict[str, dict[str, Any]] = {}
    folders: dict[str, str] = {}
    for rule in rules:
        path, colon, line = (rule.source or "").rpartition(":")
        if not (colon and path and line.isdigit() and int(line) >= 1):
            continue
        location = artifact(path, root)
        if "uriBaseId" not in location:
            folder = Path(path).resolve().parent
            base = folders.setdefault(str(folder), f"POLICIES{len(folders) + 1}")
            description = "The folder of a policy file outside the directory gpu-audit ran in."
            bases[base] = {"uri": folder.as_uri() + "/", "description": {"text": description}}
            location = {"uri": _uri(PurePath(Path(path).name)), "uriBaseId": base}
        places[rule.id] = {"artifactLocation": location, "region": {"startLine": int(line)}}
    return places


def _run_id(result: ScanResult) -> str:
    return stamp(result.generated_at.astimezone(UTC))


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

    return fingerprints(result.findings)


_PAD = "        "  # the depth of the items of `runs[0].results`
_RULE_KEYS = frozenset(("ruleId", "level", "ruleIndex"))


def _results(
    result: ScanResult,
    index: dict[str, int],
    root: Path,
    places: dict[str, dict[str, Any]],
) -> Iterator[jsonstream.Raw]:
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
        place = places.get(rule_id)
        gpu = resource.gpu
        values = [
            finding.message,
            *(_place_values(place) if place else ()),
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
            lambda: _result(finding, rule_index, root, fingerprint, place),
            values,
        )
        if template is not None:
            out += values
        return template

    def slow(item: tuple[Finding, str]) -> str:
        finding, fingerprint = item
        rule_id = finding.rule_id
        text = _result(finding, index.get(rule_id), root, fingerprint, places.get(rule_id))
        return jsonstream.text(text, _PAD)

    findings = zip(result.findings, _fingerprints(result), strict=True)
    return jsonflat.items(findings, _PAD, fast, slow)


_LABELS = {severity: severity.label for severity in Severity}


def _place_values(place: dict[str, Any]) -> list[Any]:
    """A rule's `physicalLocation` scalars in text order (uri, its base, the line)."""
    return [*place["artifactLocation"].values(), place["region"]["startLine"]]


def _result(
    finding: Finding,
    rule_index: int | None,
    root: Path,
    fingerprint: str,
    place: dict[str, Any] | None = None,
) -> dict[str, Any]:
    resource = finding.resource
    field = finding.field  # worked out on demand from the requirement: ask once
    out: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "level": _LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [_location(finding, root, place)],
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


def _location(finding: Finding, root: Path, place: dict[str, Any] | None) -> dict[str, Any]:
    """A job finding's file and line (the first line when no key is to blame: code scanning
    wants a region); an instance's name, and its rule's place in the policy file."""
    resource = finding.resource
    if resource.kind is Kind.JOB and resource.source.path:
        physical: dict[str, Any] = {"artifactLocation": artifact(resource.source.path, root)}
        line = finding.line or resource.source.line
        physical["region"] = {"startLine": line if line and line >= 1 else 1}
        logical = {"name": resource.name or resource.id, "kind": "object"}
        logical["fullyQualifiedName"] = f"{resource.provider}/{logical['name']}"
        return {"physicalLocation": physical, "logicalLocations": [logical]}
    logical = {"name": resource.id, "fullyQualifiedName": resource.location, "kind": "resource"}
    if place is None:  # a result built by hand, its rules with no source
        return {"logicalLocations": [logical]}
    return {"physicalLocation": place, "logicalLocations": [logical]}


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
                "message": {"text": f"{gap.provider} {gap.where}: {gap.error}: {gap.message}"},
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
