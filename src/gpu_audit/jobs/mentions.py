"""Whether a document mentions a key or value anywhere: the AWS formats' cheap markers.

SageMaker and Batch bodies may sit anywhere in a document (a CloudFormation resource, a Step
Functions state, a JSON string under `DefinitionString`), so their markers walk it once for
a key (case-insensitive, `Key.$` included, as `aws_bodies.lookup` matches), an exact value,
or a string that could embed one. A walk too large to finish says yes: the parser decides.
"""

from __future__ import annotations

from typing import Any

from gpu_audit.core.yamlsrc import Templated

MAX_NODES = 200_000  # as aws_bodies' search: alias-expanded documents can be large
# What a JSON string must contain for `aws_bodies` to parse it as an embedded definition.
EMBED_MARKERS = (
    "ResourceConfig",
    "HyperParameterTuningJobConfig",
    "ProductionVariants",
    "containerProperties",
    "computeResources",
    "ComputeResources",
)


def mentions(data: Any, keys: frozenset[str], values: frozenset[str] = frozenset()) -> bool:
    """Any mapping key folded to lower case (less a `.$`) in `keys`, any string in `values`, or
    any string that may embed a definition; keys must be given in lower case."""
    stack = [data]
    seen: set[int] = set()
    budget = MAX_NODES
    while stack:
        budget -= 1
        if budget <= 0:
            return True
        node = stack.pop()
        if isinstance(node, dict):
            if id(node) in seen:
                continue
            seen.add(id(node))
            for key in node:
                if isinstance(key, str) and key.lower().removesuffix(".$") in keys:
                    return True
            stack.extend(node.values())
        elif isinstance(node, list):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(node)
        elif isinstance(node, str | Templated):
            text = node.text if isinstance(node, Templated) else node
            if text in values or any(marker in text for marker in EMBED_MARKERS):
                return True
    return False
