"""The Kubernetes collector's translation of labels, requests and owners, case by case."""

from __future__ import annotations

from typing import Any

import pytest

from gpu_audit.cli.runners import ScanRequest, with_flags
from gpu_audit.collectors.kubernetes.nodes import capacity_of, gpu_model_of, service_of
from gpu_audit.collectors.kubernetes.pods import gpus_requested, owner_of, workload_of
from gpu_audit.core.resource import Capacity, Workload
from gpu_audit.errors import ConfigError
from gpu_audit.settings import Settings

GPUS = ("nvidia.com/gpu", "amd.com/gpu")


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"karpenter.sh/capacity-type": "spot"}, Capacity.SPOT),
        ({"karpenter.sh/capacity-type": "on-demand"}, Capacity.ON_DEMAND),
        ({"karpenter.sh/capacity-type": "reserved"}, Capacity.RESERVED),
        ({"eks.amazonaws.com/capacityType": "SPOT"}, Capacity.SPOT),
        ({"eks.amazonaws.com/capacityType": "ON_DEMAND"}, Capacity.ON_DEMAND),
        ({"eks.amazonaws.com/capacityType": "CAPACITY_BLOCK"}, Capacity.RESERVED),
        (
            {"cloud.google.com/gke-spot": "true", "cloud.google.com/gke-nodepool": "a"},
            Capacity.SPOT,
        ),
        ({"cloud.google.com/gke-preemptible": "true"}, Capacity.SPOT),
        ({"cloud.google.com/gke-nodepool": "a100"}, Capacity.ON_DEMAND),
        ({"kubernetes.azure.com/scalesetpriority": "spot"}, Capacity.SPOT),
        ({"kubernetes.azure.com/agentpool": "gpu"}, Capacity.ON_DEMAND),
        ({"node.kubernetes.io/instance-type": "p4d.24xlarge"}, Capacity.UNKNOWN),
        ({"karpenter.sh/capacity-type": "something-new"}, Capacity.UNKNOWN),
    ],
)
def test_capacity_from_the_node_pool_labels(labels: dict[str, str], expected: Capacity) -> None:
    assert capacity_of(labels) is expected


def test_service_and_gpu_class_from_labels() -> None:
    assert service_of({"eks.amazonaws.com/nodegroup": "gpu"}) == "eks"
    assert service_of({"karpenter.k8s.aws/instance-family": "p5"}) == "eks"
    assert service_of({"cloud.google.com/gke-nodepool": "a"}) == "gke"
    assert service_of({"kubernetes.azure.com/agentpool": "a"}) == "aks"
    assert service_of({"kubernetes.io/hostname": "x"}) == "kubernetes"
    assert gpu_model_of({}, "g5.12xlarge") == "A10G"  # the catalog first
    product = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert gpu_model_of(product, "bare-metal-x") == "H100"
    assert gpu_model_of({"cloud.google.com/gke-accelerator": "nvidia-l4"}, None) == "L4"
    assert gpu_model_of({"nvidia.com/gpu.product": "Mystery-X1"}, None) == "Mystery-X1"
    assert gpu_model_of({}, None) is None


def test_gpus_requested_by_containers_and_init_containers() -> None:
    def container(limits: dict[str, str] | None = None, **requests: str) -> dict[str, Any]:
        return {"resources": {"limits": limits or {}, "requests": dict(requests)}}

    spec = {"containers": [container({"nvidia.com/gpu": "2"}), container({"amd.com/gpu": "1"})]}
    assert gpus_requested(spec, GPUS) == 3
    spec = {"containers": [container()], "initContainers": [container({"nvidia.com/gpu": "4"})]}
    assert gpus_requested(spec, GPUS) == 4
    assert gpus_requested({"containers": [container({"nvidia.com/gpu": "x"})]}, GPUS) == 0
    assert gpus_requested({"containers": [container({"nvidia.com/mig-1g.5gb": "1"})]}, GPUS) == 0
    assert gpus_requested({}, GPUS) == 0


def _meta(labels: dict[str, str] | None = None, kind: str | None = None, name: str = "x") -> Any:
    refs = [{"kind": kind, "name": name, "controller": True}] if kind else []
    return {"labels": labels or {}, "ownerReferences": refs}


@pytest.mark.parametrize(
    ("metadata", "image", "owner", "workload"),
    [
        (_meta(kind="PyTorchJob", name="ft"), "", ("PyTorchJob", "ft"), Workload.TRAINING),
        (_meta(kind="Job", name="j"), "", ("Job", "j"), Workload.TRAINING),
        (_meta(kind="MPIJob", name="m"), "", ("MPIJob", "m"), Workload.TRAINING),
        (
            _meta({"ray.io/originated-from-crd": "RayJob", "ray.io/originated-from-cr-name": "r"},
                  kind="RayCluster", name="r-raycluster-abc"),
            "", ("RayJob", "r"), Workload.TRAINING,
        ),
        (
            _meta({"ray.io/originated-from-crd": "RayService", "ray.io/originated-from-cr-name": "s"},
                  kind="RayCluster", name="s-raycluster-x"),
            "", ("RayService", "s"), Workload.INFERENCE,
        ),
        (_meta(kind="RayCluster", name="adhoc"), "", ("RayCluster", "adhoc"), Workload.UNKNOWN),
        (
            _meta({"pod-template-hash": "5d8f"}, kind="ReplicaSet", name="api-5d8f"),
            "", ("Deployment", "api"), Workload.INFERENCE,
        ),
        (
            _meta({"serving.kserve.io/inferenceservice": "llm"}, kind="ReplicaSet", name="llm-p-1"),
            "", ("InferenceService", "llm"), Workload.INFERENCE,
        ),
        (_meta(kind="StatefulSet", name="db"), "", ("StatefulSet", "db"), Workload.UNKNOWN),
        (_meta(), "quay.io/jupyter/pytorch-notebook:cuda12", None, Workload.NOTEBOOK),
        (_meta({"workload": "training"}), "", None, Workload.TRAINING),
        (_meta({"workload": "batch"}), "", None, Workload.UNKNOWN),
    ],
)  # fmt: skip
def test_owner_and_workload_from_the_pod_itself(
    metadata: Any, image: str, owner: tuple[str, str] | None, workload: Workload
) -> None:
    spec = {"containers": [{"image": image}]}
    assert owner_of(metadata) == owner
    assert workload_of(metadata["labels"], owner, spec, "workload") is workload


def test_a_prometheus_that_is_not_a_url_is_a_usage_error() -> None:
    flags = (("--prometheus", "prometheus:9090"),)
    with pytest.raises(ConfigError, match="--prometheus prometheus:9090: expected an http"):
        with_flags(Settings(), ScanRequest(providers=("kubernetes",), flags=flags))
