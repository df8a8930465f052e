"""DCGM profiling activity joined to a pod's knobs, through the real Kubernetes client against the
loopback API server and the Prometheus-shaped server: the exporter's host label in both spellings
(`Hostname` before dcgm-exporter PR #655, `hostname` after), a busy GPU with idle tensor pipes
(precision), a mostly idle GPU with no data-loader workers (the input pipeline), a control, and a
pod measured by `DCGM_FI_DEV_GPU_UTIL` alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from k8s_fixtures import kubeconfig, node, pod
from k8s_server import FakeCluster, FakeKube, FakePrometheus, serve_kube, serve_prometheus

from gpu_audit.audit import audit
from gpu_audit.collectors.kubernetes.collector import KubernetesCollector
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import Scope
from gpu_audit.policy.loader import load_policy

pytestmark = pytest.mark.server

OLD, NEW = "ip-10-0-2-10.ec2.internal", "ip-10-0-2-20.ec2.internal"  # `Hostname`, `hostname`
ZONE = {"topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": "us-east-1a"}
P4D = {**ZONE, "node.kubernetes.io/instance-type": "p4d.24xlarge",
       "eks.amazonaws.com/capacityType": "ON_DEMAND"}  # fmt: skip
TAGS = {"team": "research", "project": "llm", "owner": "alice"}


def _trainer(name: str, host: str, args: list[str]) -> dict[str, object]:
    raw = pod(name, "research", 2, host, labels=TAGS, owner=("PyTorchJob", name))
    container = raw["spec"]["containers"][0]  # type: ignore[index]
    container["command"] = ["torchrun", "--nproc_per_node", "2", "train.py"]
    container["args"] = args
    return raw


def cluster() -> FakeKube:
    nodes = [
        node(OLD, P4D, gpus=8, provider_id="aws:///us-east-1a/i-0a0a0a0a0a0a0a0a1"),
        node(NEW, P4D, gpus=8, provider_id="aws:///us-east-1a/i-0a0a0a0a0a0a0a0a2"),
    ]
    pods = [
        _trainer("fp32-busy", OLD, ["--dataloader_num_workers", "8"]),
        _trainer("healthy", OLD, ["--bf16", "--dataloader_num_workers", "8"]),
        _trainer("starved", NEW, ["--bf16", "--per_device_train_batch_size", "8"]),
        _trainer("util-only", NEW, ["--bf16", "--dataloader_num_workers", "0"]),
    ]
    return FakeKube(clusters={"eks": FakeCluster(nodes=nodes, pods=pods)})


def dcgm() -> FakePrometheus:
    """Per-GPU series: the old exporter on one node (`Hostname`), the new one (`hostname`) on the
    other; profiling counters as 0-1 ratios; `util-only` has DCGM_FI_DEV_GPU_UTIL alone."""
    figures = {  # pod: (host, GPU_UTIL %, engine, tensor, dram)
        "fp32-busy": (OLD, 92.0, 0.85, 0.02, 0.40),
        "healthy": (OLD, 95.0, 0.88, 0.45, 0.50),
        "starved": (NEW, 30.0, 0.20, 0.12, 0.05),
        "util-only": (NEW, 25.0, None, None, None),
    }
    series: list[tuple[dict[str, str], list[float]]] = []
    for index, (name, (host, util, engine, tensor, dram)) in enumerate(figures.items()):
        host_label = "Hostname" if host == OLD else "hostname"
        for gpu in (2 * index % 8, 2 * index % 8 + 1):
            labels = {"gpu": str(gpu), host_label: host, "namespace": "research", "pod": name}
            series.append(({"__name__": "DCGM_FI_DEV_GPU_UTIL", **labels}, [util] * 4))
            for metric, value in (("GR_ENGINE_ACTIVE", engine), ("PIPE_TENSOR_ACTIVE", tensor),
                                  ("DRAM_ACTIVE", dram)):  # fmt: skip
                if value is not None:
                    series.append(({"__name__": f"DCGM_FI_PROF_{metric}", **labels}, [value] * 4))
    return FakePrometheus(series=series)


@pytest.fixture
def scanned(tmp_path: Path) -> dict[str, Resource]:
    prometheus = dcgm()
    with serve_kube(cluster()) as url, serve_prometheus(prometheus) as prom:
        config = kubeconfig(tmp_path / "config", url)
        settings = KubernetesSettings(
            kubeconfig=str(config), contexts=("eks-prod",), timeout=5, prometheus=prom
        )
        items = [r for r in KubernetesCollector(settings).collect() if isinstance(r, Resource)]
    assert len(prometheus.queries) == 11
    return {r.name or r.id: r for r in items}


def _findings(resources: dict[str, Resource]) -> dict[tuple[str, str], object]:
    scope = Scope(command="scan")
    result = audit(list(resources.values()), load_policy(None), datetime.now(UTC), scope)
    knob_rules = ("tensor-pipes-idle", "input-pipeline-starved")
    return {
        (f.resource.name or "", f.rule_id): f for f in result.findings if f.rule_id in knob_rules
    } | {
        (n.resource.name or "", f"not-evaluated:{n.rule_id}"): n
        for n in result.not_evaluated
        if n.rule_id in knob_rules
    }


def test_both_host_label_spellings_find_their_node(scanned: dict[str, Resource]) -> None:
    old, new = scanned[OLD].utilization, scanned[NEW].utilization
    assert old.gpu_avg == pytest.approx(93.5) and old.window_hours == 24.0
    assert new.gpu_avg == pytest.approx(27.5)  # `hostname`: no longer silently missing


def test_profiling_activity_and_knobs_on_each_pod(scanned: dict[str, Resource]) -> None:
    busy = scanned["fp32-busy"]
    assert (busy.activity.engine_pct, busy.activity.tensor_pct, busy.activity.dram_pct) == (
        85.0, 2.0, 40.0,
    )  # fmt: skip
    assert busy.activity.measured_by == "profiling" and busy.activity.window_hours == 24.0
    assert busy.training.workers == 8 and busy.training.precision is None
    assert "activity over 24h (DCGM profiling): engine 85%, tensor pipes 2%, memory 40%" in (
        busy.source.note or ""
    )
    starved = scanned["starved"]
    assert starved.training.workers == 0  # HF Trainer's default: the command states none
    assert starved.training.precision == "bf16"
    only = scanned["util-only"]
    assert only.activity.measured_by == "gpu-util" and only.activity.engine_pct == 25.0
    assert only.activity.tensor_pct is None
    assert "DCGM_FI_DEV_GPU_UTIL 25% over 24h (no profiling metrics" in (only.source.note or "")


def test_the_two_measured_cases_and_the_control(scanned: dict[str, Resource]) -> None:
    found = _findings(scanned)
    precision = found[("fp32-busy", "tensor-pipes-idle")]
    assert "activity.tensor_pct = 2" in precision.actual  # type: ignore[attr-defined]
    assert "activity.engine_pct = 85" in precision.actual  # type: ignore[attr-defined]
    pod_hourly = precision.resource.price.hourly_usd  # type: ignore[attr-defined]
    assert pod_hourly and precision.monthly_savings_usd == pytest.approx(  # type: ignore[attr-defined]
        pod_hourly * 730 / 3, abs=0.02
    )
    starved = found[("starved", "input-pipeline-starved")]
    assert "training.workers = 0" in starved.actual  # type: ignore[attr-defined]
    priced = starved.resource  # type: ignore[attr-defined]
    hourly = priced.price.hourly_usd
    assert hourly and starved.monthly_savings_usd == pytest.approx(  # type: ignore[attr-defined]
        hourly * 730 * (1 - 20 / 90), abs=0.02
    )
    assert starved.monthly_savings_usd <= priced.monthly_cost_usd  # type: ignore[attr-defined]
    # the control and the GPU_UTIL-only pod (its 0 workers: busy is GPU_UTIL's 25%)
    assert not any(name == "healthy" for name, _ in found)
    assert ("util-only", "input-pipeline-starved") in found
    assert ("util-only", "tensor-pipes-idle") not in found  # mostly idle: out of scope
