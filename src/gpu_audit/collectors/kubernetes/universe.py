"""Kubernetes work items: `kubernetes:CONTEXT`, one per kubeconfig context (see workitems.py)."""

from __future__ import annotations

from gpu_audit.collectors.kubernetes.connect import targets
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings


def item_key(context: str) -> str:
    """The work item of a kubeconfig context: `kubernetes:CONTEXT`."""
    return f"kubernetes:{context}"


def work_items(settings: KubernetesSettings) -> list[str]:
    """The contexts asked for (`*`: every context of the kubeconfig), else the current one."""
    return sorted({item_key(t.context) for t in targets(settings)})
