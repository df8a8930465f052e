"""`scan --provider aws --provider kubernetes`: an EKS node is its EC2 instance, listed once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from k8s_fixtures import EKS_ZONE, TAGS, kubeconfig, node, pod
from k8s_server import FakeCluster, FakeKube, serve_kube

from gpu_audit.cli.runners import ScanRequest, run_scan
from gpu_audit.core.resource import Kind
from gpu_audit.settings import Settings

pytestmark = pytest.mark.server

Fleet = Any  # conftest.Fleet: `from conftest import` finds whichever conftest came first


def test_a_node_seen_by_both_scans_is_one_resource(aws_fleet: Fleet, tmp_path: Path) -> None:
    [joined_id] = aws_fleet.launch("us-east-1", "p4d.24xlarge", tags={"team": "research"})
    [other_id] = aws_fleet.launch("us-east-1", "g5.xlarge", tags={"team": "vision"})
    labels = {**EKS_ZONE, "node.kubernetes.io/instance-type": "p4d.24xlarge",
              "eks.amazonaws.com/capacityType": "ON_DEMAND"}  # fmt: skip
    gpu_node = node("ip-10-0-1-10.ec2.internal", labels, gpus=8,
                    provider_id=f"aws:///us-east-1a/{joined_id}")  # fmt: skip
    lone = node("ip-10-0-9-9.ec2.internal", labels, gpus=8,
                provider_id="aws:///us-east-1a/i-0000000000000dead")  # fmt: skip
    worker = pod("llama-ft-worker-0", "research", 8, "ip-10-0-1-10.ec2.internal", labels=TAGS,
                 owner=("PyTorchJob", "llama-ft"))  # fmt: skip
    fake = FakeKube(clusters={"eks": FakeCluster(nodes=[gpu_node, lone], pods=[worker])})
    with serve_kube(fake) as url:
        config = kubeconfig(tmp_path / "kubeconfig", url)
        flags = (("--region", ("us-east-1",)), ("--kubeconfig", str(config)))
        request = ScanRequest(providers=("aws", "kubernetes"), flags=flags)
        result = run_scan(request, Settings())
    assert result.coverage_gaps == ()
    instances = {r.id: r for r in result.resources if r.kind is Kind.INSTANCE}
    # the joined node, the plain EC2 instance, and a node whose instance the AWS scan did not see
    assert sorted(instances) == sorted(
        [joined_id, other_id, "aws:///us-east-1a/i-0000000000000dead"]
    )
    one = instances[joined_id]
    assert (one.provider, one.cluster, one.gpu.count, one.gpu.allocated) == (
        "aws",
        "eks-prod",
        8,
        8,
    )
    assert (
        one.tags["team"] == "research" and one.tags["eks.amazonaws.com/capacityType"] == "ON_DEMAND"
    )
    assert instances[other_id].cluster is None
    assert [r.name for r in result.resources if r.kind is Kind.POD] == ["llama-ft-worker-0"]
    fired = {(f.rule_id, f.resource.id) for f in result.findings}
    assert ("gpu-unallocated", joined_id) not in fired  # all 8 GPUs are held
    assert ("gpu-unallocated", "aws:///us-east-1a/i-0000000000000dead") in fired
