"""Azure resources in ARM's REST shapes (as `statusOnly=true` lists VMs), and the test scenario.

Shapes follow the ARM REST reference (Compute 2024-07-01 VirtualMachine and
VirtualMachineScaleSet, Machine Learning 2020-08-01 ComputeResource), as of 2026-11.
"""

from __future__ import annotations

from typing import Any

from azure_server import FakeAzure

SUB_A = "6f1c1a2b-0000-4000-8000-00000000000a"
SUB_B = "6f1c1a2b-0000-4000-8000-00000000000b"  # unreadable: 403 on ARM, absent from the graph
SUB_C = "6f1c1a2b-0000-4000-8000-00000000000c"
TEAM = {"team": "nlp", "project": "llm", "owner": "ana@example.com"}
CREATED = "2026-11-01T08:00:00.1234567+00:00"


def _rid(sub: str, group: str, kind: str, name: str) -> str:
    return f"/subscriptions/{sub}/resourceGroups/{group}/providers/{kind}/{name}"


def vm(
    sub: str,
    name: str,
    size: str,
    power: str = "running",
    *,
    priority: str | None = None,
    tags: dict[str, str] | None = None,
    location: str = "eastus",
    zones: list[str] | None = None,
    group: str = "ML-Train",
) -> dict[str, Any]:
    props: dict[str, Any] = {
        "vmId": f"{name}-0000",
        "hardwareProfile": {"vmSize": size},
        "provisioningState": "Succeeded",
        "timeCreated": CREATED,
        "instanceView": {
            "statuses": [
                {"code": "ProvisioningState/succeeded", "level": "Info"},
                {"code": f"PowerState/{power}", "level": "Info"},
            ]
        },
    }
    if priority:
        props["priority"] = priority
    if priority == "Spot":
        props["evictionPolicy"] = "Deallocate"
        props["billingProfile"] = {"maxPrice": -1}
    item: dict[str, Any] = {
        "id": _rid(sub, group, "Microsoft.Compute/virtualMachines", name),
        "name": name,
        "type": "Microsoft.Compute/virtualMachines",
        "location": location,
        "tags": tags or {},
        "properties": props,
    }
    if zones:
        item["zones"] = zones
    return item


def scale_set(
    sub: str,
    name: str,
    size: str,
    capacity: int,
    *,
    priority: str = "Regular",
    mix: dict[str, int] | None = None,
    mode: str = "Uniform",
    tags: dict[str, str] | None = None,
    group: str = "MC_aks_gpu_eastus",
) -> dict[str, Any]:
    props: dict[str, Any] = {
        "orchestrationMode": mode,
        "provisioningState": "Succeeded",
        "timeCreated": CREATED,
        "virtualMachineProfile": {"priority": priority},
    }
    if mix:
        props["priorityMixPolicy"] = mix
    return {
        "id": _rid(sub, group, "Microsoft.Compute/virtualMachineScaleSets", name),
        "name": name,
        "type": "Microsoft.Compute/virtualMachineScaleSets",
        "location": "eastus",
        "tags": tags or {},
        "sku": {"name": size, "tier": "Standard", "capacity": capacity},
        "properties": props,
    }


def workspace(sub: str, name: str, group: str = "ml-rg") -> dict[str, Any]:
    return {
        "id": _rid(sub, group, "Microsoft.MachineLearningServices/workspaces", name),
        "name": name,
        "type": "Microsoft.MachineLearningServices/workspaces",
        "location": "eastus",
        "tags": {},
        "sku": {"name": "Basic", "tier": "Basic"},
        "identity": {"type": "SystemAssigned"},
        "properties": {"friendlyName": name, "provisioningState": "Succeeded"},
    }


def cluster(
    ws: dict[str, Any],
    name: str,
    size: str,
    *,
    current: int,
    minimum: int,
    maximum: int = 4,
    priority: str = "Dedicated",
    tags: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "id": f"{ws['id']}/computes/{name}",
        "name": name,
        "type": "Microsoft.MachineLearningServices/workspaces/computes",
        "location": "eastus",
        "tags": tags or {},
        "properties": {
            "computeType": "AmlCompute",
            "computeLocation": "eastus",
            "provisioningState": "Succeeded",
            "createdOn": "2026-10-01T00:00:00.0000000+00:00",
            "properties": {
                "vmSize": size,
                "vmPriority": priority,
                "scaleSettings": {
                    "maxNodeCount": maximum,
                    "minNodeCount": minimum,
                    "nodeIdleTimeBeforeScaleDown": "PT120S",
                },
                "allocationState": "Steady",
                "currentNodeCount": current,
                "targetNodeCount": current,
                "nodeStateCounts": {"idleNodeCount": current, "runningNodeCount": 0},
            },
        },
    }


