"""AWS Batch job definitions and compute environments: API JSON, container files, CloudFormation.

A **job definition** becomes a Resource with the GPUs it requests (`resourceRequirements` of type
GPU, × nodes for multi-node ranges), `timeout.attemptDurationSeconds` as its runtime cap, and its
`tags`. A **SubmitJob request** is read the same way when its overrides ask for GPUs. Neither
names a capacity: spot or on-demand is decided by the compute environment of the
queue it is submitted to, so `capacity` stays missing (not the on-demand default), and so does the
GPU model unless a node range lists `instanceTypes`.

A **compute environment** is where Batch's spot decision is made, so it becomes a Resource too:
`capacity` from `computeResources.type` (SPOT/FARGATE_SPOT → spot, EC2/FARGATE → on-demand),
`instance_type` when it allows one type, and the GPU model of the largest GPU class it allows.
It runs no job itself: `gpu.count` and the runtime cap stay missing. An environment whose
instance types have no GPU (or `optimal`, which picks CPU families) yields nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gpu_audit.core.resource import Capacity, Resource
from gpu_audit.core.yamlsrc import Document, LineMap, is_templated
from gpu_audit.jobs.aws_bodies import (
    Found,
    Refs,
    aws_gpu,
    has,
    items,
    largest,
    lookup,
    search,
)
from gpu_audit.jobs.evidence import infer, runs_in
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.values import as_count, as_number, literal, seconds_to_hours

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


def _is_submit_job(node: Any) -> bool:
    """A SubmitJob request body (`aws batch submit-job --cli-input-json`, a Step Functions task)."""
    return has(node, "jobQueue") and has(node, "jobDefinition") and not has(node, "type")


def _is_compute_environment(node: Any) -> bool:
    resources, _ = lookup(node, "computeResources")
    return isinstance(resources, dict) and has(resources, "type", "instanceTypes")


def _is_cfn_resource(node: Any) -> bool:
    return node.get("Type") in _CFN_TYPES and isinstance(node.get("Properties"), dict)


class Batch(JobFormat):
    name = "batch"
    hints: ClassVar[dict[str, str]] = {
        "capacity": "the job queue's compute environment sets it (`computeResources.type`); "
        "check that file with the job definitions",
    }
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "set the compute environment's `computeResources.type: SPOT`",
        "limits.max_runtime_hours": "set `timeout.attemptDurationSeconds` on the job definition",
        "gpu.model": "choose a smaller GPU type in `computeResources.instanceTypes`",
        "tags.*": "add the keys to `tags`",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        found = _bodies(document, path)
        if not found:
            return None
        resources: list[Resource] = []
        for each in found:
            body = each.body.get("Properties") if _is_cfn_resource(each.body) else each.body
            if _is_compute_environment(body):
                resources.extend(_compute_environment(document, path, each, body))
            elif _is_submit_job(body):
                resources.extend(_submit_job(document, path, each, body))
            elif _is_job_definition(body) or _is_container_properties(body):
                resources.extend(_job_definition(document, path, each, body))
        return resources


def _bodies(document: Document, path: str) -> list[Found]:
    data = document.data
    if not isinstance(data, dict) or ("apiVersion" in data and "kind" in data):
        return []
    if _is_container_properties(data) and not has(data, "containerProperties"):
        return [Found(data, Refs(), None, ())] if isinstance(data, LineMap) else []
    if "Resources" in data and isinstance(data.get("Resources"), dict):
        return search(data, path, _is_cfn_resource)
    if _is_job_definition(data) or _is_compute_environment(data) or _is_submit_job(data):
        return [Found(data, Refs(), None, ())] if isinstance(data, LineMap) else []
    if "States" in data:  # a Step Functions definition with `batch:submitJob` tasks
        return search(data, path, _is_submit_job)
    return []


def _name(body: Any, key: str, found: Found) -> str | None:
    name = literal(found.scoped().resolve(lookup(body, key)[0]))
    if name:
        return name
    return next(
        (str(p) for p in reversed(found.trail) if isinstance(p, str) and p != "Resources"), None
    )


def _job_definition(document: Document, path: str, found: Found, body: Any) -> list[Resource]:
    refs = found.scoped()
    draft = JobDraft("batch", path, document, name=_name(body, "jobDefinitionName", found))
    draft.anchor = draft.tags_anchor = found.line
    draft.add_note("capacity comes from the job queue's compute environment")
    nodes, _ = lookup(body, "nodeProperties")
    if nodes is not None:
        gpus = _node_ranges(draft, nodes, refs)
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
        resolved = refs.resolve(seconds)
        draft.put("limits.max_runtime_hours", seconds_to_hours(resolved), line, raw=resolved)
    retry, _ = lookup(body, "retryStrategy")
    attempts = as_number(lookup(retry, "attempts")[0])
    if attempts is not None and attempts > 1:
        draft.add_note(f"runtime cap per attempt; up to {int(attempts)} attempts")
    tags, _ = lookup(body, "tags")
    _tags(draft, tags)
    propagate, _ = lookup(body, "propagateTags")
    if propagate is True:
        draft.add_note("tags propagate to the ECS tasks")
    draft.unknown("capacity")  # the queue's compute environment decides
    infer(draft, runs_in(body))
    return [draft.build()]


def _submit_job(document: Document, path: str, found: Found, body: Any) -> list[Resource]:
    """A SubmitJob request: GPUs only when its overrides ask for them (else its definition's)."""
    refs = found.scoped()
    draft = JobDraft("batch", path, document, name=_name(body, "jobName", found))
    draft.anchor = draft.tags_anchor = found.line
    draft.add_note("a SubmitJob request: GPUs from its overrides; capacity from its job queue")
    overrides, _ = lookup(body, "containerOverrides")
    gpus = _container_gpus(draft, overrides, refs, 1) if overrides is not None else None
    if gpus is None:
        nodes, _ = lookup(body, "nodeOverrides")
        for override, _ in items(lookup(nodes, "nodePropertyOverrides")[0]):
            container, _ = lookup(override, "containerOverrides")
            gpus = gpus or _container_gpus(draft, container, refs, 1)
    if gpus is None:
        eks, _ = lookup(body, "eksPropertiesOverride")
        gpus = _eks_gpus(draft, eks)
    if not gpus:
        return []  # the job definition decides the GPUs: audit that file
    timeout, _ = lookup(body, "timeout")
    seconds, line = lookup(timeout, "attemptDurationSeconds")
    if line is not None:
        resolved = refs.resolve(seconds)
        draft.put("limits.max_runtime_hours", seconds_to_hours(resolved), line, raw=resolved)
    _tags(draft, lookup(body, "tags")[0])
    draft.unknown("capacity")
    infer(draft, runs_in(body))
    return [draft.build()]


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
        draft.put("gpu.count", total, line or req_line)
        return True
    return None


def _node_ranges(draft: JobDraft, nodes: Any, refs: Refs) -> bool | None:
    """A multi-node job: GPUs summed over `nodeRangeProperties`, each × the nodes it targets."""
    value, line = lookup(nodes, "numNodes")
    num_nodes = as_count(value, "numNodes", line)
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
            gpu = aws_gpu(literal(instance_type))
            if gpu is not None and gpu.model:
                models.append(gpu.model)
                instance = instance or (str(instance_type), type_line)
    if not asked:
        return None
    draft.put("gpu.count", total or None, first_line)
    if models and instance is not None:
        draft.put("gpu.model", largest(models), instance[1])
        draft.put("instance_type", instance[0], instance[1])
    draft.add_note(f"multi-node job of {int(num_nodes) if num_nodes else '?'} nodes")
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
    draft.put("gpu.count", total, line)
    return True


def _compute_environment(document: Document, path: str, found: Found, body: Any) -> list[Resource]:
    refs = found.scoped()
    draft = JobDraft("batch", path, document, name=_name(body, "computeEnvironmentName", found))
    draft.anchor = draft.tags_anchor = found.line
    resources, _ = lookup(body, "computeResources")
    kind, kind_line = lookup(resources, "type")
    kind = refs.resolve(kind)
    if isinstance(kind, str) and kind.upper().startswith("FARGATE"):
        return []  # Fargate has no GPUs
    types_value, types_line = lookup(resources, "instanceTypes")
    types_value = refs.resolve(types_value)
    if isinstance(types_value, str):  # a CommaDelimitedList parameter's default
        types_value = [t.strip() for t in types_value.split(",") if t.strip()]
    allowed = [(literal(t), line or types_line) for t, line in items(types_value)]
    gpu_types = [(t, line, aws_gpu(t)) for t, line in allowed if t]
    gpu_types = [(t, line, gpu) for t, line, gpu in gpu_types if gpu is not None]
    if not gpu_types:
        unknown = (
            types_value is None or is_templated(types_value) or any(t is None for t, _ in allowed)
        )
        if not unknown:
            return []
    draft.add_note("a compute environment: capacity and GPU types for the jobs queued to it")
    if kind_line is not None:
        capacity = _CAPACITY.get(str(kind).upper()) if literal(kind) else None
        if capacity is None:
            draft.unknown("capacity", kind_line)
        else:
            draft.set("capacity", capacity, kind_line)
    if gpu_types:
        models = [gpu.model for _, _, gpu in gpu_types if gpu and gpu.model]
        model = largest(models)
        line = next((ln for _, ln, gpu in gpu_types if gpu and gpu.model == model), types_line)
        draft.put("gpu.model", model, line)
        if len(allowed) == 1:
            draft.put("instance_type", gpu_types[0][0], gpu_types[0][1])
        if len(gpu_types) > 1:
            draft.add_note(
                "instance types "
                + ", ".join(t for t, _, _ in gpu_types)
                + f"; judged by the largest GPU, {model}"
            )
    else:
        draft.mark("gpu.model", types_line)
    bid, bid_line = lookup(resources, "bidPercentage")
    if bid_line is not None and as_number(refs.resolve(bid)) is not None:
        draft.add_note(f"spot bid {int(as_number(refs.resolve(bid)) or 0)}% of on-demand")
    tags, _ = lookup(resources, "tags")
    _tags(draft, tags)
    _tags(draft, lookup(body, "tags")[0])
    if refs.used:
        draft.add_note("parameter defaults used: " + ", ".join(dict.fromkeys(refs.used)))
    return [draft.build()]


def _tags(draft: JobDraft, tags: Any) -> None:
    if isinstance(tags, dict):
        for key, value in tags.items():
            draft.tag(key, value)
    else:  # CloudFormation also accepts [{Key, Value}]
        for tag, _ in items(tags):
            draft.tag(lookup(tag, "Key")[0], lookup(tag, "Value")[0])
