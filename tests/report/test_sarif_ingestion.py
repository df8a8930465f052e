"""Issue 38.6: SARIF that GitHub code scanning and Advanced Security for Azure DevOps both ingest.

Held to Microsoft's SARIF Multitool rules (`tests/report/sarif_rules.py`): the GitHub rules for
every log, and the Azure DevOps rules with the pipeline's identity for a log written inside an
Azure Pipelines run (`TF_BUILD` and the predefined variables); outside one, the log is as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.core.results import ScanResult
from gpu_audit.errors import ConfigError
from gpu_audit.report import sarif
from gpu_audit.report.pipeline import detect
from tests.report.sarif_rules import AGENT, PHASE, PROJECT, WANTED_ID, problems


@pytest.fixture(autouse=True)
def no_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's own environment says nothing of a pipeline, whatever CI runs it."""
    for name in AGENT:
        monkeypatch.delenv(name, raising=False)


def test_the_rules_refuse_what_the_ingestion_drops() -> None:
    """Each check finds the shape it exists for: the tests below cannot pass by not looking."""
    result = {"ruleId": "r", "message": {"text": "m"}, "locations": [{"logicalLocations": []}]}
    rule = {"id": "r", "name": "R", "shortDescription": {"text": "t"}}
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "x", "rules": [rule]}},
        "automationDetails": {"id": "gpu-audit/scan/2026-11-27T00:00:00Z"},
        "results": [result],
    }
    log = {"$schema": "https://example.com/sarif-2.0.0.json", "version": "2.1.0", "runs": [run]}
    assert problems(log, "GH") == [
        "GH1011 /$schema",
        "GH2012 /runs/0/tool/driver/rules/0/fullDescription",
        "GH2012 /runs/0/tool/driver/rules/0/help",
        "GH1016 /runs/0/results/0/locations/0/physicalLocation",
    ]
    assert problems(log, "GHAzDO") == [
        "GHAzDO1011 /$schema",
        "GHAzDO1018 /runs/0/tool/driver/fullName",
        "GHAzDO1020 /runs/0/automationDetails/id",
        "GHAzDO1019 /runs/0/automationDetails/properties/buildDefinitionId",
        "GHAzDO1019 /runs/0/automationDetails/properties/buildDefinitionName",
        "GHAzDO1019 /runs/0/automationDetails/properties/phaseName",
        "GHAzDO1019 /runs/0/automationDetails/properties/phaseId",
        "GHAzDO1016 /runs/0/results/0/locations/0/physicalLocation",
    ]
    result["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": "file:///etc/x"}}}]
    assert problems(log, "GH")[-2:] == [
        "GH1003 /runs/0/results/0/locations/0/physicalLocation/region",
        "GH1006 /runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri",
    ]


def test_scan_and_check_logs_pass_the_github_rules(
    demo: ScanResult, checked: ScanResult, in_root: Path
) -> None:
    """Before: every instance finding had no file (GH1016) and a job finding with no line no
    region (GH1003). Now an instance finding points at its rule in the policy file."""
    for result in (demo, checked):
        log = json.loads(sarif.render(result))
        assert problems(log, "GH") == []
        assert log["runs"][0]["automationDetails"]["id"].startswith("gpu-audit/")
    run = sarif.log(demo, in_root)["runs"][0]
    first = run["results"][0]
    rule = next(r for r in demo.rules if r.id == first["ruleId"])
    path, _, line = (rule.source or "").rpartition(":")
    physical = first["locations"][0]["physicalLocation"]
    relative = Path(path).resolve().relative_to(in_root).as_posix()
    assert physical["artifactLocation"] == {"uri": relative, "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": int(line)}
    assert first["locations"][0]["logicalLocations"][0]["kind"] == "resource"


def test_a_policy_outside_the_checkout_is_named_from_its_own_folder(
    demo: ScanResult, tmp_path: Path
) -> None:
    """The shipped pack, installed, lies outside the repository: an absolute path there is one
    code scanning refuses (GH1006), so the rule's file is relative to a base id of its own."""
    log = sarif.log(demo, tmp_path, environ={})
    run = log["runs"][0]
    assert problems(log, "GH") == []
    bases = {k: v for k, v in run["originalUriBaseIds"].items() if k != "%SRCROOT%"}
    assert bases and all(
        v["uri"].startswith("file:///") and v["uri"].endswith("/") for v in bases.values()
    )
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uriBaseId"] in bases and "/" not in artifact["uri"]


