"""`scan --provider azure --provider kubernetes`: AKS GPU nodes are scale-set instances, counted
once, in their scale set (joined by provider id)."""

from __future__ import annotations

from pathlib import Path

import pytest
from azure_fixtures import SUB_A, scenario
from azure_server import serve
from k8s_fixtures import TAGS, kubeconfig, node, pod
from k8s_server import FakeCluster, FakeKube, serve_kube

from gpu_audit.cli.runners import ScanRequest, run_scan
from gpu_audit.core.resource import Kind
from gpu_audit.settings import Settings

pytestmark = [pytest.mark.slow, pytest.mark.server]
SCALE_SET = (
    f"/subscriptions/{SUB_A}/resourceGroups/MC_aks_gpu_eastus/providers/Microsoft.Compute/"
    "virtualMachineScaleSets/aks-gpupool-12345678-vmss"
)


def test_aks_nodes_join_their_scale_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    labels = {"node.kubernetes.io/instance-type": "Standard_NC6s_v3",
              "kubernetes.azure.com/agentpool": "gpupool"}  # fmt: skip
    nodes = [
        node(
            f"aks-gpupool-12345678-vmss00000{n}",
            labels,
            gpus=1,
            provider_id=f"azure://{SCALE_SET}/virtualMachines/{n}",
        )
        for n in (0, 1)
    ]
    stray = node("aks-other-vmss000000", labels, gpus=1,
                 provider_id=f"azure://{SCALE_SET.replace('gpupool', 'other')}/virtualMachines/0")  # fmt: skip
    worker = pod("trainer-0", "research", 1, "aks-gpupool-12345678-vmss000000", labels=TAGS)
    fake = FakeKube(clusters={"eks": FakeCluster(nodes=[*nodes, stray], pods=[worker])})
    with serve(scenario()) as azure_url, serve_kube(fake) as kube_url:
        monkeypatch.setenv("GPU_AUDIT_AZURE_ENDPOINT", azure_url)
        config = kubeconfig(tmp_path / "kubeconfig", kube_url)
        flags = (("--subscription", (SUB_A,)), ("--kubeconfig", str(config)))
        result = run_scan(ScanRequest(providers=("azure", "kubernetes"), flags=flags), Settings())
    assert result.coverage_gaps == ()
    instances = {r.id: r for r in result.resources if r.kind is Kind.INSTANCE}
    joined = instances[SCALE_SET.lower()]
    assert (joined.provider, joined.cluster, joined.gpu.count, joined.gpu.allocated) == (
        "azure",
        "eks-prod",
        3,
        1,  # the two nodes' allocations add up (the third instance is not in the cluster)
    )
    assert not [i for i in instances if i.startswith(f"azure://{SCALE_SET}")]  # counted once
    assert f"azure://{SCALE_SET.replace('gpupool', 'other')}/virtualMachines/0" in instances
    fired = {(f.rule_id, f.resource.id) for f in result.findings}
    assert ("gpu-unallocated", SCALE_SET.lower()) in fired
    saving = next(f for f in result.findings if f.rule_id == "gpu-unallocated"
                  and f.resource.id == SCALE_SET.lower()).monthly_savings_usd  # fmt: skip
    assert saving == round(6701.4 * 2 / 3, 2)
