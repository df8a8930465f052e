"""CSV for spreadsheets: one row per finding, fixed columns (docs/reports.md), RFC 4180 quoting.

Every cell that a spreadsheet would run as a formula (starting `=`, `+`, `-`, `@`, tab or CR),
whatever its column, gets a leading `'`, so a hostile value cannot become `=HYPERLINK(...)`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable
from typing import TextIO

from gpu_audit.core.lazyre import lazy
from gpu_audit.core.resource import Capacity, Kind, Resource, Severity, Workload
from gpu_audit.core.results import Finding, ScanResult
from gpu_audit.core.stamps import stamp
from gpu_audit.report.escape import escape_code
from gpu_audit.report.knobs import knobs_text

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: object) -> str:
    return "" if value is None else str(value)


# Controls and bidi characters a cell may not show raw (`\u202e` reverses it on screen, as in a
# terminal); a line break or tab stays, quoted as RFC 4180 says.
_HIDDEN = lazy(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def visible(cell: str) -> str:
    """The cell with every control or bidi character but a line break or tab shown escaped."""
    return cell if cell.isprintable() else _HIDDEN.sub(escape_code, cell)


def neutral(cell: str) -> str:
    """The cell as a spreadsheet shows it literally: controls and bidi characters escaped
    (`visible`), and a formula start given a leading `'`."""
    cell = visible(cell)
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
        stamp(f.waiver.expires, "%Y-%m-%d") if f.waiver and f.waiver.expires else ""
    ),
    "waiver_reason": lambda f: _text(f.waiver.reason if f.waiver else None),
    "suppressed_reason": lambda f: _text(f.suppressed),
    "remediation": lambda f: _text(f.remediation),
    "knobs": lambda f: knobs_text(f.resource),
}


def render(result: ScanResult) -> str:
    """The CSV report as text."""
    buffer = io.StringIO()
    write(result, buffer)
    return buffer.getvalue()


def write(result: ScanResult, stream: TextIO) -> None:
    """The rows of `COLUMNS`, cell for cell (a test holds them to it and to the csv module's
    quoting), built faster: a resource's cells are worked out once for all its findings, a text
    seen before is not neutralised and quoted again, and rows are joined without a call per cell.
    200k findings × 33 cells were 7M calls of `neutral` and 7M cells through `csv.writer`."""
    header = io.StringIO()
    csv.writer(header, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL).writerow(COLUMNS)
    stream.write(header.getvalue())
    findings = result.findings
    cells = _Cells()
    for start in range(0, len(findings), 4096):
        stream.write("".join(_lines(findings[start : start + 4096], cells)))


_FORMULA = frozenset(_FORMULA_START)  # one character each: a first-character test suffices
_QUOTED = re.compile('[,"\r\n\x00]')  # what makes the csv module quote a field (or refuse it)
_LABELS = {severity: severity.label for severity in Severity}
_VALUES: dict[object, str] = {m: m.value for enum in (Kind, Capacity, Workload) for m in enum}
_MEMO_SIZE = 1 << 16


def _field(value: object) -> str:
    """`neutral(_text(value))` as the csv module writes it in a row: quoted where it must be."""
    if value is None:
        return ""
    text = visible(value if type(value) is str else str(value))
    if text[:1] in _FORMULA:
        text = "'" + text
    if _QUOTED.search(text) is None:
        return text
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL).writerow((text, ""))
    return buffer.getvalue()[:-3]  # without the empty second field and the line end


def _amount(value: float | int | None) -> str:
    """`neutral(_number(value))` as a field: a negative number, `-inf` or a line given as text
    does start with a formula character."""
    if type(value) is float:
        text = f"{value:.2f}"
    elif type(value) is int:
        text = str(value)
    else:  # None, a subclass, or not a number at all
        return _field(_number(value) if isinstance(value, float | int) else value)
    return "'" + text if text[:1] in _FORMULA else text


class _Cells(dict[object, str]):
    """Texts as fields, remembered: rule ids, titles, remediations and most expected and
    actual values repeat across findings (a bounded memo; only exact `str` keys are kept)."""

    def __init__(self) -> None:
        super().__init__({None: ""})

    def __missing__(self, value: object) -> str:
        text = _field(value)
        if type(value) is str:
            if len(self) >= _MEMO_SIZE:
                self.clear()
                self[None] = ""
            self[value] = text
        return text


def _lines(findings: Iterable[Finding], cells: _Cells) -> list[str]:
    lines = []
    last: Resource | None = None
    # the resource's cells: `kind` to `path`, `instance_type` to `owner`, and its knobs
    before = after = cost = knobs = ""
    job = False
    for finding in findings:
        resource = finding.resource
        if resource is not last:
            last = resource
            job = resource.kind is Kind.JOB
            before = _before(resource, job, cells)
            after = _after(resource, cells)
            cost = _amount(resource.monthly_cost_usd)
            knobs = _field(knobs_text(resource))
        waiver = finding.waiver
        if waiver is None:
            status = "open" if finding.suppressed is None else "suppressed"
            waived = ",,"
        else:
            status = "waived"
            expires = stamp(waiver.expires, "%Y-%m-%d") if waiver.expires else ""
            waived = f"{_field(waiver.owner)},{_field(expires)},{_field(waiver.reason)}"
        line = _amount(finding.line or resource.source.line) if job else ""
        monthly = finding.monthly_savings_usd
        saving = finding.saving_usd
        lines.append(
            f"{cells[finding.rule_id]},{_LABELS[finding.severity]},{status},"
            f"{cells[finding.title]},{before},{line},{after},{cells[finding.field]},"
            f"{cells[finding.expected]},{cells[finding.actual]},{cost},"
            f"{'' if monthly is None else _amount(monthly)},"
            f"{'' if saving is None else _amount(saving)},{cells[finding.saving_unit]},"
            f"{waived},{cells[finding.suppressed]},{cells[finding.remediation]},{knobs}\r\n"
        )
    return lines


def _before(resource: Resource, job: bool, cells: _Cells) -> str:
    return (
        f"{_VALUES[resource.kind]},{cells[resource.provider]},{cells[resource.account]},"
        f"{cells[resource.region]},{_field(resource.id)},{_field(resource.name)},"
        f"{_field(resource.location)},{_field(resource.source.path) if job else ''}"
    )


def _after(resource: Resource, cells: _Cells) -> str:
    tags = resource.tags
    capacity = resource.capacity
    return (
        f"{cells[resource.instance_type]},{cells[resource.gpu.model]},"
        f"{_amount(resource.gpu.count)},{'' if capacity is None else _VALUES[capacity]},"
        f"{_VALUES[resource.workload]},{cells[tags.get('team')]},{cells[tags.get('project')]},"
        f"{cells[tags.get('owner')]}"
    )
