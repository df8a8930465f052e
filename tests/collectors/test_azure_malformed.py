"""Azure rows of shapes ARM does not give (a count as text, a list for an object, a time past
year 9999) are one coverage gap naming the row and the key, and the rest of the scan goes on."""

from __future__ import annotations

import pytest
from azure_fixtures import SUB_A, cluster, scale_set, scenario, vm, workspace
from azure_server import serve

from gpu_audit.collectors.azure.collector import AzureCollector
from gpu_audit.collectors.azure.connect import ENDPOINT_ENV
from gpu_audit.collectors.azure.mapping import (
    compute_resource,
    read_row,
    scale_set_resources,
    vm_resource,
)
from gpu_audit.collectors.azure.settings import AzureSettings
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap

_A100 = "Standard_NC24ads_A100_v4"


def _vmss(**sku: object) -> dict[str, object]:
    row = scale_set(SUB_A, "pool", _A100, 3)
    row["sku"].update(sku)  # type: ignore[attr-defined]
    return row


def _spot_mix(base: object, share: object) -> dict[str, object]:
    mix = {"baseRegularPriorityCount": base, "regularPriorityPercentageAboveBase": share}
    return scale_set(SUB_A, "mix", _A100, 4, priority="Spot", mix=mix)  # type: ignore[arg-type]


def _cluster(**inner: object) -> dict[str, object]:
    row = cluster(workspace(SUB_A, "ws"), "c", _A100, current=2, minimum=1)
    row["properties"]["properties"].update(inner)  # type: ignore[index]
    return row


def _vm(**props: object) -> dict[str, object]:
    row = vm(SUB_A, "v", _A100)
    row["properties"].update(props)  # type: ignore[attr-defined]
    return row


CASES = [
    (scale_set_resources, _vmss(capacity="three"), "sku.capacity: expected a count"),
    (scale_set_resources, _vmss(capacity=float("inf")), "sku.capacity"),
    (scale_set_resources, _vmss(capacity=10**12), "sku.capacity"),
    (scale_set_resources, _vmss(name=7), "sku.name: expected a size name"),
    (scale_set_resources, _spot_mix("one", 50), "baseRegularPriorityCount"),
    (scale_set_resources, _spot_mix(1, float("nan")), "regularPriorityPercentageAboveBase"),
    (compute_resource, _cluster(currentNodeCount=[2]), "currentNodeCount"),
    (compute_resource, _cluster(scaleSettings={"minNodeCount": "x"}), "minNodeCount"),
    (compute_resource, {**_cluster(), "properties": [1]}, "properties: expected an object"),
    (vm_resource, _vm(hardwareProfile={"vmSize": 5}), "vmSize"),
    (vm_resource, _vm(instanceView={"statuses": 5}), "statuses: expected a list"),
    (vm_resource, {**_vm(), "zones": 1}, "zones: expected a list"),
]


@pytest.mark.parametrize(("read", "row", "said"), CASES)
def test_a_malformed_row_is_a_gap_naming_the_key(read: object, row: object, said: str) -> None:
    found = read_row(read, row, "workload")  # type: ignore[arg-type]
    assert isinstance(found, CoverageGap), found
    assert said in found.message and found.error == "MalformedRow"
    assert found.account == SUB_A and "not judged" in found.message


def test_a_time_past_the_last_utc_time_is_unknown_not_an_error() -> None:
    (found,) = read_row(vm_resource, _vm(timeCreated="9999-12-31T23:59:59-05:00"), "workload")
    assert isinstance(found, Resource) and found.launched_at is None


@pytest.mark.server
@pytest.mark.parametrize("source", ["resource-graph", "arm"])
def test_the_scan_goes_on_past_a_malformed_row(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = scenario()
    fake.resources[SUB_A].append(_vmss(capacity="three"))
    with serve(fake) as url:
        monkeypatch.setenv(ENDPOINT_ENV, url)
        found = list(AzureCollector(AzureSettings(subscriptions=(SUB_A,), source=source)).collect())
    gaps = [item for item in found if isinstance(item, CoverageGap)]
    assert [g.error for g in gaps] == ["MalformedRow"]
    assert "/virtualmachinescalesets/pool: sku.capacity" in gaps[0].message
    assert "train-v100" in {item.name for item in found if isinstance(item, Resource)}
