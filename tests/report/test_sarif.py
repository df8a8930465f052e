"""SARIF validates against the official 2.1.0 schema and carries levels, locations, suppressions."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema

from gpu_audit.core.results import ScanResult
from gpu_audit.report import sarif
from tests.conftest import SARIF_SCHEMA

SCHEMA = SARIF_SCHEMA


def validate(document: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(document), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def run_of(result: ScanResult, root: Path) -> dict[str, Any]:
    document = json.loads(sarif.render(result)) if root == Path.cwd() else sarif.log(result, root)
    validate(document)
    run: dict[str, Any] = document["runs"][0]
    return run


def test_demo_validates(demo: ScanResult, in_root: Path) -> None:
    run = run_of(demo, in_root)
    driver = run["tool"]["driver"]
    assert driver["name"] == "gpu-audit" and driver["informationUri"].startswith("https://")
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == [rule.id for rule in demo.rules]
    spot = driver["rules"][ids.index("spot-for-training")]
    assert spot["properties"]["severity"] == "high"
    assert "spot" in spot["help"]["text"] and spot["shortDescription"]["text"]
    levels = {(r["properties"]["severity"], r["level"]) for r in run["results"]}
    assert levels == {("high", "error"), ("medium", "warning")}
    first = run["results"][0]
    assert first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].count("/") == 3
    assert driver["rules"][first["ruleIndex"]]["id"] == first["ruleId"]
    waived = [r for r in run["results"] if "suppressions" in r]
    assert len(waived) == sum(1 for f in demo.findings if f.waiver)
    assert all(
        s["kind"] == "external" and s["justification"] for r in waived for s in r["suppressions"]
    )


def test_levels_follow_severity() -> None:
    levels = {severity.label: level for severity, level in sarif._LEVELS.items()}
    assert levels == {
        "critical": "error",
        "high": "error",
        "medium": "warning",
        "low": "note",
        "info": "note",
    }


def test_jobs_carry_relative_uri_and_line(jobs: ScanResult, in_root: Path) -> None:
    run = run_of(jobs, in_root)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    physical = by_rule["spot-for-training"]["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {
        "uri": "jobs/train%20llm.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    assert physical["region"] == {"startLine": 7}
    suppressed = by_rule["gpu-class-cap"]["suppressions"]
    assert suppressed == [
        {"kind": "inSource", "status": "accepted", "justification": "approved in FIN-77"}
    ]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["note", "error"]
    assert run["invocations"][0]["executionSuccessful"] is False


def test_absolute_job_paths_become_relative_under_the_root(
    jobs: ScanResult, tmp_path: Path
) -> None:
    moved = replace(
        jobs,
        findings=tuple(
            replace(
                f,
                resource=replace(
                    f.resource, source=replace(f.resource.source, path=str(tmp_path / "a b.yaml"))
                ),
            )
            for f in jobs.findings
        ),
    )
    inside = run_of(moved, tmp_path)["results"][0]["locations"][0]["physicalLocation"]
    assert inside["artifactLocation"] == {"uri": "a%20b.yaml", "uriBaseId": "%SRCROOT%"}
    outside = run_of(moved, tmp_path / "elsewhere")["results"][0]["locations"][0][
        "physicalLocation"
    ]
    assert outside["artifactLocation"]["uri"].startswith("file:///")


def test_fingerprints_ignore_lines_and_time(jobs: ScanResult, in_root: Path) -> None:
    before = [r["partialFingerprints"] for r in run_of(jobs, in_root)["results"]]
    shifted = replace(
        jobs,
        generated_at=jobs.generated_at.replace(year=2030),
        findings=tuple(replace(f, line=(f.line or 0) + 10) for f in jobs.findings),
    )
    after = [r["partialFingerprints"] for r in run_of(shifted, in_root)["results"]]
    assert before == after
    assert len({fp[sarif.FINGERPRINT_KEY] for fp in before}) == len(before)


def test_hostile_values_validate(hostile: ScanResult, in_root: Path) -> None:
    run = run_of(hostile, in_root)
    assert run["invocations"][0]["executionSuccessful"] is False


def test_job_fixtures_point_at_their_keys(checked: ScanResult, in_root: Path) -> None:
    run = run_of(checked, in_root)
    locations = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]): r[
            "locations"
        ][0]["physicalLocation"]["region"]["startLine"]
        for r in run["results"]
    }
    for finding in checked.findings:
        uri = finding.resource.source.path
        assert locations[(finding.rule_id, uri)] >= 1
        assert finding.line is not None
    assert all(not uri.startswith("/") for _, uri in locations)


def test_runs_carry_what_azure_devops_advanced_security_requires(
    demo: ScanResult, checked: ScanResult, in_root: Path
) -> None:
    """ADO Advanced Security rejects a run without `automationDetails.id` or `tool.driver.fullName`;
    GitHub reads the id's part before the last `/` as the analysis category."""
    for result, command in ((demo, "scan"), (checked, "check")):
        run = run_of(result, in_root)
        driver = run["tool"]["driver"]
        assert driver["fullName"] == f"gpu-audit {result.tool_version}"
        run_id = run["automationDetails"]["id"]
        category, _, when = run_id.rpartition("/")
        assert category == f"gpu-audit/{command}"
        assert when == result.generated_at.strftime("%Y-%m-%dT%H:%M:%SZ")
