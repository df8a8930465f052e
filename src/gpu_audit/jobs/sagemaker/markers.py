"""Whether a document may be SageMaker's, from its markers alone (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

from gpu_audit.jobs.mentions import mentions

CRD_GROUPS = ("sagemaker.aws.amazon.com", "sagemaker.services.k8s.aws")
# The keys that make a training, tuning or endpoint-config body, and a notebook's resource type.
_BODY_KEYS = frozenset({"resourceconfig", "hyperparametertuningjobconfig", "productionvariants"})
_NOTEBOOK = frozenset({"AWS::SageMaker::NotebookInstance"})


def is_sdk_config(data: Any) -> bool:
    """The SageMaker Python SDK's config file (`SchemaVersion`, `SageMaker:`)."""
    return (
        isinstance(data, dict)
        and "SchemaVersion" in data
        and isinstance(data.get("SageMaker"), dict)
    )


def claims(data: dict[Any, Any]) -> bool:
    """An SDK config, an operator's custom resource, or a body anywhere in the document."""
    if is_sdk_config(data):
        return True
    if "apiVersion" in data and "kind" in data:
        return str(data.get("apiVersion", "")).split("/", 1)[0] in CRD_GROUPS
    return mentions(data, _BODY_KEYS, _NOTEBOOK)
