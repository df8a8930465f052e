"""`gpu-audit scan --provider kubernetes` end to end: the console script, the real client, the
loopback API and Prometheus servers, the runbook pack (the issue's acceptance test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from k8s_fixtures import dcgm_series, fleet, kubeconfig
from k8s_server import serve_kube, serve_prometheus

GPU_AUDIT = Path(sys.executable).with_name("gpu-audit")
IDLE_NODE = "ip-10-0-1-20.ec2.internal"
IDLE_POD = "embed-api-7d9f8b6c5d-x2x9k"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    pytest.mark.skipif(not GPU_AUDIT.exists(), reason=f"{GPU_AUDIT} is not installed"),
]


def scan(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    done = subprocess.run(
        [str(GPU_AUDIT), "scan", "--provider", "kubernetes", *args, "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # no .gpu-audit.yaml to discover here
        timeout=180,
    )
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, report, done.stderr


def test_the_cluster_scan_lists_gpu_nodes_and_pods_flags_idle_ones_and_exits_3(
    tmp_path: Path,
) -> None:
    fake, prometheus = fleet(), dcgm_series()
    with serve_kube(fake) as url, serve_prometheus(prometheus) as prom:
        config = kubeconfig(tmp_path / "kubeconfig", url)
        contexts = ("--context", "eks-prod", "--context", "gke-dev", "--context", "locked")
        code, report, stderr = scan(
            tmp_path, "--kubeconfig", str(config), *contexts, "--prometheus", prom
        )
    assert code == 3, stderr
    assert report["partial"] is True
    assert [(g["scope"], g["error"]) for g in report["coverage_gaps"]] == [
        ("context locked", "Forbidden (403)")
    ]
    nodes = {r["name"]: r for r in report["resources"] if r["kind"] == "instance"}
    pods = {r["name"]: r for r in report["resources"] if r["kind"] == "pod"}
    shown = {
        name: (
            r["gpu"]["model"],
            r["gpu"]["count"],
            r["gpu"]["allocated"],
            r["capacity"],
            r["region"],
        )
        for name, r in nodes.items()
    }
    assert shown == {
        "ip-10-0-1-10.ec2.internal": ("A100-40GB", 8, 8, "on-demand", "us-east-1"),
        IDLE_NODE: ("A10G", 4, 0, "spot", "us-east-1"),
        "gke-dev-a100-1": ("A100-40GB", 1, 1, "spot", "us-central1"),
        "gke-dev-h100-1": ("H100", 8, 0, "on-demand", "us-central1"),
    }
    assert {name: r["note"].split(";")[0] for name, r in pods.items()} == {
        "llama-ft-worker-0": "owner PyTorchJob/llama-ft",
        IDLE_POD: "owner Deployment/embed-api",
        "sweep-17": "owner Job/sweep-17",
        "alice-0": "owner Notebook/alice",
    }
    assert pods["llama-ft-worker-0"]["workload"] == "training"
    fired = {(f["rule_id"], report["resources"][f["resource"]]["name"]) for f in report["findings"]}
    assert ("gpu-unallocated", IDLE_NODE) in fired  # the idle node
    assert ("idle-gpu", IDLE_POD) in fired  # the idle pod
    assert ("idle-gpu", "llama-ft-worker-0") not in fired
    assert ("spot-for-training", "llama-ft-worker-0") in fired  # training pod, on-demand node
    assert ("cost-allocation-tags", IDLE_POD) in fired  # a GPU pod without team/project/owner
    assert not {n for r, n in fired if r == "cost-allocation-tags" and n in nodes}
    idle_node = next(f for f in report["findings"] if f["rule_id"] == "gpu-unallocated"
                     and report["resources"][f["resource"]]["name"] == IDLE_NODE)  # fmt: skip
    assert idle_node["monthly_savings_usd"] == nodes[IDLE_NODE]["monthly_cost_usd"] > 0
    # spend counts the nodes only; the pods' GPUs are part of them
    spend = sum(r["monthly_cost_usd"] or 0 for r in nodes.values())
    assert report["summary"]["monthly_cost_usd"] == pytest.approx(spend, abs=0.02)
    assert all(r.method == "GET" for r in fake.requests)
    assert len(prometheus.queries) == 11  # four of them for MIG slices, three profiling
    assert "incomplete" in stderr and "context locked" in stderr


def test_without_prometheus_utilization_rules_are_not_evaluated(tmp_path: Path) -> None:
    with serve_kube(fleet()) as url:
        config = kubeconfig(tmp_path / "kubeconfig", url)
        code, report, stderr = scan(tmp_path, "--kubeconfig", str(config))
    assert code == 1, stderr  # the current context alone: findings, no gap
    assert {r["cluster"] for r in report["resources"]} == {"eks-prod"}
    fired = {f["rule_id"] for f in report["findings"]}
    assert "idle-gpu" not in fired and "gpu-unallocated" in fired
    missing = {(n["rule_id"], n["missing"]) for n in report["not_evaluated"]}
    assert ("idle-gpu", "utilization.gpu_p95") in missing


def test_a_bad_kubeconfig_is_a_usage_error(tmp_path: Path) -> None:
    code, _, stderr = scan(tmp_path, "--kubeconfig", str(tmp_path / "nope"))
    assert code == 2 and "--kubeconfig" in stderr and "no such file" in stderr
    assert "Traceback" not in stderr