def test_in_an_azure_pipeline_the_log_carries_the_runs_identity(
    demo: ScanResult, checked: ScanResult, in_root: Path
) -> None:
    for result, command in ((demo, "scan"), (checked, "check")):
        log = sarif.log(result, in_root, environ=AGENT)
        assert problems(log, "GHAzDO") == [] and problems(log, "GH") == []
        details = log["runs"][0]["automationDetails"]
        assert details["id"] == WANTED_ID
        assert details["properties"] == {
            "azuredevops/pipeline/build/buildDefinitionId": "42",
            "azuredevops/pipeline/build/buildDefinitionName": "gpu cost gate",
            "azuredevops/pipeline/build/phaseId": PHASE,
            "azuredevops/pipeline/build/phaseName": "Audit",
            "gpuAudit/category": f"gpu-audit/{command}",
        }


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"BUILD_SOURCEBRANCH": "main"}, "refs/heads/main/9876"),
        ({"SYSTEM_COLLECTIONURI": "https://contoso.visualstudio.com/"}, "refs/heads/main/9876"),
        ({"BUILD_SOURCEBRANCH": "refs/pull/7/merge"}, "refs/pull/7/merge/9876"),
        ({"SYSTEM_PHASEID": "", "SYSTEM_JOBID": PHASE}, "refs/heads/main/9876"),
    ],
)
def test_the_identity_from_each_form_an_agent_gives(changes: dict[str, str], expected: str) -> None:
    pipeline = detect({**AGENT, **changes})
    assert pipeline is not None
    assert pipeline.automation_id.startswith("azuredevops/pipeline/build/contoso/")
    assert pipeline.automation_id.endswith(expected)


def test_outside_a_pipeline_there_is_no_identity() -> None:
    assert detect({}) is None
    assert detect({k: v for k, v in AGENT.items() if k != "TF_BUILD"}) is None
    assert detect({"TF_BUILD": "True"}) is None  # the flag alone is not an agent's environment
    assert detect({**AGENT, "TF_BUILD": "False"}) is None


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"SYSTEM_TEAMPROJECTID": ""}, "SYSTEM_TEAMPROJECTID is not set"),
        ({"SYSTEM_PHASEID": "", "SYSTEM_JOBID": ""}, "SYSTEM_PHASEID is not set"),
        ({"BUILD_DEFINITIONID": "0", "SYSTEM_DEFINITIONID": "0"}, "BUILD_DEFINITIONID='0'"),
        ({"SYSTEM_DEFINITIONID": "41"}, "BUILD_DEFINITIONID and SYSTEM_DEFINITIONID differ"),
        ({"SYSTEM_PHASEID": "00000000-0000-0000-0000-000000000000"}, "is not a GUID"),
        ({"SYSTEM_COLLECTIONURI": "https://example.com/x"}, "organization's URL"),
    ],
)
def test_a_half_set_identity_is_one_error_naming_each_variable(
    changes: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        detect({**AGENT, **changes})
    message = str(raised.value)
    assert named in message and "\n" not in message and "unset TF_BUILD" in message


def test_check_refuses_a_half_set_pipeline_before_any_work(
    in_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**AGENT, "SYSTEM_TEAMPROJECTID": "not-a-guid"}.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "gpu.sarif"
    result = CliRunner().invoke(main, ["check", "fixtures/jobs/skypilot", "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "SYSTEM_TEAMPROJECTID='not-a-guid' is not a GUID" in lines[0]
    assert not out.exists()
    monkeypatch.setenv("SYSTEM_TEAMPROJECTID", PROJECT)  # the same run with a whole identity
    result = CliRunner().invoke(main, ["check", "fixtures/jobs/skypilot", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    log = json.loads(out.read_text(encoding="utf-8"))
    assert problems(log, "GHAzDO") == [] and problems(log, "GH") == []
    assert log["runs"][0]["automationDetails"]["id"] == WANTED_ID
    # other formats never read the pipeline's variables
    monkeypatch.setenv("SYSTEM_TEAMPROJECTID", "not-a-guid")
    result = CliRunner().invoke(main, ["check", "fixtures/jobs/skypilot", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
