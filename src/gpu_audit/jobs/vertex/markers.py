"""Whether a document may be Vertex AI's, from its markers alone (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

# Top-level keys of a job spec, a job or tuning-job body, a deployment, a legacy AI Platform job
# and the launcher variables, in camelCase and the Python SDK's snake_case.
_TOP_KEYS = (
    "workerPoolSpecs",
    "worker_pool_specs",
    "jobSpec",
    "job_spec",
    "trialJobSpec",
    "trial_job_spec",
    "deployedModel",
    "deployed_model",
    "dedicatedResources",
    "dedicated_resources",
    "trainingInput",
    "machine_type",
)


def claims(data: dict[Any, Any]) -> bool:
    """One of Vertex's top-level keys, in a document that is no Kubernetes object."""
    if "apiVersion" in data and "kind" in data:
        return False
    return any(key in data for key in _TOP_KEYS)
