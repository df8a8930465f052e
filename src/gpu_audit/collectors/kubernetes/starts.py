"""A GPU pod's restarts, resume time and start-up, from its status (docs/spot.md).

Resume: from a restarted container's `lastState.terminated.finishedAt` to the pod's `Ready`
transition (the mean over the containers that restarted). Start-up: from `PodScheduled` to
`Ready` (image pull, init containers) for a pod none of whose containers restarted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_audit.collectors.kubernetes.nodes import timestamp
from gpu_audit.core.resource import Run


# Any: the Kubernetes client's objects are untyped
def _condition(status: Mapping[str, Any], kind: str) -> Any:
    for condition in status.get("conditions") or ():
        if (
            isinstance(condition, Mapping)
            and condition.get("type") == kind
            and condition.get("status") == "True"
        ):
            return timestamp(condition.get("lastTransitionTime"))
    return None


def _count(value: Any) -> int:
    """A restart count as the API gives it (an integer); anything else is none."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def pod_starts(status: Mapping[str, Any]) -> Run:
    """The pod's `run` figures: restarts (as interruptions too), mean resume and start-up, in
    minutes; missing where the status does not say."""
    containers = [c for c in status.get("containerStatuses") or () if isinstance(c, Mapping)]
    if not containers:
        return Run()
    restarts = sum(_count(c.get("restartCount")) for c in containers)
    ready = _condition(status, "Ready")
    resumes = []
    for container in containers:
        last = container.get("lastState")
        terminated = last.get("terminated") if isinstance(last, Mapping) else None
        terminated = terminated if isinstance(terminated, Mapping) else {}
        finished = timestamp(terminated.get("finishedAt"))
        if _count(container.get("restartCount")) and finished and ready and ready >= finished:
            resumes.append((ready - finished).total_seconds() / 60)
    startup = None
    scheduled = _condition(status, "PodScheduled")
    if not restarts and scheduled and ready and ready >= scheduled:
        startup = round((ready - scheduled).total_seconds() / 60, 4)
    return Run(
        interruptions=restarts,
        restarts=restarts,
        resume_minutes=round(sum(resumes) / len(resumes), 4) if resumes else None,
        startup_minutes=startup,
    )
