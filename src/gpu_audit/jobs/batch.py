"""AWS Batch job definitions and compute environments: API JSON, container files, CloudFormation.

A **job definition** becomes a Resource with the GPUs it requests (`resourceRequirements` of type
GPU, × nodes for multi-node ranges), `timeout.attemptDurationSeconds` as its runtime cap, and its
`tags`. It names no capacity: spot or on-demand is decided by the compute environment of the
queue it is submitted to, so `capacity` stays missing (not the on-demand default), and so does the
GPU model unless a node range lists `instanceTypes`.

A **compute environment** is where Batch's spot decision is made, so it becomes a Resource too:
`capacity` from `computeResources.type` (SPOT/FARGATE_SPOT → spot, EC2/FARGATE → on-demand),
`instance_type` when it allows one type, and the GPU model of the largest GPU class it allows.
It runs no job itself: `gpu.count` and the runtime cap stay missing. An environment whose
instance types have no GPU (or `optimal`, which picks CPU families) yields nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gpu_audit.jobs.aws_bodies import (
    Found,
    Refs,
    aws_gpu,
    has,
    items,
    largest,
    lookup,
    put,
    search,
    text,
)
from gpu_audit.jobs.interface import JobDraft, JobFormat, as_number
from gpu_audit.model import Capacity, Resource
from gpu_audit.yamlsrc import Document, LineMap, is_templated

_CAPACITY = {
    "SPOT": Capacity.SPOT,
    "FARGATE_SPOT": Capacity.SPOT,
    "EC2": Capacity.ON_DEMAND,
    "FARGATE": Capacity.ON_DEMAND,
}
_CFN_TYPES = {"AWS::Batch::JobDefinition", "AWS::Batch::ComputeEnvironment"}


def _is_job_definition(node: Any) -> bool:
    if has(node, "containerProperties", "nodeProperties", "eksProperties"):
        return has(
            node,
            "jobDefinitionName",
            "type",
            "timeout",
            "retryStrategy",
            "platformCapabilities",
            "parameters",
        )
    return False


def _is_container_properties(node: Any) -> bool:
    """A bare `containerProperties` body (the `--container-properties file://…` file)."""
    return has(node, "image") and has(node, "resourceRequirements")


def _is_compute_environment(node: Any) -> bool:
    resources, _ = lookup(node, "computeResources")
    return isinstance(resources, dict) and has(resources, "type", "instanceTypes")


def _is_cfn_resource(node: Any) -> bool:
    return node.get("Type") in _CFN_TYPES and isinstance(node.get("Properties"), dict)


class Batch(JobFormat):
    name = "batch"

    def __init__(self) -> None:
        self._cache: tuple[Document, list[Found]] | None = None

    def detect(self, document: Document, path: str) -> bool:
        return bool(self._bodies(document, path))

    def parse(self, document: Document, path: str) -> list[Resource]:
        resources: list[Resource] = []
        for found in self._bodies(document, path):
            body = found.body.get("Properties") if _is_cfn_resource(found.body) else found.body
            if _is_compute_environment(body):
                resources.extend(_compute_environment(document, path, found, body))
            elif _is_job_definition(body) or _is_container_properties(body):
                resources.extend(_job_definition(document, path, found, body))
        return resources

    def _bodies(self, document: Document, path: str) -> list[Found]:
        if self._cache is not None and self._cache[0] is document:
            return self._cache[1]
        data = document.data
        found: list[Found] = []
        if isinstance(data, dict) and not ("apiVersion" in data and "kind" in data):
            if _is_container_properties(data) and not has(data, "containerProperties"):
                found = [Found(data, Refs(), None, ())] if isinstance(data, LineMap) else []
            elif "Resources" in data and isinstance(data.get("Resources"), dict):
                found = search(data, path, _is_cfn_resource)
            elif _is_job_definition(data) or _is_compute_environment(data):
                found = [Found(data, Refs(), None, ())] if isinstance(data, LineMap) else []
        self._cache = (document, found)
        return found


def _name(body: Any, key: str, found: Found) -> str | None:
    name = text(found.scoped().resolve(lookup(body, key)[0]))
    if name:
        return name
    return next(
        (str(p) for p in reversed(found.trail) if isinstance(p, str) and p != "Resources"), None
    )


def _job_definition(document: Document, path: str, found: Found, body: Any) -> list[Resource]:
    refs = found.scoped()
    draft = JobDraft("batch", path, document, name=_name(body, "jobDefinitionName", found))
    notes = ["capacity comes from the job queue's compute environment"]
    nodes, _ = lookup(body, "nodeProperties")
    if nodes is not None:
        gpus = _node_ranges(draft, nodes, refs, notes)
    else:
        container, _ = lookup(body, "containerProperties")
        gpus = _container_gpus(draft, container if container is not None else body, refs, 1)
    if gpus is None:
        gpus = _eks_gpus(draft, lookup(body, "eksProperties")[0])
    if not gpus:
        return []  # a CPU job
    timeout, _ = lookup(body, "timeout")
    seconds, line = lookup(timeout, "attemptDurationSeconds")
    if line is not None:
        value = as_number(refs.resolve(seconds))
        put(draft, "limits.max_runtime_hours", None if value is None else value / 3600, line)
    retry, _ = lookup(body, "retryStrategy")
    attempts = as_number(lookup(retry, "attempts")[0])
    if attempts is not None and attempts > 1:
        notes.append(f"runtime cap per attempt; up to {int(attempts)} attempts")
    tags, _ = lookup(body, "tags")
    _tags(draft, tags)
    propagate, _ = lookup(body, "propagateTags")
    if propagate is True:
        notes.append("tags propagate to the ECS tasks")
    draft.note = "; ".join(notes)
    return [dataclasses.replace(draft.build(), capacity=None)]


def _container_gpus(draft: JobDraft, container: Any, refs: Refs, nodes: int | None) -> bool | None:
    """GPUs from `resourceRequirements`; None when the container asks for none."""
    requirements, _ = lookup(container, "resourceRequirements")
    for requirement, req_line in items(refs.resolve(requirements)):
        kind, _ = lookup(requirement, "type")
        if not isinstance(kind, str) or kind.upper() != "GPU":
            continue
        value, line = lookup(requirement, "value")
        count = as_number(refs.resolve(value))
        total = int(count * nodes) if count is not None and nodes is not None else None
        if total == 0:
            return None
        put(draft, "gpu.count", total, line or req_line)
        return True
    return None


def _node_ranges(draft: JobDraft, nodes: Any, refs: Refs, notes: list[str]) -> bool | None:
    """A multi-node job: GPUs summed over `nodeRangeProperties`, each × the nodes it targets."""
    num_nodes = as_number(lookup(nodes, "numNodes")[0])
    ranges, _ = lookup(nodes, "nodeRangeProperties")
    total: int | None = 0
    first_line: int | None = None
    models: list[str] = []
    instance: tuple[str, int | None] | None = None
    asked = False
    for node_range, range_line in items(ranges):
        target, _ = lookup(node_range, "targetNodes")
        size = _range_size(target, num_nodes)
        container, _ = lookup(node_range, "container")
        scratch = JobDraft(draft.provider, draft.path, draft.document)
        if not _container_gpus(scratch, container, refs, size):
            continue
        asked = True
        first_line = first_line or scratch.lines.get("gpu.count") or range_line
        count = scratch.get("gpu.count")
        total = total + count if total is not None and count is not None else None
        for instance_type, type_line in items(lookup(node_range, "instanceTypes")[0]):
            gpu = aws_gpu(text(instance_type))
            if gpu is not None and gpu.model:
                models.append(gpu.model)
                instance = instance or (str(instance_type), type_line)
    if not asked:
        return None
    put(draft, "gpu.count", total or None, first_line)
    if models and instance is not None:
        put(draft, "gpu.model", largest(models), instance[1])
        put(draft, "instance_type", instance[0], instance[1])
    notes.append(f"multi-node job of {int(num_nodes) if num_nodes else '?'} nodes")
    return True


def _range_size(target: Any, num_nodes: float | None) -> int | None:
    """Nodes in a `targetNodes` range (`0:`, `:3`, `1:4`, `2`); an open end runs to numNodes."""
    if not isinstance(target, str | int) or is_templated(target):
        return None
    spec = str(target).strip()
    if ":" not in spec:
        return 1 if spec.isdigit() else None
    start_text, end_text = spec.split(":", 1)
    start = int(start_text) if start_text.strip().isdigit() else 0
    if end_text.strip():
        end = int(end_text) if end_text.strip().isdigit() else None
    else:
        end = int(num_nodes) - 1 if num_nodes is not None else None
    return None if end is None else max(0, end - start + 1)


def _eks_gpus(draft: JobDraft, eks: Any) -> bool | None:
    """`eksProperties.podProperties.containers[].resources.limits["nvidia.com/gpu"]`."""
    pod, _ = lookup(eks, "podProperties")
    containers, _ = lookup(pod, "containers")
    total = 0
    line: int | None = None
    for container, _ in items(containers):
        resources, _ = lookup(container, "resources")
        for section in ("limits", "requests"):
            block, _ = lookup(resources, section)
            value, value_line = lookup(block, "nvidia.com/gpu")
            count = as_number(value)
            if count:
                total += int(count)
                line = line or value_line
                break
    if not total:
        return None
    put(draft, "gpu.count", total, line)
    return True


def _compute_environment(document: Document, path: str, found: Found, body: Any) -> list[Resource]:
    refs = found.scoped()
    draft = JobDraft("batch", path, document, name=_name(body, "computeEnvironmentName", found))
    resources, _ = lookup(body, "computeResources")
    kind, kind_line = lookup(resources, "type")
    kind = refs.resolve(kind)
    if isinstance(kind, str) and kind.upper().startswith("FARGATE"):
        return []  # Fargate has no GPUs
    types_value, types_line = lookup(resources, "instanceTypes")
    types_value = refs.resolve(types_value)
    if isinstance(types_value, str):  # a CommaDelimitedList parameter's default
        types_value = [t.strip() for t in types_value.split(",") if t.strip()]
    allowed = [(text(t), line or types_line) for t, line in items(types_value)]
    gpu_types = [(t, line, aws_gpu(t)) for t, line in allowed if t]
    gpu_types = [(t, line, gpu) for t, line, gpu in gpu_types if gpu is not None]
    if not gpu_types:
        unknown = (
            types_value is None or is_templated(types_value) or any(t is None for t, _ in allowed)
        )
        if not unknown:
            return []
    notes = ["a compute environment: capacity and GPU types for the jobs queued to it"]
    if kind_line is not None:
        capacity = _CAPACITY.get(str(kind).upper()) if text(kind) else None
        put(draft, "capacity", capacity, kind_line)
        if capacity is None:
            draft.values["capacity"] = None
    if gpu_types:
        models = [gpu.model for _, _, gpu in gpu_types if gpu and gpu.model]
        model = largest(models)
        line = next((ln for _, ln, gpu in gpu_types if gpu and gpu.model == model), types_line)
        put(draft, "gpu.model", model, line)
        if len(allowed) == 1:
            put(draft, "instance_type", gpu_types[0][0], gpu_types[0][1])
        if len(gpu_types) > 1:
            notes.append(
                "instance types "
                + ", ".join(t for t, _, _ in gpu_types)
                + f"; judged by the largest GPU, {model}"
            )
    elif types_line is not None:
        draft.lines["gpu.model"] = types_line
    bid, bid_line = lookup(resources, "bidPercentage")
    if bid_line is not None and as_number(refs.resolve(bid)) is not None:
        notes.append(f"spot bid {int(as_number(refs.resolve(bid)) or 0)}% of on-demand")
    tags, _ = lookup(resources, "tags")
    _tags(draft, tags)
    _tags(draft, lookup(body, "tags")[0])
    if refs.used:
        notes.append("parameter defaults used: " + ", ".join(dict.fromkeys(refs.used)))
    draft.note = "; ".join(notes)
    resource = draft.build()
    if draft.values.get("capacity", "") is None:
        resource = dataclasses.replace(resource, capacity=None)
    return [resource]


def _tags(draft: JobDraft, tags: Any) -> None:
    if isinstance(tags, dict):
        for key, value in tags.items():
            draft.tag(key, value)
    else:  # CloudFormation also accepts [{Key, Value}]
        for tag, _ in items(tags):
            draft.tag(lookup(tag, "Key")[0], lookup(tag, "Value")[0])
