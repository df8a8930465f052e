"""What GitHub code scanning and GitHub Advanced Security for Azure DevOps require of a SARIF log, as
Microsoft's SARIF Multitool checks it (`sarif validate --rule-kind Ghas` and `--rule-kind GHAzDO`).

The rules are read from microsoft/sarif-sdk, `src/Sarif.Multitool.Library/Rules/` (commit a4dbd24 of
2026-07-31, and GHAzDO1019/1020 as published after it; read 2026-11-27), and written here as the
checks they make, each under its rule id. The Multitool itself is a .NET tool this machine cannot
install; a test below holds each check to the shape it must refuse, so none passes by not looking.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

FINAL_SCHEMA = ("2.1.0", "2.1.0.json", "2.1.0-rtm.5", "2.1.0-rtm.5.json")  # Base1011
PIPELINE_PREFIX = "azuredevops/pipeline/build/"
PROJECT = "6a1c9b0e-3d2f-4e5a-8b7c-9d0e1f2a3b4c"
PHASE = "1be018db-a340-454c-8c30-e6880b238463"
AGENT = {  # what an agent sets for a YAML pipeline's job (names: learn.microsoft.com, predefined)
    "TF_BUILD": "True",
    "SYSTEM_COLLECTIONURI": "https://dev.azure.com/contoso/",
    "SYSTEM_TEAMPROJECTID": PROJECT,
    "BUILD_DEFINITIONID": "42",
    "SYSTEM_DEFINITIONID": "42",
    "BUILD_DEFINITIONNAME": "gpu cost gate",
    "BUILD_BUILDID": "9876",
    "SYSTEM_PHASEID": PHASE,
    "SYSTEM_JOBID": "0f8fad5b-d9cb-469f-a165-70867728950e",
    "SYSTEM_PHASENAME": "Audit",
    "SYSTEM_JOBNAME": "Audit",
    "BUILD_SOURCEBRANCH": "refs/heads/main",
}
WANTED_ID = f"azuredevops/pipeline/build/contoso/{PROJECT}/42/{PHASE}/refs/heads/main/9876"
_GUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")


def problems(log: dict[str, Any], kind: str) -> list[str]:
    """`rule-id pointer` for each error of the `GH` (GitHub) or `GHAzDO` (Azure DevOps) rules."""
    assert kind in ("GH", "GHAzDO")
    out: list[str] = []

    def fail(rule: str, where: str) -> None:
        out.append(f"{kind}{rule} {where}")

    schema = log.get("$schema", "")
    if not schema:
        fail("1013", "/$schema")
    elif not schema.endswith(FINAL_SCHEMA):
        fail("1011", "/$schema")
    if log.get("version") != "2.1.0":
        fail("1013", "/version")
    runs = log.get("runs")
    if runs is None:
        fail("1013", "/runs")
        return out
    for r, run in enumerate(runs):
        _run(run, f"/runs/{r}", kind, fail)
    return out


def _run(run: dict[str, Any], at: str, kind: str, fail: Any) -> None:
    if run.get("results") is None:
        fail("1014", f"{at}/results")
    driver = (run.get("tool") or {}).get("driver")
    if driver is None:
        fail("1018", f"{at}/tool/driver")
        driver = {}
    if not str(driver.get("name") or "").strip():
        fail("1018", f"{at}/tool/driver/name")
    if driver.get("rules") is None:
        fail("1018", f"{at}/tool/driver/rules")
    if kind == "GHAzDO":
        if not str(driver.get("fullName") or "").strip():
            fail("1018", f"{at}/tool/driver/fullName")
        _automation(run.get("automationDetails"), f"{at}/automationDetails", fail)
    for i, rule in enumerate(driver.get("rules") or ()):
        where = f"{at}/tool/driver/rules/{i}"
        if not str(rule.get("id") or "").strip():
            fail("2012", f"{where}/id")
        if kind == "GH":
            for key in ("shortDescription", "fullDescription", "help"):
                if not str((rule.get(key) or {}).get("text") or "").strip():
                    fail("2012", f"{where}/{key}")
        elif not str(rule.get("name") or "").strip():
            fail("2012", f"{where}/name")
    workdirs = [
        (inv.get("workingDirectory") or {}).get("uri", "") for inv in run.get("invocations") or ()
    ]
    for i, result in enumerate(run.get("results") or ()):
        _result(result, f"{at}/results/{i}", kind, workdirs, fail)


def _automation(details: dict[str, Any] | None, at: str, fail: Any) -> None:
    if details is None or not str(details.get("id") or "").strip():
        fail("1014", f"{at}/id")
        return
    if not details["id"].startswith(PIPELINE_PREFIX):
        fail("1020", f"{at}/id")
    props = details.get("properties") or {}
    definition = str(props.get(f"{PIPELINE_PREFIX}buildDefinitionId") or "")
    if not (definition == "-1" or (definition.isdigit() and int(definition) > 0)):
        fail("1019", f"{at}/properties/buildDefinitionId")
    for key in ("buildDefinitionName", "phaseName"):
        if not str(props.get(f"{PIPELINE_PREFIX}{key}") or "").strip():
            fail("1019", f"{at}/properties/{key}")
    phase = str(props.get(f"{PIPELINE_PREFIX}phaseId") or "")
    if not _GUID.match(phase) or set(phase) <= {"0", "-"}:
        fail("1019", f"{at}/properties/phaseId")


def _result(result: dict[str, Any], at: str, kind: str, workdirs: list[str], fail: Any) -> None:
    if kind == "GHAzDO" and not str(result.get("ruleId") or "").strip():
        fail("1015", f"{at}/ruleId")
    if not str((result.get("message") or {}).get("text") or "").strip():
        fail("1015", f"{at}/message")
    locations = result.get("locations")
    if not locations:
        fail("1015" if kind == "GHAzDO" else "1001", f"{at}/locations")
        return
    for j, location in enumerate(locations):
        where = f"{at}/locations/{j}"
        physical = location.get("physicalLocation")
        if physical is None:
            fail("1016", f"{where}/physicalLocation")
            continue
        artifact = physical.get("artifactLocation")
        if artifact is None or artifact.get("uri") is None:
            fail("1017", f"{where}/physicalLocation/artifactLocation")
        region = physical.get("region")
        if region is None or not region.get("startLine"):
            fail("1017" if kind == "GHAzDO" else "1003", f"{where}/physicalLocation/region")
        if artifact and kind == "GH":
            _uri(artifact, workdirs, f"{where}/physicalLocation/artifactLocation", fail)


def _uri(artifact: dict[str, Any], workdirs: list[str], at: str, fail: Any) -> None:
    uri = str(artifact.get("uri") or "")
    scheme = urlsplit(uri).scheme
    if scheme and scheme != "file":
        fail("1005", f"{at}/uri")  # relative, or a file URI
    if scheme == "file" and not any(w and uri.startswith(w.rstrip("/") + "/") for w in workdirs):
        fail("1006", f"{at}/uri")  # an absolute path must lie under the checkout
