"""CSV for spreadsheets: one row per finding, fixed columns (docs/reports.md), RFC 4180 quoting.

Every cell that a spreadsheet would run as a formula (starting `=`, `+`, `-`, `@`, tab or CR),
whatever its column, gets a leading `'`, so a hostile value cannot become `=HYPERLINK(...)`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import TextIO

from gpu_audit.model import Finding, Kind, ScanResult

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: object) -> str:
    return "" if value is None else str(value)


def neutral(cell: str) -> str:
    """The cell as a spreadsheet shows it literally: a formula start gets a leading `'`."""
    return "'" + cell if cell.startswith(_FORMULA_START) else cell


def _number(value: float | int | None) -> str:
    return "" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _status(finding: Finding) -> str:
    if finding.waiver is not None:
        return "waived"
    return "suppressed" if finding.suppressed is not None else "open"


def _path(finding: Finding) -> str | None:
    return finding.resource.source.path if finding.resource.kind is Kind.JOB else None


def _line(finding: Finding) -> str:
    if finding.resource.kind is not Kind.JOB:
        return ""
    return _number(finding.line or finding.resource.source.line)


# The column list is part of the format: add columns at the end, never rename or reorder.
COLUMNS: dict[str, Callable[[Finding], str]] = {
    "rule_id": lambda f: _text(f.rule_id),
    "severity": lambda f: f.severity.label,
    "status": _status,
    "title": lambda f: _text(f.title),
    "kind": lambda f: f.resource.kind.value,
    "provider": lambda f: _text(f.resource.provider),
    "account": lambda f: _text(f.resource.account),
    "region": lambda f: _text(f.resource.region),
    "resource_id": lambda f: _text(f.resource.id),
    "resource_name": lambda f: _text(f.resource.name),
    "location": lambda f: _text(f.resource.location),
    "path": lambda f: _text(_path(f)),
    "line": _line,
    "instance_type": lambda f: _text(f.resource.instance_type),
    "gpu_model": lambda f: _text(f.resource.gpu.model),
    "gpu_count": lambda f: _number(f.resource.gpu.count),
    "capacity": lambda f: f.resource.capacity.value if f.resource.capacity else "",
    "workload": lambda f: f.resource.workload.value,
    "team": lambda f: _text(f.resource.tags.get("team")),
    "project": lambda f: _text(f.resource.tags.get("project")),
    "owner": lambda f: _text(f.resource.tags.get("owner")),
    "field": lambda f: _text(f.field),
    "expected": lambda f: _text(f.expected),
    "actual": lambda f: _text(f.actual),
    "monthly_cost_usd": lambda f: _number(f.resource.monthly_cost_usd),
    "monthly_savings_usd": lambda f: _number(f.monthly_savings_usd),
    "saving_usd": lambda f: _number(f.saving_usd),
    "saving_unit": lambda f: _text(f.saving_unit),
    "waiver_owner": lambda f: _text(f.waiver.owner if f.waiver else None),
    "waiver_expires": lambda f: (
        f"{f.waiver.expires:%Y-%m-%d}" if f.waiver and f.waiver.expires else ""
    ),
    "waiver_reason": lambda f: _text(f.waiver.reason if f.waiver else None),
    "suppressed_reason": lambda f: _text(f.suppressed),
    "remediation": lambda f: _text(f.remediation),
}


def render(result: ScanResult) -> str:
    buffer = io.StringIO()
    write(result, buffer)
    return buffer.getvalue()


def write(result: ScanResult, stream: TextIO) -> None:
    writer = csv.writer(stream, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(COLUMNS)
    cells = tuple(COLUMNS.values())
    writer.writerows([neutral(cell(finding)) for cell in cells] for finding in result.findings)
