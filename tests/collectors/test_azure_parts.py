"""The Azure collector's parts: one mapping for Resource Graph rows and ARM objects, scale sets'
priority mix, sizes, provider ids, the loopback rule, and the read-only role."""

from __future__ import annotations

import json
import re

import pytest
from azure_fixtures import SUB_A, SUB_B, capacity_group, scale_set, scenario, vm
from azure_server import graph_row, serve
from tests.conftest import ROOT

from gpu_audit.catalog import instance_spec
from gpu_audit.collectors.azure.collector import AzureCollector
from gpu_audit.collectors.azure.connect import ENDPOINT_ENV, Arm
from gpu_audit.collectors.azure.mapping import (
    is_gpu_size,
    power_state,
    regular_count,
    scale_set_resources,
    vm_resource,
)
from gpu_audit.collectors.azure.settings import AzureSettings
from gpu_audit.core.endpoint import is_loopback
from gpu_audit.core.resource import Capacity, Resource, State
from gpu_audit.node_join import cloud_id


@pytest.mark.parametrize("power", ["running", "stopped", "deallocated", "starting"])
def test_a_graph_row_and_its_arm_object_read_alike(power: str) -> None:
    item = vm(SUB_A, "vm1", "Standard_NC6s_v3", power, priority="Spot", zones=["2"])
    row = graph_row(item)
    assert "instanceView" not in row["properties"] and row["id"] != item["id"]
    assert power_state(row) == power_state(item) == power
    assert vm_resource(row, "workload") == vm_resource(item, "workload")


def test_vm_states_and_what_is_not_listed() -> None:
    def read(size: str, power: str) -> Resource | None:
        return vm_resource(vm(SUB_A, "x", size, power), "workload")

    assert read("Standard_NC6s_v3", "running").state is State.RUNNING  # type: ignore[union-attr]
    stopped = read("Standard_NC6s_v3", "stopped")
    assert stopped is not None and stopped.state is State.STOPPED
    assert "billed in full" in (stopped.source.note or "")
    assert read("Standard_NC6s_v3", "deallocated") is None
    assert read("Standard_NC6s_v3", "deallocating") is None
    assert read("Standard_D4s_v3", "running") is None  # a CPU size
    unknown = read("Standard_ND128isr_Z900_v9", "running")
    assert unknown is not None and unknown.gpu.model is None
    assert "Standard_ND128isr_Z900_v9 is not in the catalog" in (unknown.source.note or "")


def test_spot_eviction_and_max_price_are_kept() -> None:
    item = vm(SUB_A, "s", "Standard_NC6s_v3", priority="Spot")
    item["properties"]["billingProfile"] = {"maxPrice": 0.5}
    found = vm_resource(item, "workload")
    assert found is not None and found.capacity is Capacity.SPOT
    assert found.source.note == "spot: eviction Deallocate, max price 0.5"


def test_sizes_are_read_case_insensitively() -> None:
    assert instance_spec("STANDARD_NC6S_V3") == instance_spec("Standard_NC6s_v3") is not None
    assert is_gpu_size("standard_nd96isr_h100_v5") and is_gpu_size("Standard_NV999_v9")
    assert not is_gpu_size("Standard_D8s_v5") and not is_gpu_size(None)


@pytest.mark.parametrize(
    ("count", "base", "share", "regular"),
    [(10, 2, 50, 6), (10, 0, 0, 0), (3, 5, 50, 3), (7, 1, 25, 3), (4, 0, 100, 4)],
)
def test_a_spot_priority_mix_splits_by_its_counts(
    count: int, base: int, share: int, regular: int
) -> None:
    mix = {"baseRegularPriorityCount": base, "regularPriorityPercentageAboveBase": share}
    assert regular_count(count, mix) == regular
    found = scale_set_resources(
        scale_set(SUB_A, "mix", "Standard_NC6s_v3", count, priority="Spot", mix=mix), "workload"
    )
    split = {r.capacity: r.gpu.count for r in found}
    expected = {Capacity.ON_DEMAND: regular, Capacity.SPOT: count - regular}
    assert split == {k: v for k, v in expected.items() if v}
    assert len({r.id for r in found}) == len(found)  # each part its own id


def test_flexible_and_empty_scale_sets_are_not_counted_twice_or_at_all() -> None:
    flexible = scale_set(SUB_A, "flex", "Standard_NC6s_v3", 4, mode="Flexible")
    assert scale_set_resources(flexible, "workload") == []  # its VMs are listed as VMs
    assert scale_set_resources(scale_set(SUB_A, "zero", "Standard_NC6s_v3", 0), "workload") == []


