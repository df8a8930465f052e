"""A diff's new findings as SARIF 2.1.0, for code scanning of a pull request: what the change
brings, each at its file and line in the head revision (or the working tree); in an Azure
Pipelines run, with the pipeline's identity (`report.pipeline`)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from gpu_audit import __version__
from gpu_audit.core.results import RuleInfo
from gpu_audit.diff.git import abbreviated
from gpu_audit.diff.model import DiffResult, FindingNote
from gpu_audit.report.markdown_text import prose
from gpu_audit.report.pipeline import detect

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/gpu-audit/gpu-audit"
SRCROOT = "%SRCROOT%"
_LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}


def render_sarif(result: DiffResult, environ: Mapping[str, str] | None = None) -> str:
    """The log; `environ` (default: this process's) tells whether it runs in an Azure Pipeline."""
    new = [(job.file, job.name, note) for job in result.changed for note in job.findings_new]
    rule_ids = sorted({note.rule_id for *_, note in new})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    severity = {note.rule_id: note.severity for *_, note in new}
    prefix = f"{abbreviated(result.head)}:" if result.head_commit else ""
    infos = {rule.id: rule for rule in result.rules}
    pipeline = detect(os.environ if environ is None else environ)
    automation = (
        pipeline.automation_details("gpu-audit/diff")
        if pipeline  # `category/run`: GitHub keys a run's alerts by the category; the run: head
        else {"id": f"gpu-audit/diff/{result.head_commit or result.base_commit}"}
    )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "gpu-audit",
                "fullName": f"gpu-audit {__version__}",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(r, severity[r], infos.get(r)) for r in rule_ids],
            }
        },
        "automationDetails": automation,
        "originalUriBaseIds": {
            SRCROOT: {"description": {"text": "The directory gpu-audit diff ran in."}}
        },
        "results": [_result(file, name, note, index, prefix) for file, name, note in new],
        "columnKind": "unicodeCodePoints",
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rule(rule_id: str, severity: str, info: RuleInfo | None) -> dict[str, Any]:
    """A rule as code scanning shows it: its title, description and remediation from the policy
    (GitHub requires all three: the Multitool's GH2012), the id where the policy has none."""
    title = info.title if info else rule_id
    help_text = (info.remediation if info else None) or title
    return {
        "id": rule_id,
        "name": "".join(part.capitalize() for part in rule_id.split("-")),
        "shortDescription": {"text": title},
        "fullDescription": {"text": (info.description if info else None) or title},
        "help": {"text": help_text, "markdown": prose(help_text)},
        "defaultConfiguration": {"level": _LEVELS.get(severity, "warning")},
        "properties": {"severity": severity, "tags": ["gpu", "cost"]},
    }


def _result(
    file: str, name: str, note: FindingNote, index: dict[str, int], prefix: str
) -> dict[str, Any]:
    where = note.location.removeprefix(prefix)
    path, colon, line = where.rpartition(":")
    if not (colon and line.isdigit()):
        path, line = where, ""
    uri = quote(path, safe="/")  # a name with a space or a `#` is still one URI
    location: dict[str, Any] = {"artifactLocation": {"uri": uri, "uriBaseId": SRCROOT}}
    # code scanning wants a region on every result: the file's first line when none is known
    location["region"] = {"startLine": int(line) if line and int(line) >= 1 else 1}
    key = "\0".join((note.rule_id, file, name)).encode("utf-8", "surrogateescape")
    return {
        "ruleId": note.rule_id,
        "ruleIndex": index[note.rule_id],
        "level": _LEVELS.get(note.severity, "warning"),
        "message": {"text": note.message},
        "locations": [{"physicalLocation": location}],
        "partialFingerprints": {"gpuAuditFinding/v1": hashlib.sha256(key).hexdigest()[:32]},
        "properties": {"job": name, "severity": note.severity},
    }
