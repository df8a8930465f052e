"""A Kubernetes node the cloud scan also listed is one resource, joined by provider id."""

from __future__ import annotations

from gpu_audit.core.canonical import from_mapping
from gpu_audit.core.resource import Capacity, Resource
from gpu_audit.node_join import cloud_id, join_nodes


def resource(**fields: object) -> Resource:
    return from_mapping({"state": "running", **fields})


def test_provider_ids_name_the_cloud_instance() -> None:
    assert cloud_id("aws:///us-east-1a/i-0b0b0b0b0b0b0b0b0") == ("aws", "i-0b0b0b0b0b0b0b0b0")
    assert cloud_id("gce://ml-dev/us-central1-a/gke-a100-1") == (
        "gcp",
        "projects/ml-dev/zones/us-central1-a/instances/gke-a100-1",
    )
    assert cloud_id("kind://docker/kind/kind-worker") is None
    assert cloud_id("aws:///us-east-1a/fargate-ip-10-0-0-1") is None
    assert cloud_id("gce://only/two") is None


def test_a_node_merges_into_its_instance_and_the_rest_is_untouched() -> None:
    ec2 = resource(
        provider="aws", id="i-0b0b", service="ec2", account="111122223333", region="us-east-1",
        instance_type="p4d.24xlarge", capacity="on-demand", tags={"team": "research"},
    )  # fmt: skip
    node = resource(
        provider="kubernetes", id="aws:///us-east-1a/i-0b0b", name="ip-10-0-1-10", cluster="eks",
        service="eks", region="us-east-1", zone="us-east-1a", instance_type="p4d.24xlarge",
        capacity="spot", gpu={"count": 8, "allocated": 4},
        utilization={"gpu_avg": 40, "gpu_p95": 90, "window_hours": 24},
        tags={"team": "platform", "karpenter.sh/nodepool": "gpu"},
    )  # fmt: skip
    lone_node = resource(provider="kubernetes", id="kind://docker/kind/w", cluster="kind")
    pod = resource(kind="pod", provider="kubernetes", id="eks/ns/p", cluster="eks")
    gce = resource(provider="gcp", id="projects/p/zones/z/instances/vm")
    joined = join_nodes([ec2, node, lone_node, pod, gce])
    assert [r.id for r in joined] == ["i-0b0b", "kind://docker/kind/w", "eks/ns/p", gce.id]
    one = joined[0]
    assert (one.provider, one.service, one.account, one.cluster) == (
        "aws", "ec2", "111122223333", "eks"
    )  # fmt: skip
    assert one.capacity is Capacity.ON_DEMAND  # the cloud's word on billing wins
    assert (one.gpu.count, one.gpu.allocated, one.zone) == (8, 4, "us-east-1a")
    assert one.utilization.gpu_p95 == 90  # no cloud agent: the DCGM figures
    assert one.tags == {"team": "research", "karpenter.sh/nodepool": "gpu"}
    assert one.source.note == "Kubernetes node ip-10-0-1-10 in eks"


def test_without_the_cloud_scan_nodes_stay_as_they_are() -> None:
    node = resource(provider="kubernetes", id="gce://p/z/n", cluster="gke", capacity="spot")
    assert join_nodes([node]) == [node]
