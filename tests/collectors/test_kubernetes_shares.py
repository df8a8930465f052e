"""Shared GPUs end to end: `gpu-audit scan --provider kubernetes` with the real client against the
loopback API and Prometheus servers (k8s_shared_fixtures.py), then `check` and `estimate` of a job
file asking for a MIG slice. Every figure below is computed by hand from the catalog's prices.

Node GPU cost = on-demand hourly × 730, in cents; a share pays cost × shares / shares offered,
cut to the cent, the cents left over going to the largest remainders (pods in id order, then
idle). H100 p5.4xlarge $6.88/h → $5022.40: 3g = 3/7 → 2152.457…, 1g = 1/7 → 717.485…, idle 2/7
(the two free 1g slices) → 1434.971…; floors 2152.45 + 717.48 + 717.48 + 1434.97 = 5022.38, the
two cents left go to the 3g (.714 remainder) and the first 1g by id (`team-a/nb-1g-b`, .571).
T4 g4dn.xlarge $0.526/h → $383.98: four replicas of 95.995; ts-a and ts-b take the two cents.
L4 g6.xlarge $0.8048/h → $587.50 (587.504 to the cent): 30% 176.25, 50% 293.75, idle 117.50.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from k8s_server import serve_kube, serve_prometheus
from k8s_shared_fixtures import MIG_JOB, kubeconfig, shared_dcgm, shared_kube

GPU_AUDIT = Path(sys.executable).with_name("gpu-audit")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    pytest.mark.skipif(not GPU_AUDIT.exists(), reason=f"{GPU_AUDIT} is not installed"),
]

POD_COST = {  # context/namespace/pod → (share.mode, share.profile, share.units, monthly USD)
    "shared/team-a/trainer-3g": ("mig", "3g.40gb", 3, "2152.46"),
    "shared/team-b/nb-1g-a": ("mig", "1g.10gb", 1, "717.48"),
    "shared/team-a/nb-1g-b": ("mig", "1g.10gb", 1, "717.49"),
    "shared/team-a/ts-a": ("time-slicing", None, 1, "96.00"),
    "shared/team-b/ts-b": ("time-slicing", None, 1, "96.00"),
    "shared/team-b/ts-c": ("time-slicing", None, 1, "95.99"),
    "shared/team-a/hami-30": ("hami", None, 30, "176.25"),
    "shared/team-b/hami-50": ("hami", None, 50, "293.75"),
}
NODE_COST = {  # node → (monthly USD, share.per_gpu, units offered, held, free, idle USD)
    "h100-mig": ("5022.40", 7, 7, 5, 2, "1434.97"),
    "t4-ts": ("383.98", 4, 4, 3, 1, "95.99"),
    "l4-hami": ("587.50", 100, 100, 80, 20, "117.50"),
}


def _run(tmp_path: Path, *args: str) -> tuple[int, Any, str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    done = subprocess.run(
        [str(GPU_AUDIT), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=180,
    )
    return done.returncode, done.stdout, done.stderr


def _money(value: float | None) -> Decimal:
    assert value is not None
    return Decimal(str(value)).quantize(Decimal("0.01"))


def test_shared_gpus_are_costed_per_share_and_add_up_to_the_cent(tmp_path: Path) -> None:
    with serve_kube(shared_kube()) as url, serve_prometheus(shared_dcgm()) as prom:
        config = kubeconfig(tmp_path / "kubeconfig", url)
        code, out, err = _run(
            tmp_path, "scan", "--provider", "kubernetes", "--kubeconfig", str(config),
            "--context", "shared", "--prometheus", prom, "--format", "json",
        )  # fmt: skip
        _, markdown, _ = _run(
            tmp_path, "scan", "--provider", "kubernetes", "--kubeconfig", str(config),
            "--context", "shared", "--prometheus", prom, "--format", "markdown",
        )  # fmt: skip
    assert code == 1, err  # findings
    # reports show the shares: what a pod holds, what a node leaves free
    section = markdown[markdown.index("## Shared GPUs") :]
    assert "| h100-mig | mig: 1g.10gb×4, 3g.40gb×1 | \\$5,022.40 | 3: \\$3,587.43 |" in section
    assert "| 2 of 7: \\$1,434.97 |" in section
    assert "| team-a | \\$3,142.20 |" in section and "| team-b | \\$1,203.22 |" in section
    assert "| idle (unallocated shares) | \\$1,648.46 |" in section
    assert "| **total** | \\$5,993.88 |" in section
    for shown in (
        "(MIG 1g.10gb)",
        "(HAMi 30%)",
        "(mig, 2 of 7 free)",
        "(time-slicing, 1 of 4 free)",
    ):
        assert shown in markdown, shown
    report = json.loads(out)
    resources = report["resources"]
    nodes = {r["name"]: r for r in resources if r["kind"] == "instance"}
    pods = {r["id"]: r for r in resources if r["kind"] == "pod"}
    assert sorted(pods) == sorted(POD_COST)

    # every pod's share and cost
    for pod_id, (mode, profile, units, cost) in POD_COST.items():
        share = pods[pod_id]["share"]
        assert (share["mode"], share["profile"], share["units"]) == (mode, profile, units), pod_id
        assert _money(pods[pod_id]["monthly_cost_usd"]) == Decimal(cost), pod_id

    # each node: its shares, and pods + idle = its GPU cost, to the cent
    for name, (cost, per_gpu, offered, held, free, idle) in NODE_COST.items():
        node = nodes[name]
        share = node["share"]
        assert node["gpu"]["count"] == 1 and node["gpu"]["allocated"] is None
        assert (share["per_gpu"], share["units"], share["allocated"], share["free"]) == (
            per_gpu, offered, held, free,
        )  # fmt: skip
        assert _money(node["monthly_cost_usd"]) == Decimal(cost)
        assert _money(share["idle_usd"]) == Decimal(idle)
        on_node = [p for p in pods.values() if p["share"]["node"] == share["node"]]
        total = sum((_money(p["monthly_cost_usd"]) for p in on_node), Decimal(0))
        assert total + Decimal(idle) == Decimal(cost), name
    assert nodes["h100-mig"]["share"]["profile"] == "1g.10gb×4, 3g.40gb×1"
    assert nodes["h100-mig"]["gpu"]["model"] == "H100"

    # per team label: the teams' shares and the nodes' idle cost add up to the nodes' GPU cost
    by_team: dict[str, Decimal] = {}
    for p in pods.values():
        team = p["tags"]["team"]
        by_team[team] = by_team.get(team, Decimal(0)) + _money(p["monthly_cost_usd"])
    idle = sum((Decimal(v[5]) for v in NODE_COST.values()), Decimal(0))
    assert by_team == {"team-a": Decimal("3142.20"), "team-b": Decimal("1203.22")}
    assert idle == Decimal("1648.46")
    assert by_team["team-a"] + by_team["team-b"] + idle == Decimal("5993.88")

    # unallocated shares are findings, priced at the node's idle cost
    findings = report["findings"]
    unallocated = {
        resources[f["resource"]]["name"]: f for f in findings if f["rule_id"] == "gpu-unallocated"
    }
    assert sorted(unallocated) == ["h100-mig", "l4-hami", "t4-ts"]
    for name, finding in unallocated.items():
        assert _money(finding["monthly_savings_usd"]) == Decimal(NODE_COST[name][5])
        assert finding["field"] == "share.free"

    # a slice's own DCGM activity decides its idle verdict: nb-1g-a's slice is idle on a busy GPU
    idle_pods = {resources[f["resource"]]["id"]: f for f in findings if f["rule_id"] == "idle-gpu"}
    assert sorted(idle_pods) == ["shared/team-b/nb-1g-a"]
    assert _money(idle_pods["shared/team-b/nb-1g-a"]["monthly_savings_usd"]) == Decimal("717.48")
    slice_use = pods["shared/team-b/nb-1g-a"]["utilization"]
    assert (slice_use["gpu_avg"], slice_use["gpu_p95"]) == (0.8, 1.8)
    busy = pods["shared/team-a/trainer-3g"]["utilization"]
    assert (busy["gpu_avg"], busy["gpu_p95"]) == (85.0, 94.0)
    # a time-sliced replica reads the whole GPU's activity, and says so
    replica = pods["shared/team-a/ts-a"]
    assert replica["utilization"]["gpu_avg"] == 62.5
    assert "utilization is the whole GPU's" in replica["note"]


def test_a_job_asking_for_a_mig_slice_is_costed_at_the_slices_share(tmp_path: Path) -> None:
    job = tmp_path / "embed-eval.yaml"
    job.write_text(MIG_JOB)
    code, out, err = _run(tmp_path, "check", str(job), "--format", "json")
    assert code in (0, 1), err
    (resource,) = json.loads(out)["resources"]
    assert resource["share"]["mode"] == "mig" and resource["share"]["profile"] == "1g.10gb"
    assert (resource["share"]["units"], resource["share"]["per_gpu"]) == (1, 7)
    # 6.88 / 7 = 0.982857… per hour; × 730 = 717.49, the 1g slice's cost on the node above
    assert resource["price"]["hourly_usd"] == 0.98286
    assert _money(resource["monthly_cost_usd"]) == Decimal("717.49")
    assert resource["estimate"]["run_usd"] == 9.83  # 10 h cap × 0.982857
    code, out, err = _run(tmp_path, "estimate", str(job))
    assert code == 0, err
    assert "on-demand: $0.98/h, one run $9.83" in out
    assert "MIG 1g.10gb: 1/7 of a GPU's price" in out


def test_a_whole_h100_used_at_a_slices_worth_is_a_right_sizing_finding(tmp_path: Path) -> None:
    with serve_kube(shared_kube()) as url, serve_prometheus(shared_dcgm()) as prom:
        config = kubeconfig(tmp_path / "kubeconfig", url)
        code, out, err = _run(
            tmp_path, "scan", "--provider", "kubernetes", "--kubeconfig", str(config),
            "--context", "mixed", "--prometheus", prom, "--format", "json",
        )  # fmt: skip
    assert code == 1, err  # findings
    report = json.loads(out)
    (pod,) = [r for r in report["resources"] if r["kind"] == "pod"]
    # p5.48xlarge $55.04/h × 730 = $40179.20 over 8 GPUs × 7 slices; a whole GPU is 7 of 56
    assert _money(pod["monthly_cost_usd"]) == Decimal("5022.40")
    assert pod["share"]["slice_pct"] == 42.86  # the node's largest slice: 3g of 7
    (finding,) = [f for f in report["findings"] if f["rule_id"] == "gpu-fits-mig-slice"]
    # p95 30% fits ceil(0.30 × 7) = 3 compute slices: saves 4/7 of 5022.40 = 2869.94
    assert _money(finding["monthly_savings_usd"]) == Decimal("2869.94")
