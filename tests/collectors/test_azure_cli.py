"""`gpu-audit scan --provider azure` end to end: the installed console script, the real Azure SDK
clients, and the loopback ARM/Resource Graph server in the real answers' shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from azure_fixtures import SUB_A, SUB_B, SUB_C, scenario
from azure_server import FakeAzure, serve

GPU_AUDIT = Path(sys.executable).with_name("gpu-audit")
PREFIX = f"/subscriptions/{SUB_A}/resourcegroups"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    pytest.mark.skipif(not GPU_AUDIT.exists(), reason=f"{GPU_AUDIT} is not installed"),
]


def run_scan(fake: FakeAzure, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    with serve(fake) as url:
        env = {**os.environ, "GPU_AUDIT_AZURE_ENDPOINT": url}
        done = subprocess.run(
            [str(GPU_AUDIT), "scan", "--provider", "azure", *args, "--format", "json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,  # no .gpu-audit.yaml to discover here
            timeout=120,
        )
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, report, done.stderr


def _view(report: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {
        r["name"]: (
            r["id"],
            r["service"],
            r["instance_type"],
            r["gpu"]["model"],
            r["gpu"]["count"],
            r["capacity"],
            r["state"],
            r["monthly_cost_usd"],
            r["min_nodes"],
            r["workload"],
        )
        for r in report["resources"]
    }


def test_the_done_when_scan(tmp_path: Path) -> None:
    fake = scenario()
    fake.faults = {"graph": [429], "computes": [503]}  # each retried, the first after Retry-After
    start = time.monotonic()
    code, report, stderr = run_scan(
        fake, tmp_path, "--subscription", SUB_A, "--subscription", SUB_B
    )
    assert code == 3, stderr
    assert report["partial"] is True
    assert [(g["account"], g["error"]) for g in report["coverage_gaps"]] == [(SUB_B, "NotReadable")]
    assert f"incomplete: azure subscription {SUB_B}" in stderr
    vms, vmss = f"{PREFIX}/ml-train/providers/microsoft.compute", f"{PREFIX}/mc_aks_gpu_eastus"
    ml = f"{PREFIX}/ml-rg/providers/microsoft.machinelearningservices/workspaces/research-ws"
    assert _view(report) == {
        "train-a100-spot": (
            f"{vms}/virtualmachines/train-a100-spot",
            "vm",
            "Standard_NC24ads_A100_v4",
            "A100-80GB",
            1,
            "spot",
            "running",
            324.43,
            None,
            "training",
        ),
        "train-v100": (
            f"{vms}/virtualmachines/train-v100",
            "vm",
            "Standard_NC6s_v3",
            "V100",
            1,
            "on-demand",
            "running",
            2233.8,
            None,
            "training",
        ),
        "eval-t4-stopped": (  # stopped, still allocated: billed in full
            f"{vms}/virtualmachines/eval-t4-stopped",
            "vm",
            "Standard_NC4as_T4_v3",
            "T4",
            1,
            "on-demand",
            "stopped",
            383.98,
            None,
            "unknown",
        ),
        "future-gpu": (  # an N-series size the catalog does not know: listed, not judged
            f"{vms}/virtualmachines/future-gpu",
            "vm",
            "Standard_NC8ads_B300_v9",
            None,
            None,
            "on-demand",
            "running",
            None,
            None,
            "unknown",
        ),
        "aks-gpupool-12345678-vmss": (
            f"{vmss}/providers/microsoft.compute/virtualmachinescalesets/aks-gpupool-12345678-vmss",
            "vmss",
            "Standard_NC6s_v3",
            "V100",
            3,
            "on-demand",
            "running",
            6701.4,
            None,
            "unknown",
        ),
        "gpu-cluster": (
            f"{ml}/computes/gpu-cluster",
            "azureml",
            "STANDARD_NC24ADS_A100_V4",
            "A100-80GB",
            2,
            "on-demand",
            "running",
            5362.58,
            2,
            "unknown",
        ),
        "lowpri-v100": (
            f"{ml}/computes/lowpri-v100",
            "azureml",
            "Standard_NC6s_v3",
            "V100",
            1,
            "spot",
            "running",
            290.39,
            0,
            "unknown",
        ),
        "kim-notebook": (
            f"{ml}/computes/kim-notebook",
            "azureml",
            "Standard_NC4as_T4_v3",
            "T4",
            1,
            "on-demand",
            "running",
            383.98,
            None,
            "notebook",
        ),
    }  # neither the CPU VM, the CPU pool and cluster, the deallocated VM, nor the idle ones
    held = report["resources"]  # version 3: a finding names its resource by index
    fired = {(f["rule_id"], held[f["resource"]]["name"]) for f in report["findings"]}
    # train-v100 runs on NC6s_v3, retired on 2025-09-30 (catalog/data/lifecycle.csv): spot is no
    # saving on hardware the cloud no longer sells (issue 48), so it is not told to move there
    assert fired == {
        ("stopped-still-billed", "eval-t4-stopped"),
        ("warm-gpu-cluster", "gpu-cluster"),
        ("forgotten-notebook", "kim-notebook"),  # created 2026-11-10, up more than 7 days
    }
    stopped = next(f for f in report["findings"] if f["rule_id"] == "stopped-still-billed")
    assert stopped["monthly_savings_usd"] == 383.98
    warm = next(f for f in report["findings"] if f["rule_id"] == "warm-gpu-cluster")
    assert warm["monthly_savings_usd"] == 5362.58  # both nodes are the minimum
    missing = {
        (n["rule_id"], n["resource_id"].rsplit("/", 1)[-1], n["missing"])
        for n in report["not_evaluated"]
    }
    assert ("idle-gpu", "train-v100", "utilization.gpu_p95") in missing  # not zero: unknown
    assert ("gpu-class-cap", "future-gpu", "gpu.model") in missing
    note = next(r for r in report["resources"] if r["name"] == "future-gpu")
    assert "Standard_NC8ads_B300_v9 is not in the catalog" in json.dumps(report)
    assert note["price"]["hourly_usd"] is None
    # the 429 was retried after its Retry-After (1 s), the 503 after a backoff, both once
    graph = [r for r in fake.requests if r.method == "POST"]
    assert len([r for r in graph if "ResourceContainers" in r.body["query"]]) == 2
    computes = [r.query.get("$skiptoken") for r in fake.requests if r.path.endswith("/computes")]
    assert computes == [None, None, ["2"], ["4"]]  # the 503, its retry, then two more pages
    assert time.monotonic() - start >= 1.0
    # Resource Graph was asked for both subscriptions, whole rows filtered by type, paged
    assert all(r.body["subscriptions"] == [SUB_A, SUB_B] for r in graph[:2])
    rows = [r for r in graph if r.body["query"].startswith("Resources")]
    assert all(r.body["subscriptions"] == [SUB_A] for r in rows)  # B is not asked again
    assert len(rows) == 5 and "project" not in rows[0].body["query"]
    assert [r.body["options"].get("$skipToken") for r in rows] == [None, "2", "4", "6", "8"]


def test_arm_agrees_with_resource_graph(tmp_path: Path) -> None:
    args = ("--subscription", SUB_A, "--subscription", SUB_B, "--subscription", SUB_C)
    code, graph, stderr = run_scan(scenario(), tmp_path, *args)
    assert code == 3, stderr
    fake = scenario()
    code, arm, stderr = run_scan(fake, tmp_path, *args, "--azure-source", "arm")
    assert code == 3, stderr
    assert _view(arm) == _view(graph) and "infer-t4" in _view(arm)
    for report in (graph, arm):
        for resource in report["resources"]:
            resource.pop("uptime_hours")
    by_id = {r["id"]: r for r in graph["resources"]}
    assert {r["id"]: r for r in arm["resources"]} == by_id  # every field, times included
    assert sorted(
        (f["rule_id"], arm["resources"][f["resource"]]["id"]) for f in arm["findings"]
    ) == sorted((f["rule_id"], graph["resources"][f["resource"]]["id"]) for f in graph["findings"])
    (gap,) = arm["coverage_gaps"]
    assert (gap["account"], gap["error"]) == (SUB_B, "AuthorizationFailed (403)")
    assert "Microsoft.Compute/virtualMachines/read" in gap["message"]
    assert not [r for r in fake.requests if r.method != "GET"]  # ARM reads only
    pages = [r for r in fake.requests if r.path.endswith("/virtualMachines") and SUB_A in r.path]
    assert len(pages) == 3 and all(r.query["statusOnly"] == ["true"] for r in pages)  # 6 VMs


def test_every_readable_subscription_by_default_and_the_region_filter(tmp_path: Path) -> None:
    fake = scenario()
    code, report, stderr = run_scan(fake, tmp_path, "--region", "westus2")
    assert code in (0, 1), stderr
    assert [r["name"] for r in report["resources"]] == ["infer-t4"]
    assert report["coverage_gaps"] == []  # B is not listed to this credential: nothing named
    assert any(r.path == "/subscriptions" for r in fake.requests)


def test_a_retry_after_longer_than_the_timeout_is_a_gap_not_a_wait(tmp_path: Path) -> None:
    fake = scenario()
    fake.faults = {"graph": [429]}
    fake.retry_after = "3600"
    start = time.monotonic()
    code, report, stderr = run_scan(fake, tmp_path, "--subscription", SUB_A, "--timeout", "5")
    assert time.monotonic() - start < 60
    assert code == 3, stderr
    assert [(g["account"], g["error"]) for g in report["coverage_gaps"]] == [
        (SUB_A, "TooManyRequests (429)")
    ]


@pytest.mark.parametrize("source", ["resource-graph", "arm"])
def test_a_silent_endpoint_is_a_gap_within_the_timeout(source: str, tmp_path: Path) -> None:
    """Each call waits --timeout at most, retries included: then the subscription is a gap."""
    fake = scenario()
    fake.stall = {"graph": 4.0, "vms": 4.0}
    start = time.monotonic()
    code, report, stderr = run_scan(
        fake, tmp_path, "--subscription", SUB_A, "--timeout", "0.5", "--azure-source", source
    )
    elapsed = time.monotonic() - start
    assert code == 3, stderr
    assert [g["account"] for g in report["coverage_gaps"]] == [SUB_A]
    assert "Traceback" not in stderr
    assert elapsed < 25  # 3 attempts of 0.5 s plus backoff, and the CLI's own start-up


def test_a_401_for_one_subscription_is_its_gap_not_the_end_of_azure(tmp_path: Path) -> None:
    """Another tenant's subscription answers 401; the credential itself works for the rest."""
    fake = scenario()
    fake.faults = {"vms": [401]}
    args = ("--subscription", SUB_A, "--subscription", SUB_C, "--concurrency", "1")
    code, report, stderr = run_scan(fake, tmp_path, *args, "--azure-source", "arm")
    assert code == 3, stderr
    (gap,) = report["coverage_gaps"]
    assert (gap["account"], gap["error"]) == (SUB_A, "InvalidAuthenticationTokenTenant (401)")
    assert [r["name"] for r in report["resources"]] == ["infer-t4"]


def test_a_forbidden_workspace_is_a_gap_naming_it(tmp_path: Path) -> None:
    fake = scenario()
    fake.faults = {"computes": [403]}
    code, report, stderr = run_scan(fake, tmp_path, "--subscription", SUB_A)
    assert code == 3, stderr
    (gap,) = report["coverage_gaps"]
    assert gap["scope"] == f"subscription {SUB_A} workspace research-ws"
    assert "train-v100" in {r["name"] for r in report["resources"]}


def test_a_bad_source_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, _, stderr = run_scan(scenario(), tmp_path, "--azure-source", "portal")
    assert code == 2
    assert stderr.strip().splitlines() == [
        "gpu-audit: error: --azure-source 'portal' is not a source; "
        "choose among resource-graph, arm"  # a flag's value is named by its flag
    ]
