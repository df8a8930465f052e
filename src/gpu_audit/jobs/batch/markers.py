"""Whether a document may be AWS Batch's, from its markers alone (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

from gpu_audit.jobs.mentions import mentions

# A top-level key of a job definition, a container-properties file, a compute environment or
# a SubmitJob body (folded to lower case, as the parser looks keys up).
_TOP_KEYS = frozenset(
    {
        "containerproperties",
        "nodeproperties",
        "eksproperties",
        "resourcerequirements",
        "computeresources",
        "jobqueue",
    }
)
_SUBMIT_KEYS = frozenset({"jobqueue"})


def claims(data: dict[Any, Any]) -> bool:
    """A body at the top, a Batch resource in a CloudFormation template, or a SubmitJob task in
    a Step Functions definition; never a Kubernetes object."""
    if "apiVersion" in data and "kind" in data:
        return False
    if any(isinstance(k, str) and k.lower().removesuffix(".$") in _TOP_KEYS for k in data):
        return True
    if "Resources" in data and isinstance(data.get("Resources"), dict):
        return True  # a CloudFormation template: the parser's search compares every `Type`
    return "States" in data and mentions(data, _SUBMIT_KEYS)
