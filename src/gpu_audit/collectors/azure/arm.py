"""Inventory through ARM, subscription by subscription: the fallback (`--azure-source arm`), and
the way to Azure ML computes (`.../workspaces/{name}/computes`), which Resource Graph lacks.

Calls: `GET /subscriptions`, and per subscription `virtualMachines?statusOnly=true` (the power
state in each VM's instance view), `virtualMachineScaleSets` and Azure ML `workspaces`. The SDK's
models are turned back into their REST shape, so one mapping reads them and Resource Graph rows.
"""

from __future__ import annotations

from typing import Any

from gpu_audit.collectors.azure.connect import Arm
from gpu_audit.collectors.azure.mapping import SCALE_SET, VM, WORKSPACE, resource_group_of

USABLE_STATES = frozenset({"enabled", "warned", "pastdue"})  # disabled ones cannot be read


def subscriptions(arm: Arm) -> list[str]:
    """Every subscription the credential can read, in the order ARM lists them."""
    client = arm.subscriptions()
    found = []
    for item in client.subscriptions.list():
        state = str(item.get("state") or "enabled").lower()
        if item.get("subscriptionId") and state in USABLE_STATES:
            found.append(str(item["subscriptionId"]))
    return found


def _shaped(model: Any, kind: str) -> dict[str, Any]:
    """A model as its REST JSON (camelCase keys), `type` lower-cased as Resource Graph has it.

    azure-mgmt-compute's models are mappings over the JSON they came from (`as_dict` gives it
    back); azure-mgmt-machinelearningservices' are msrest models (`serialize` does)."""
    row = model.serialize(keep_readonly=True) if hasattr(model, "serialize") else model.as_dict()
    return {**row, "type": kind}


def subscription_rows(arm: Arm, subscription: str) -> list[dict[str, Any]]:
    """VMs, scale sets and workspaces of one subscription (raises the SDK's error on failure)."""
    compute = arm.compute(subscription)
    rows = [_shaped(vm, VM) for vm in compute.virtual_machines.list_all(status_only="true")]
    rows += [_shaped(s, SCALE_SET) for s in compute.virtual_machine_scale_sets.list_all()]
    ml = arm.machine_learning(subscription)
    rows += [_shaped(w, WORKSPACE) for w in ml.workspaces.list_by_subscription()]
    return rows


def compute_rows(arm: Arm, workspace_id: str, subscription: str) -> list[dict[str, Any]]:
    """The computes of one Azure ML workspace, in their REST shape."""
    ml = arm.machine_learning(subscription)
    name = workspace_id.rstrip("/").rsplit("/", 1)[-1]
    group = resource_group_of(workspace_id)
    listing = ml.machine_learning_compute.list_by_workspace(group, name)
    return [_shaped(c, "microsoft.machinelearningservices/workspaces/computes") for c in listing]
