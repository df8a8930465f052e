"""A small multi-cluster fleet for the Kubernetes collector tests, and its kubeconfig.

Cluster `eks-prod` (token `eks`): an on-demand 8-GPU node half held by a PyTorchJob pod and half
by an idle Deployment pod, an unallocated Karpenter spot node, a CPU node, a pending GPU pod
(nodeSelector: spot), a finished GPU pod and a CPU pod. Cluster `gke-dev` (token `gke`): a spot A100
node with a notebook pod, and an H100 node of an instance type the catalog does not know.
Context `locked` answers 403; context `flaky` serves one 503 before the EKS cluster.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from k8s_server import FakeCluster, FakeKube, FakePrometheus

NOW = datetime.now(UTC)


def _iso(delta: timedelta) -> str:
    return (NOW - delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def node(
    name: str,
    labels: dict[str, str],
    gpus: int = 0,
    provider_id: str | None = None,
    age: timedelta = timedelta(days=3),
    resource: str = "nvidia.com/gpu",
) -> dict[str, Any]:
    capacity = {"cpu": "96", "memory": "1152Gi", "pods": "110"}
    if gpus:
        capacity[resource] = str(gpus)
    spec: dict[str, Any] = {"providerID": provider_id} if provider_id else {}
    return {
        "metadata": {"name": name, "labels": labels, "creationTimestamp": _iso(age)},
        "spec": spec,
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def pod(
    name: str,
    namespace: str,
    gpus: int,
    node_name: str | None,
    *,
    phase: str = "Running",
    labels: dict[str, str] | None = None,
    owner: tuple[str, str] | None = None,
    image: str = "ghcr.io/example/trainer:1.0",
    node_selector: dict[str, str] | None = None,
    age: timedelta = timedelta(days=2),
) -> dict[str, Any]:
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": image, "resources": resources}]
    }
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = node_selector
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": labels or {},
        "creationTimestamp": _iso(age),
    }
    if owner:
        kind, owner_name = owner
        metadata["ownerReferences"] = [
            {"apiVersion": "v1", "kind": kind, "name": owner_name, "uid": "u", "controller": True}
        ]
    status: dict[str, Any] = {"phase": phase}
    if phase == "Running":
        status["startTime"] = _iso(age)
    return {"metadata": metadata, "spec": spec, "status": status}


EKS_ZONE = {
    "topology.kubernetes.io/region": "us-east-1",
    "topology.kubernetes.io/zone": "us-east-1a",
}
TAGS = {"team": "research", "project": "llm", "owner": "alice"}


def eks_cluster() -> FakeCluster:
    busy = node(
        "ip-10-0-1-10.ec2.internal",
        {**EKS_ZONE, "node.kubernetes.io/instance-type": "p4d.24xlarge",
         "eks.amazonaws.com/capacityType": "ON_DEMAND", "eks.amazonaws.com/nodegroup": "gpu"},
        gpus=8,
        provider_id="aws:///us-east-1a/i-0b0b0b0b0b0b0b0b0",
    )  # fmt: skip
    idle = node(
        "ip-10-0-1-20.ec2.internal",
        {**EKS_ZONE, "node.kubernetes.io/instance-type": "g5.12xlarge",
         "karpenter.sh/capacity-type": "spot", "karpenter.sh/nodepool": "gpu-spot"},
        gpus=4,
        provider_id="aws:///us-east-1a/i-0d1e1d1e1d1e1d1e1",
    )  # fmt: skip
    cpu = node(
        "ip-10-0-1-30.ec2.internal",
        {**EKS_ZONE, "node.kubernetes.io/instance-type": "m5.large",
         "eks.amazonaws.com/capacityType": "ON_DEMAND"},
        provider_id="aws:///us-east-1a/i-0c0c0c0c0c0c0c0c0",
    )  # fmt: skip
    pods = [
        pod("llama-ft-worker-0", "research", 4, busy["metadata"]["name"],
            labels={**TAGS, "training.kubeflow.org/job-name": "llama-ft"},
            owner=("PyTorchJob", "llama-ft")),
        pod("embed-api-7d9f8b6c5d-x2x9k", "serving", 4, busy["metadata"]["name"],
            labels={"app": "embed-api", "pod-template-hash": "7d9f8b6c5d"},
            owner=("ReplicaSet", "embed-api-7d9f8b6c5d"), image="ghcr.io/example/embed:2"),
        pod("sweep-17", "research", 1, None, phase="Pending", labels=TAGS,
            owner=("Job", "sweep-17"), node_selector={"karpenter.sh/capacity-type": "spot",
            "node.kubernetes.io/instance-type": "g5.xlarge"}, age=timedelta(minutes=5)),
        pod("eval-done", "research", 8, busy["metadata"]["name"], phase="Succeeded",
            owner=("Job", "eval")),
        pod("coredns-abc", "kube-system", 0, cpu["metadata"]["name"]),
    ]  # fmt: skip
    return FakeCluster(nodes=[busy, cpu, idle], pods=pods)


def gke_cluster() -> FakeCluster:
    pool = {
        "topology.kubernetes.io/region": "us-central1",
        "topology.kubernetes.io/zone": "us-central1-a",
    }
    a100 = node(
        "gke-dev-a100-1",
        {**pool, "node.kubernetes.io/instance-type": "a2-highgpu-1g",
         "cloud.google.com/gke-nodepool": "a100", "cloud.google.com/gke-spot": "true"},
        gpus=1,
        provider_id="gce://ml-dev/us-central1-a/gke-dev-a100-1",
    )  # fmt: skip
    h100 = node(
        "gke-dev-h100-1",
        {**pool, "node.kubernetes.io/instance-type": "custom-h100-node",
         "cloud.google.com/gke-nodepool": "h100", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        gpus=8,
        provider_id="gce://ml-dev/us-central1-a/gke-dev-h100-1",
    )  # fmt: skip
    notebook = pod(
        "alice-0", "notebooks", 1, a100["metadata"]["name"],
        labels={"notebook-name": "alice", **TAGS}, owner=("StatefulSet", "alice"),
        image="jupyter/pytorch-notebook:latest",
    )  # fmt: skip
    return FakeCluster(nodes=[a100, h100], pods=[notebook])


def fleet() -> FakeKube:
    eks = eks_cluster()
    return FakeKube(
        clusters={"eks": eks, "gke": gke_cluster(), "flaky": eks_cluster()},
        forbidden={"locked"},
        unavailable={"flaky": 1},
    )


def kubeconfig(path: Path, server: str, current: str = "eks-prod") -> Path:
    contexts = {"eks-prod": "eks", "gke-dev": "gke", "locked": "locked", "flaky": "flaky"}
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [{"name": "loopback", "cluster": {"server": server}}],
        "users": [{"name": token, "user": {"token": token}} for token in contexts.values()],
        "contexts": [
            {"name": name, "context": {"cluster": "loopback", "user": token}}
            for name, token in contexts.items()
        ],
    }
    path.write_text(yaml.safe_dump(document))
    return path


def dcgm_series() -> FakePrometheus:
    """Per-GPU utilization samples as the DCGM exporter labels them (Hostname, pod, namespace)."""
    series: list[tuple[dict[str, str], list[float]]] = []
    host = "ip-10-0-1-10.ec2.internal"
    for gpu in range(8):
        labels = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": str(gpu), "Hostname": host}
        if gpu < 4:  # the training pod: busy
            labels |= {"namespace": "research", "pod": "llama-ft-worker-0"}
            series.append((labels, [80.0, 90.0, 95.0, 70.0, 85.0]))
        else:  # the idle Deployment pod
            labels |= {"namespace": "serving", "pod": "embed-api-7d9f8b6c5d-x2x9k"}
            series.append((labels, [0.0, 1.0, 2.0, 0.0, 3.0]))
    idle_host = "ip-10-0-1-20.ec2.internal"
    for gpu in range(4):  # no pod: the exporter leaves pod and namespace empty
        labels = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": str(gpu), "Hostname": idle_host}
        series.append((labels, [0.0, 0.0, 0.0]))
    return FakePrometheus(series=series)
