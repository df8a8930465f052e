"""Pod JSON → GPUs requested, owner and workload: pure functions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from gpu_audit.collectors.kubernetes.nodes import gpu_quantity
from gpu_audit.core.resource import State, Workload

# The owner's kind says what the pod is for. ReplicaSets are read as their Deployment (from the
# `pod-template-hash` label), so listing pods is all it takes.
_TRAINING = frozenset(("Job", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob"))
_TRAINING |= {"JAXJob", "TrainJob", "RayJob"}
_INFERENCE = frozenset(["Deployment", "InferenceService", "RayService", "ServingRuntime"])
_NOTEBOOK = frozenset(["Notebook"])
_NOTEBOOK_IMAGE = re.compile(r"jupyter|notebook|workbench", re.IGNORECASE)
STATES = {"Running": State.RUNNING, "Pending": State.PENDING}


def gpus_requested(spec: Mapping[str, Any], names: Iterable[str]) -> int:
    """GPUs the pod holds: the containers' sum, or the largest init container if that is more."""
    names = tuple(names)

    def held(container: Mapping[str, Any]) -> int:
        resources = container.get("resources") or {}
        return max(
            gpu_quantity(resources.get("limits"), names),
            gpu_quantity(resources.get("requests"), names),
        )

    running = sum(held(c) for c in spec.get("containers") or ())
    init = max((held(c) for c in spec.get("initContainers") or ()), default=0)
    return max(running, init)


def owner_of(metadata: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, name) of the workload that owns the pod, as far as the pod itself says."""
    labels = metadata.get("labels") or {}
    crd = labels.get("ray.io/originated-from-crd")  # KubeRay: RayJob or RayService
    if crd and labels.get("ray.io/originated-from-cr-name"):
        return str(crd), str(labels["ray.io/originated-from-cr-name"])
    if labels.get("serving.kserve.io/inferenceservice"):
        return "InferenceService", str(labels["serving.kserve.io/inferenceservice"])
    refs = [r for r in metadata.get("ownerReferences") or () if isinstance(r, Mapping)]
    ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
    if ref is None:
        return None
    kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
    template_hash = labels.get("pod-template-hash")
    if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
        return "Deployment", name.removesuffix(f"-{template_hash}")
    if kind == "StatefulSet" and labels.get("notebook-name"):
        return "Notebook", str(labels["notebook-name"])  # Kubeflow notebooks
    return kind, name


def workload_of(
    labels: Mapping[str, str],
    owner: tuple[str, str] | None,
    spec: Mapping[str, Any],
    workload_label: str,
) -> Workload:
    """The label if it names a workload, else the owner's kind, else a notebook image."""
    stated = labels.get(workload_label, "").strip().lower()
    if stated in {w.value for w in Workload}:
        return Workload(stated)
    kind = owner[0] if owner else None
    if kind in _TRAINING:
        return Workload.TRAINING
    if kind in _INFERENCE:
        return Workload.INFERENCE
    if kind in _NOTEBOOK:
        return Workload.NOTEBOOK
    images = (str(c.get("image", "")) for c in spec.get("containers") or ())
    if any(_NOTEBOOK_IMAGE.search(image) for image in images):
        return Workload.NOTEBOOK
    return Workload.UNKNOWN
