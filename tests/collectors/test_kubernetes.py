"""The Kubernetes collector against the loopback API server, through the real client and a
generated kubeconfig: pagination, a 403 context, a retried 503, DCGM utilization."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from k8s_fixtures import dcgm_series, fleet, kubeconfig
from k8s_server import FakeKube, serve_kube, serve_prometheus

from gpu_audit.collectors.kubernetes.collector import KubernetesCollector
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.core.resource import Capacity, Kind, Resource, State, Workload
from gpu_audit.core.results import CoverageGap
from gpu_audit.errors import ConfigError

pytestmark = pytest.mark.server

BUSY = "ip-10-0-1-10.ec2.internal"
IDLE = "ip-10-0-1-20.ec2.internal"


def collect(
    settings: KubernetesSettings,
) -> tuple[dict[str, Resource], list[CoverageGap], KubernetesCollector]:
    collector = KubernetesCollector(settings)
    items = list(collector.collect())
    resources = {f"{r.cluster}:{r.name}": r for r in items if isinstance(r, Resource)}
    assert len(resources) == sum(isinstance(r, Resource) for r in items), "names are unique"
    return resources, [g for g in items if isinstance(g, CoverageGap)], collector


def settings_for(path: Path, *contexts: str, **more: object) -> KubernetesSettings:
    return KubernetesSettings(
        kubeconfig=str(path), contexts=contexts, page_size=2, timeout=5, **more
    )  # type: ignore[arg-type]


def test_gpu_nodes_and_pods_of_every_context_with_allocation_and_capacity(tmp_path: Path) -> None:
    fake = fleet()
    with serve_kube(fake) as url:
        config = kubeconfig(tmp_path / "config", url)
        resources, gaps, collector = collect(settings_for(config, "eks-prod", "gke-dev"))
    assert gaps == []
    nodes = {k: r for k, r in resources.items() if r.kind is Kind.INSTANCE}
    pods = {k: r for k, r in resources.items() if r.kind is Kind.POD}
    # the CPU node and the CPU, finished pods are not GPU capacity
    assert sorted(nodes) == [
        f"eks-prod:{BUSY}", f"eks-prod:{IDLE}", "gke-dev:gke-dev-a100-1", "gke-dev:gke-dev-h100-1"
    ]  # fmt: skip
    assert sorted(pods) == [
        "eks-prod:embed-api-7d9f8b6c5d-x2x9k", "eks-prod:llama-ft-worker-0", "eks-prod:sweep-17",
        "gke-dev:alice-0",
    ]  # fmt: skip
    busy = nodes[f"eks-prod:{BUSY}"]
    assert busy.id == "aws:///us-east-1a/i-0b0b0b0b0b0b0b0b0"
    assert (busy.service, busy.instance_type, busy.region, busy.zone) == (
        "eks", "p4d.24xlarge", "us-east-1", "us-east-1a"
    )  # fmt: skip
    assert (busy.gpu.count, busy.gpu.allocated, busy.capacity) == (8, 8, Capacity.ON_DEMAND)
    assert busy.workload is Workload.UNKNOWN  # a node's workload is its label's; pods are judged
    idle = nodes[f"eks-prod:{IDLE}"]
    assert (idle.gpu.count, idle.gpu.allocated, idle.capacity) == (4, 0, Capacity.SPOT)
    a100 = nodes["gke-dev:gke-dev-a100-1"]
    assert (a100.service, a100.capacity, a100.account) == ("gke", Capacity.SPOT, "ml-dev")
    assert a100.workload is Workload.UNKNOWN  # even when its one GPU pod is a notebook
    h100 = nodes["gke-dev:gke-dev-h100-1"]
    assert (h100.gpu.model, h100.capacity) == ("H100", Capacity.ON_DEMAND)  # GFD product label
    assert h100.tags["cloud.google.com/gke-nodepool"] == "h100"
    assert h100.launched_at is not None and h100.utilization.gpu_p95 is None

    train = pods["eks-prod:llama-ft-worker-0"]
    assert (train.id, train.gpu.count, train.gpu.model) == (
        "eks-prod/research/llama-ft-worker-0", 4, "A100-40GB"
    )  # fmt: skip
    assert (train.workload, train.capacity, train.region, train.state) == (
        Workload.TRAINING, Capacity.ON_DEMAND, "us-east-1", State.RUNNING
    )  # fmt: skip
    assert train.instance_type is None  # priced by its GPUs, never as a second copy of its node
    assert train.source.note == f"owner PyTorchJob/llama-ft; node {BUSY}"
    assert train.tags["team"] == "research"
    serve = pods["eks-prod:embed-api-7d9f8b6c5d-x2x9k"]
    assert serve.workload is Workload.INFERENCE
    assert serve.source.note is not None and "owner Deployment/embed-api;" in serve.source.note
    pending = pods["eks-prod:sweep-17"]
    assert (pending.state, pending.capacity, pending.gpu.model) == (
        State.PENDING,
        Capacity.SPOT,
        "A10G",
    )
    assert pending.source.note == "owner Job/sweep-17; not scheduled"
    notebook = pods["gke-dev:alice-0"]
    assert (notebook.workload, notebook.capacity) == (Workload.NOTEBOOK, Capacity.SPOT)
    assert collector.scope().accounts == ("eks-prod", "gke-dev")
    assert collector.scope().regions == ("us-central1", "us-east-1")

    # pages of at most two items, each asked with `limit` and followed by `continue`
    assert fake.pages("eks", "nodes") == 2 and fake.pages("eks", "pods") == 2
    asked = [r for r in fake.requests if r.token == "eks"]
    assert all(r.method == "GET" and r.query["limit"] == ["2"] for r in asked)
    assert sum("continue" in r.query for r in asked) == 2
    pods_query = next(r.query for r in asked if r.path == "/api/v1/pods")
    assert pods_query["fieldSelector"] == ["status.phase!=Succeeded,status.phase!=Failed"]


def test_a_forbidden_context_is_a_gap_and_a_503_is_retried(tmp_path: Path) -> None:
    fake = fleet()
    with serve_kube(fake) as url:
        config = kubeconfig(tmp_path / "config", url)
        resources, gaps, _ = collect(settings_for(config, "locked", "flaky"))
    assert [(g.provider, g.scope, g.error, g.account) for g in gaps] == [
        ("kubernetes", "context locked", "Forbidden (403)", "locked")
    ]
    assert gaps[0].message.startswith('nodes is forbidden: User "system:serviceaccount:audit')
    assert len(resources) == 5  # the flaky context, read after one 503
    assert fake.unavailable["flaky"] == 0
    assert sum(r.token == "flaky" and r.path == "/api/v1/nodes" for r in fake.requests) == 3


def test_an_answer_that_is_not_json_is_a_gap_not_a_traceback(tmp_path: Path) -> None:
    fake = fleet()
    fake.garbled.add("flaky")
    with serve_kube(fake) as url:
        config = kubeconfig(tmp_path / "config", url)
        _, gaps, _ = collect(settings_for(config, "flaky"))
    [gap] = gaps
    assert (gap.error, gap.account) == ("InvalidResponse", "flaky")
    assert gap.message.startswith("the API answered something that is not JSON")


def test_a_context_that_keeps_failing_is_a_gap_after_bounded_retries(tmp_path: Path) -> None:
    fake = fleet()
    fake.unavailable["flaky"] = 100
    with serve_kube(fake) as url:
        config = kubeconfig(tmp_path / "config", url)
        _, gaps, _ = collect(settings_for(config, "flaky", max_attempts=3))
    assert [(g.scope, g.error) for g in gaps] == [("context flaky", "Service Unavailable (503)")]
    assert 100 - fake.unavailable["flaky"] == 3


def test_the_current_context_by_default_and_unknown_contexts_refused(tmp_path: Path) -> None:
    with serve_kube(fleet()) as url:
        config = kubeconfig(tmp_path / "config", url, current="gke-dev")
        resources, _, _ = collect(settings_for(config))
        assert {r.cluster for r in resources.values()} == {"gke-dev"}
        with pytest.raises(
            ConfigError, match=r"--context nope: no such context in .*known: eks-prod"
        ):
            collect(settings_for(config, "nope"))
    with pytest.raises(ConfigError, match=r"--kubeconfig .*missing: no such file"):
        collect(settings_for(tmp_path / "missing"))


def test_an_unreachable_server_is_a_gap(tmp_path: Path) -> None:
    with serve_kube(FakeKube()) as url:
        pass  # the port is closed again
    config = kubeconfig(tmp_path / "config", url)
    _, gaps, _ = collect(settings_for(config, "eks-prod", max_attempts=1))
    assert [g.scope for g in gaps] == ["context eks-prod"]
    assert gaps[0].error == "Unreachable" and gaps[0].message.startswith("cannot connect to ")


def test_dcgm_utilization_per_node_and_pod_in_eight_queries(tmp_path: Path) -> None:
    prometheus = dcgm_series()
    prometheus.failing = 1  # one 503, retried
    with serve_kube(fleet()) as url, serve_prometheus(prometheus) as prom:
        config = kubeconfig(tmp_path / "config", url)
        resources, _, _ = collect(settings_for(config, "eks-prod", "gke-dev", prometheus=prom))
    # eleven queries (four for MIG slices, three for profiling activity), one retried
    assert len(prometheus.queries) == 12
    assert prometheus.queries[1] == (
        "avg by (Hostname, hostname) (avg_over_time(DCGM_FI_DEV_GPU_UTIL[1440m]))"
    )
    assert 'DCGM_FI_DEV_GPU_UTIL{pod!=""}[1440m]' in prometheus.queries[4]
    assert 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{GPU_I_ID!=""}[1440m]' in prometheus.queries[-4]
    busy = resources[f"eks-prod:{BUSY}"].utilization
    assert (busy.gpu_avg, busy.gpu_p95, busy.window_hours) == (42.6, 94.0, 24.0)
    idle = resources[f"eks-prod:{IDLE}"].utilization
    assert (idle.gpu_avg, idle.gpu_p95) == (0.0, 0.0)
    serve = resources["eks-prod:embed-api-7d9f8b6c5d-x2x9k"].utilization
    assert (serve.gpu_avg, serve.gpu_p95) == (1.2, 2.8)
    train = resources["eks-prod:llama-ft-worker-0"].utilization
    assert (train.gpu_avg, train.gpu_p95) == (84.0, 94.0)
    # no series: missing, not zero
    assert resources["gke-dev:alice-0"].utilization.gpu_avg is None
    assert resources["gke-dev:gke-dev-h100-1"].utilization.gpu_p95 is None


def test_without_prometheus_utilization_is_missing_and_a_failing_one_leaves_a_note(
    tmp_path: Path,
) -> None:
    prometheus = replace(dcgm_series(), failing=100)
    with serve_kube(fleet()) as url, serve_prometheus(prometheus) as prom:
        config = kubeconfig(tmp_path / "config", url)
        plain, _, _ = collect(settings_for(config, "eks-prod"))
        failed, gaps, _ = collect(settings_for(config, "eks-prod", prometheus=prom, max_attempts=2))
    assert all(r.utilization.gpu_p95 is None for r in plain.values())
    assert gaps == [] and len(prometheus.queries) == 2
    node = failed[f"eks-prod:{IDLE}"]
    assert node.utilization.gpu_avg is None
    assert node.source.note == f"utilization unavailable: Prometheus {prom}: HTTP 503: busy"
