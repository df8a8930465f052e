"""CSV reads back with the csv module: one row per finding, fixed columns, no formulas."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import replace

from gpu_audit.core.resource import Gpu
from gpu_audit.core.results import ScanResult
from gpu_audit.report import csv as csv_report
from tests.report.conftest import HOSTILE

DOCUMENTED = [
    "rule_id",
    "severity",
    "status",
    "title",
    "kind",
    "provider",
    "account",
    "region",
    "resource_id",
    "resource_name",
    "location",
    "path",
    "line",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "capacity",
    "workload",
    "team",
    "project",
    "owner",
    "field",
    "expected",
    "actual",
    "monthly_cost_usd",
    "monthly_savings_usd",
    "saving_usd",
    "saving_unit",
    "waiver_owner",
    "waiver_expires",
    "waiver_reason",
    "suppressed_reason",
    "remediation",
    "knobs",
]


def read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_columns_are_stable_and_documented() -> None:
    assert list(csv_report.COLUMNS) == DOCUMENTED
    from tests.conftest import ROOT

    docs = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    for column in DOCUMENTED:
        assert f"`{column}`" in docs, column


def test_demo_reads_back(demo: ScanResult) -> None:
    text = csv_report.render(demo)
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    rows = read(text)
    assert len(rows) == len(demo.findings)
    assert {r["status"] for r in rows} == {"open", "waived"}
    first = rows[0]
    assert first["rule_id"] == demo.findings[0].rule_id
    assert float(first["monthly_savings_usd"]) == demo.findings[0].monthly_savings_usd
    waived = [r for r in rows if r["status"] == "waived"]
    assert all(r["waiver_owner"] and r["waiver_expires"] for r in waived)


def test_jobs_have_path_and_line(jobs: ScanResult) -> None:
    rows = read(csv_report.render(jobs))
    spot = next(r for r in rows if r["rule_id"] == "spot-for-training")
    assert (spot["path"], spot["line"], spot["kind"]) == ("jobs/train llm.yaml", "7", "job")
    suppressed = next(r for r in rows if r["status"] == "suppressed")
    assert suppressed["suppressed_reason"] == "approved in FIN-77"


def test_hostile_values_round_trip_without_formulas(hostile: ScanResult) -> None:
    text = csv_report.render(hostile)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert {len(row) for row in rows} == {len(DOCUMENTED)}
    records = read(text)
    assert any(r["resource_name"] == HOSTILE for r in records), "multi-line values survive quoting"
    for record in records:
        for value in record.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), value
    instance = next(r for r in records if r["kind"] == "instance")
    assert instance["project"] == "'-2+3" and instance["owner"] == "'@evil\tx"
    waived = next(r for r in records if r["status"] == "waived")
    assert waived["waiver_owner"].startswith("'=HYPERLINK")


def reference(result: ScanResult) -> str:
    """The report as `COLUMNS` says it, cell by cell, through the csv module."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(csv_report.COLUMNS)
    for finding in result.findings:
        writer.writerow(csv_report.neutral(cell(finding)) for cell in csv_report.COLUMNS.values())
    return buffer.getvalue()


class Label(str):
    """A text that prints differently from its value."""

    def __str__(self) -> str:
        return "=" + self


def edges(result: ScanResult) -> ScanResult:
    """Values that quote, neutralise or format unlike the plain ones, and a resource whose
    findings are not next to each other."""
    findings = list(result.findings)
    awkward = ['a "quoted", text', "-1", "x\x00y", "\r\n", ",", '"', Label("plain")]
    numbers = [-0.0, math.nan, -math.inf, -3, True, 2.5]
    for i, finding in enumerate(findings):
        text = awkward[i % len(awkward)]
        number = numbers[i % len(numbers)]
        resource = replace(
            finding.resource,
            region=text,
            gpu=Gpu(text, number),  # type: ignore[arg-type]
            monthly_cost_usd=number,
            tags={"team": text, "owner": None},  # type: ignore[dict-item]
        )
        findings[i] = replace(
            finding,
            resource=resource,
            rule_id=text,
            expected=text,
            actual=awkward[(i + 1) % len(awkward)],
            line=text if i % 2 else number,  # type: ignore[arg-type]
            monthly_savings_usd=number,
            saving_usd=-number,
            saving_unit=text,
        )
    findings.append(result.findings[0])  # the first resource again, after the others
    return replace(result, findings=tuple(findings))


def test_rows_are_the_columns_cell_for_cell(
    demo: ScanResult, jobs: ScanResult, checked: ScanResult, hostile: ScanResult
) -> None:
    for result in (demo, jobs, checked, hostile, edges(demo), edges(jobs), edges(hostile)):
        assert csv_report.render(result) == reference(result)
