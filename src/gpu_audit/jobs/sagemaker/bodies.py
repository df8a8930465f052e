"""SageMaker request bodies, field by field: instances, spot, stopping condition, data, tags."""

from __future__ import annotations

import re
from typing import Any

from gpu_audit.core.resource import Capacity, Resource
from gpu_audit.core.yamlsrc import is_templated
from gpu_audit.jobs.aws_bodies import (
    Found,
    Refs,
    aws_gpu,
    has,
    items,
    largest,
    lookup,
)
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.values import as_bool, as_number, literal, seconds_to_hours

_DEFAULT_MAX_RUNTIME_HOURS = 24.0  # "The default value is 1 day."


_ECR_REGION = re.compile(r"\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com")


def set_resources(draft: JobDraft, body: Any, refs: Refs, count_key: str) -> bool:
    """Instance type and GPUs × instances; False when the instance type is known to have no GPU."""
    config, config_line = lookup(body, "ResourceConfig")
    config = refs.resolve(config)
    plan, plan_line = lookup(config, "TrainingPlanArn")
    if plan_line is not None and literal(refs.resolve(plan)):
        draft.set("capacity", Capacity.RESERVED, plan_line)  # a training plan's reserved capacity
    groups, _ = lookup(config, "InstanceGroups")
    if groups:
        return _instance_groups(draft, groups, refs)
    source = config if isinstance(config, dict) else body
    instance_type, type_line = lookup(source, "InstanceType")
    instance_type = refs.resolve(instance_type)
    count, count_line = lookup(source, count_key)
    count = as_number(refs.resolve(count)) if count is not None else 1
    if count == 0:
        return False  # no instances, no GPUs (a `--generate-cli-skeleton` file)
    instance_type = literal(instance_type)
    draft.put("instance_type", instance_type, type_line or config_line)
    if instance_type is None:
        draft.mark("gpu.count", count_line)
        if type_line or config_line:
            draft.lines.setdefault("gpu.model", type_line or config_line or 0)
        return True  # unknown instance type: it may be a GPU job
    gpu = aws_gpu(instance_type)
    if gpu is None:
        return False
    draft.put("gpu.model", gpu.model, type_line)
    if gpu.count is not None and count is not None:
        draft.put("gpu.count", int(gpu.count * count), count_line or type_line)
    else:
        draft.mark("gpu.count", count_line)
    return True


def _instance_groups(draft: JobDraft, groups: Any, refs: Refs) -> bool:
    """A heterogeneous cluster: GPUs summed over the groups, judged by the largest GPU class."""
    total: int | None = 0
    models: list[str] = []
    labels: list[str] = []
    first: tuple[Any, int | None] | None = None
    unknown = False
    for group, group_line in items(groups):
        instance_type, type_line = lookup(group, "InstanceType")
        instance_type = literal(refs.resolve(instance_type))
        count = as_number(refs.resolve(lookup(group, "InstanceCount")[0]))
        if instance_type is None:
            unknown = True
            continue
        gpu = aws_gpu(instance_type)
        if gpu is None:
            continue
        labels.append(f"{instance_type}×{int(count) if count is not None else '?'}")
        if first is None:
            first = (instance_type, type_line or group_line)
        if gpu.model:
            models.append(gpu.model)
        if total is not None and gpu.count is not None and count is not None:
            total += int(gpu.count * count)
        else:
            total = None
    if first is None:
        return unknown
    draft.put("instance_type", first[0], first[1])
    draft.put("gpu.model", largest(models), first[1])
    draft.put("gpu.count", total or None, first[1])
    draft.add_note("instance groups " + ", ".join(labels))
    return True


def set_spot(draft: JobDraft, body: Any, refs: Refs) -> None:
    """Set the capacity from EnableManagedSpotTraining (reserved stays reserved; a templated flag
    leaves the capacity unknown)."""
    value, line = lookup(body, "EnableManagedSpotTraining")
    if line is None or draft.get("capacity") is Capacity.RESERVED:
        return  # absent: on-demand, the documented default (set by `finish`)
    flag = as_bool(refs.resolve(value))
    if flag is None:
        draft.unknown("capacity", line)  # templated: missing, not the on-demand default
    else:
        draft.set("capacity", Capacity.SPOT if flag else Capacity.ON_DEMAND, line)


