"""Vertex AI shapes beyond the REST bodies: the Python SDK's snake_case, and model endpoints.

The SDK (`aiplatform.CustomJob(worker_pool_specs=[...])`) spells the REST fields in snake_case
(`worker_pool_specs`, `machine_spec`, `accelerator_type`); configs written for it are read by
renaming their keys to camelCase, lines kept. User-chosen keys (labels, env, args) are left as
written. An endpoint deployment (`dedicatedResources`, in a `deployedModel` or bare) serves a
model: it is inference, with GPUs × its maximum replica count.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_audit.core.yamlsrc import LineList, LineMap

_SNAKE = re.compile(r"_([a-z0-9])")
_VERBATIM = {"labels", "env", "args", "command", "hyperparameters", "parameters", "metadata"}


def camel(node: Any, depth: int = 0) -> Any:  # Any: JSON of any shape
    """A copy of a snake_case tree with camelCase keys, lines kept."""
    if depth > 32:
        return node
    if isinstance(node, LineMap):
        copy = LineMap(node.line)
        for key, value in node.items():
            new = _SNAKE.sub(lambda m: m.group(1).upper(), key) if isinstance(key, str) else key
            copy[new] = value if new in _VERBATIM else camel(value, depth + 1)
            copy.key_lines[new] = node.line_of(key)
        return copy
    if isinstance(node, LineList):
        items = LineList(node.line)
        items.extend(camel(item, depth + 1) for item in node)
        items.item_lines = list(node.item_lines)
        return items
    return node


def is_snake_job(data: LineMap) -> bool:
    """A Vertex job written for the Python SDK: `worker_pool_specs`, top level or in a spec."""
    if "worker_pool_specs" in data:
        return True
    spec = data.get("job_spec") or data.get("trial_job_spec")
    return isinstance(spec, dict) and "worker_pool_specs" in spec


def deployment(data: LineMap) -> LineMap | None:
    """The `dedicatedResources` of an endpoint deployment (bare or in `deployedModel`)."""
    holder = data.get("deployedModel")
    holder = holder if isinstance(holder, LineMap) else data
    resources = holder.get("dedicatedResources")
    if isinstance(resources, LineMap) and isinstance(resources.get("machineSpec"), LineMap):
        return resources
    return None