def instance(ws: dict[str, Any], name: str, size: str, state: str = "Running") -> dict[str, Any]:
    return {
        "id": f"{ws['id']}/computes/{name}",
        "name": name,
        "type": "Microsoft.MachineLearningServices/workspaces/computes",
        "location": "eastus",
        "tags": {"team": "research", "project": "eval", "owner": "kim@example.com"},
        "properties": {
            "computeType": "ComputeInstance",
            "computeLocation": "eastus",
            "provisioningState": "Succeeded",
            "createdOn": "2026-11-10T00:00:00.0000000+00:00",
            "properties": {"vmSize": size, "state": state},
        },
    }


def scenario() -> FakeAzure:
    """Subscription A holds every kind; B is unreadable; C holds one GPU VM elsewhere."""
    ws = workspace(SUB_A, "research-ws")
    fake = FakeAzure(
        resources={
            SUB_A: [
                vm(
                    SUB_A,
                    "train-a100-spot",
                    "Standard_NC24ads_A100_v4",
                    priority="Spot",
                    tags={**TEAM, "workload": "training"},
                    zones=["1"],
                ),
                vm(
                    SUB_A,
                    "train-v100",
                    "Standard_NC6s_v3",
                    priority="Regular",
                    tags={**TEAM, "workload": "training"},
                ),
                vm(SUB_A, "eval-t4-stopped", "Standard_NC4as_T4_v3", "stopped", tags=TEAM),
                vm(SUB_A, "h100-deallocated", "Standard_NC40ads_H100_v5", "deallocated"),
                vm(SUB_A, "build-cpu", "Standard_D4s_v3", tags=TEAM),
                vm(SUB_A, "future-gpu", "Standard_NC8ads_B300_v9", tags=TEAM),
                scale_set(SUB_A, "aks-gpupool-12345678-vmss", "Standard_NC6s_v3", 3, tags=TEAM),
                scale_set(SUB_A, "aks-cpupool-12345678-vmss", "Standard_D8s_v5", 5),
                ws,
            ],
            SUB_B: [vm(SUB_B, "hidden-h100", "Standard_NC40ads_H100_v5")],
            SUB_C: [
                vm(
                    SUB_C,
                    "infer-t4",
                    "Standard_NC4as_T4_v3",
                    location="westus2",
                    tags={**TEAM, "workload": "inference"},
                )
            ],
        },
        computes={
            ws["id"].lower(): [
                cluster(
                    ws, "gpu-cluster", "STANDARD_NC24ADS_A100_V4", current=2, minimum=2, tags=TEAM
                ),
                cluster(
                    ws,
                    "lowpri-v100",
                    "Standard_NC6s_v3",
                    current=1,
                    minimum=0,
                    priority="LowPriority",
                    tags=TEAM,
                ),
                cluster(ws, "cpu-cluster", "Standard_DS3_v2", current=2, minimum=1),
                cluster(ws, "idle-gpu", "Standard_NC6s_v3", current=0, minimum=0),
                instance(ws, "kim-notebook", "Standard_NC4as_T4_v3"),
                instance(ws, "stopped-notebook", "Standard_NC6s_v3", "Stopped"),
            ]
        },
        forbidden={SUB_B},
    )
    return fake


def capacity_group(
    fake: FakeAzure,
    sub: str,
    name: str,
    reservations: list[tuple[str, str, int, list[str]]],
    location: str = "eastus",
) -> str:
    """A capacity reservation group (ARM Compute 2024-07-01 `CapacityReservationGroup`) with
    its reservations, each (name, VM size, instances reserved, ids of the VMs allocated on
    it); returns the group's id as ARM spells it."""
    gid = _rid(sub, "ML-Capacity", "Microsoft.Compute/capacityReservationGroups", name)
    held = [
        {
            "id": f"{gid}/capacityReservations/{reservation}",
            "name": reservation,
            "type": "Microsoft.Compute/capacityReservationGroups/capacityReservations",
            "location": location,
            "zones": ["1"],
            "sku": {"name": size, "capacity": count},
            "properties": {
                "reservationId": f"{reservation}-0000",
                "provisioningState": "Succeeded",
                "timeCreated": CREATED,
                "virtualMachinesAssociated": [{"id": vm_id} for vm_id in allocated],
            },
            "allocated": allocated,  # the group's instance view lists these
        }
        for reservation, size, count, allocated in reservations
    ]
    fake.reservation_groups.setdefault(sub, []).append(
        {
            "id": gid,
            "name": name,
            "type": "Microsoft.Compute/capacityReservationGroups",
            "location": location,
            "zones": ["1"],
            "properties": {"capacityReservations": [{"id": r["id"]} for r in held]},
        }
    )
    fake.capacity_reservations[gid.lower()] = held
    return gid