def set_stopping(draft: JobDraft, body: Any, refs: Refs) -> None:
    """Set the runtime cap from StoppingCondition.MaxRuntimeInSeconds (SageMaker's 1-day default
    when absent) and note MaxWaitTimeInSeconds."""
    condition, condition_line = lookup(body, "StoppingCondition")
    condition = refs.resolve(condition)
    seconds, line = lookup(condition, "MaxRuntimeInSeconds")
    if line is None and (condition_line is None or isinstance(condition, dict)):
        draft.put("limits.max_runtime_hours", _DEFAULT_MAX_RUNTIME_HOURS)
        draft.add_note("no MaxRuntimeInSeconds: SageMaker's default 1-day cap")
        return
    hours = seconds_to_hours(refs.resolve(seconds))
    draft.put("limits.max_runtime_hours", hours, line or condition_line, raw=refs.resolve(seconds))
    wait = as_number(refs.resolve(lookup(condition, "MaxWaitTimeInSeconds")[0]))
    if wait is not None:
        draft.add_note(f"MaxWaitTimeInSeconds {int(wait)}")


def set_data(draft: JobDraft, body: Any, refs: Refs) -> None:
    """Set the data URIs from every InputDataConfig channel's S3 source, located at the first."""
    uris: list[str] = []
    first_line: int | None = None
    channels, channels_line = lookup(body, "InputDataConfig")
    for channel, channel_line in items(refs.resolve(channels)):
        source, _ = lookup(channel, "DataSource")
        s3, _ = lookup(source, "S3DataSource")
        for key in ("S3Uri", "S3URI"):
            uri, uri_line = lookup(s3, key)
            if uri_line is not None:
                uri = literal(refs.resolve(uri))
                if uri:
                    uris.append(uri)
                first_line = first_line or uri_line or channel_line
                break
    output, _ = lookup(body, "OutputDataConfig")
    out, out_line = lookup(refs.resolve(output), "S3OutputPath")
    out = literal(refs.resolve(out))
    if out:
        uris.append(out)
    draft.put(
        "data.uris",
        list(dict.fromkeys(uris)) or None,
        first_line or channels_line or out_line,
    )
    checkpoint, _ = lookup(body, "CheckpointConfig")
    uri, line = lookup(refs.resolve(checkpoint), "S3Uri")
    if line is not None:
        draft.put("checkpoint.uri", literal(refs.resolve(uri)), line)


def set_region(draft: JobDraft, body: Any, found: Found) -> None:
    """The CRD's `region`, else the training image's ECR region (it must be the job's region)."""
    region, line = lookup(body, "Region")
    if line is not None:
        draft.put("region", region, line)
        return
    algorithm, _ = lookup(body, "AlgorithmSpecification")
    image, image_line = lookup(algorithm, "TrainingImage")
    if isinstance(image, str) and not is_templated(image):
        match = _ECR_REGION.search(image)
        if match:
            draft.put("region", match.group(1), image_line)


def set_tags(draft: JobDraft, body: Any) -> None:
    """`Tags: [{Key, Value}]` (the API and CloudFormation), `[{key, value}]` (CRDs) or a map."""
    tags, _ = lookup(body, "Tags")
    if isinstance(tags, dict) and not has(tags, "Key"):
        for key, value in tags.items():
            draft.tag(key, value)
        return
    for tag, _ in items(tags):
        key, _ = lookup(tag, "Key")
        if key is None:
            key, _ = lookup(tag, "Name")  # the first operator's `{name, value}` pairs
        draft.tag(key, lookup(tag, "Value")[0])


def finish(draft: JobDraft, refs: Refs) -> Resource:
    """The body's Resource: on-demand when no capacity was stated, a note naming any parameter
    defaults used."""
    # CreateTrainingJob: no EnableManagedSpotTraining is on-demand; endpoints and notebook
    # instances have no spot option at all.
    draft.default("capacity", Capacity.ON_DEMAND)
    if refs.used:
        draft.add_note("parameter defaults used: " + ", ".join(dict.fromkeys(refs.used)))
    return draft.build()