def test_aks_provider_ids_name_the_scale_set_or_the_vm() -> None:
    base = f"/subscriptions/{SUB_A}/resourceGroups/MC_rg/providers/Microsoft.Compute"
    pool = f"azure://{base}/virtualMachineScaleSets/aks-gpu-1-vmss/virtualMachines/3"
    assert cloud_id(pool) == ("azure", f"{base}/virtualMachineScaleSets/aks-gpu-1-vmss".lower())
    plain = f"azure://{base}/virtualMachines/aks-gpu-0"
    assert cloud_id(plain) == ("azure", f"{base}/virtualMachines/aks-gpu-0".lower())
    assert cloud_id("azure:///subscriptions/x") is None
    assert cloud_id(f"azure://{base}/disks/d1") is None


def test_anonymous_only_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_loopback("http://127.0.0.1:8080") and is_loopback("http://localhost:1")
    assert is_loopback("http://[::1]:8080")
    assert not is_loopback("https://management.azure.com")
    assert not is_loopback("http://10.0.0.1:8080")
    monkeypatch.setenv(ENDPOINT_ENV, "http://127.0.0.1:9")
    arm = Arm.connect(AzureSettings())
    assert arm.anonymous and arm.url == "http://127.0.0.1:9"


_ACTIONS = re.compile(r'"Actions": \[(.*?)\]', re.DOTALL)


def _role_actions() -> set[str]:
    doc = (ROOT / "docs" / "permissions.md").read_text()
    section = doc[doc.index("\n## Azure\n") : doc.index("\n## Kubernetes\n")]
    found = _ACTIONS.search(section)
    assert found is not None
    return set(json.loads(f"[{found.group(1)}]"))


def _action(method: str, path: str) -> str:
    """The RBAC action a request needs: every one a read."""
    lowered = path.lower()
    if method == "POST" and lowered == "/providers/microsoft.resourcegraph/resources":
        return "Microsoft.ResourceGraph/resources/read"
    assert method == "GET", (method, path)
    if lowered == "/subscriptions":
        return "Microsoft.Resources/subscriptions/read"
    if re.search("/providers/Microsoft.Compute/capacityReservationGroups/[^/]+$", path, re.I):
        return "Microsoft.Compute/capacityReservationGroups/read"  # one group, its instance view
    for action in (
        "Microsoft.Compute/capacityReservationGroups/capacityReservations",
        "Microsoft.Compute/capacityReservationGroups",
        "Microsoft.MachineLearningServices/workspaces/computes",
        "Microsoft.MachineLearningServices/workspaces",
        "Microsoft.Compute/virtualMachineScaleSets",
        "Microsoft.Compute/virtualMachines",
    ):
        provider, _, kind = action.partition("/")
        if re.search(f"/providers/{provider}/{kind.replace('/', '/[^/]+/')}$", path, re.I):
            return f"{action}/read"
    raise AssertionError(path)


@pytest.mark.server
@pytest.mark.parametrize("source", ["resource-graph", "arm"])
def test_every_call_is_a_read_the_documented_role_allows(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = scenario()
    capacity_group(fake, SUB_A, "a100-crg", [("a100", "Standard_ND96asr_v4", 2, [])])
    with serve(fake) as url:
        monkeypatch.setenv(ENDPOINT_ENV, url)
        for named in ((), (SUB_A, SUB_B)):  # the subscriptions listed, then named
            settings = AzureSettings(subscriptions=named, source=source)
            found = list(AzureCollector(settings).collect())
            assert any(isinstance(item, Resource) for item in found)
    used = {_action(r.method, r.path) for r in fake.requests}
    assert used <= _role_actions()
    assert "Microsoft.Compute/capacityReservationGroups/capacityReservations/read" in used
    # on loopback no credential is asked and no Authorization header is sent (the SDK would
    # refuse a bearer token over plain http)
    assert not [r for r in fake.requests if r.authorization is not None]


@pytest.mark.server
def test_more_than_a_thousand_subscriptions_go_in_several_queries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = scenario()
    many = [f"00000000-0000-4000-8000-{n:012d}" for n in range(1500)]
    fake.resources.update({s: [] for s in many[:-1]})  # the last one is not readable
    fake.page_size = 1000  # the service's own page size
    with serve(fake) as url:
        monkeypatch.setenv(ENDPOINT_ENV, url)
        found = list(AzureCollector(AzureSettings(subscriptions=(SUB_A, *many))).collect())
    asked = [r.body["subscriptions"] for r in fake.requests if r.method == "POST"]
    containers = [r.body["subscriptions"] for r in fake.requests
                  if r.method == "POST" and r.body["query"].startswith("ResourceContainers")]  # fmt: skip
    assert [len(c) for c in containers] == [1000, 501]
    assert max(len(a) for a in asked) == 1000
    gaps = [item.account for item in found if not isinstance(item, Resource)]
    assert gaps == [many[-1]]
    assert any(isinstance(item, Resource) and item.name == "train-v100" for item in found)


def test_only_a_credential_without_a_token_ends_the_provider() -> None:
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError

    from gpu_audit.collectors.azure.errors import credential_failure

    assert credential_failure(ClientAuthenticationError("DefaultAzureCredential failed"))
    assert not credential_failure(HttpResponseError("throttled"))
