"""Whether a document is an Azure ML job or compute (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

JOB_TYPES = frozenset({"command", "sweep", "pipeline"})


def is_azureml(data: dict[Any, Any]) -> bool:
    """An Azure ML `$schema`, or a job `type` run on an `azureml:` compute."""
    schema = str(data.get("$schema", "")).lower()
    if "azureml" in schema:
        return True
    compute = data.get("compute")
    job = data.get("type") in JOB_TYPES
    return job and isinstance(compute, str) and compute.startswith("azureml:")
