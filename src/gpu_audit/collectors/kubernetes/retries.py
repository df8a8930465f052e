"""Retries counted per run and per sweep on Kubernetes (docs/spot.md): pure functions.

A run is the training workload that owns a GPU pod (a Job, PyTorchJob, TFJob, MPIJob, …, from
the pod's owner). Its restarts are its live GPU pods' container restarts (`restartCount`)
plus, for a batch Job, the pods it has already lost and replaced (`status.failed`: a pod of a
Job with `restartPolicy: Never` is retried as a new pod, so its restart count stays 0). A sweep
is a Katib Experiment, named by the `katib.kubeflow.org/experiment` label Katib puts on a
trial's pods (or on the trial's Job); its restarts are its runs' restarts summed. Kubernetes
does not say why a container restarted: a spot reclaim and a crash count alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource

EXPERIMENT = "katib.kubeflow.org/experiment"
RUN_KINDS = frozenset(
    {
        "Job",
        "PyTorchJob",
        "TFJob",
        "MPIJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
        "TrainJob",
        "RayJob",
    }
)


@record
class Counted:
    """One pod's run and sweep, with their restarts (None: not known)."""

    job: str | None = None  # `PyTorchJob/bert` (namespace left out: the pod's own)
    job_restarts: int | None = None
    sweep: str | None = None  # `Experiment/lr-search`
    sweep_restarts: int | None = None
    sweep_runs: int | None = None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _restarts(pod: Mapping[str, Any]) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or ()
    return sum(_count(s.get("restartCount")) for s in statuses if isinstance(s, Mapping))


def _meta(item: Mapping[str, Any] | None) -> Mapping[str, Any]:
    meta = (item or {}).get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _labels(item: Mapping[str, Any] | None) -> Mapping[str, Any]:
    labels = _meta(item).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _failed(job: Mapping[str, Any] | None) -> int:
    status = (job or {}).get("status")
    return _count(status.get("failed")) if isinstance(status, Mapping) else 0


def count_retries(
    pods: Iterable[tuple[Mapping[str, Any], tuple[str, str] | None]],
    jobs: Sequence[Mapping[str, Any]] | None,
) -> dict[tuple[str, str], Counted]:
    """(namespace, pod name) → its run's and sweep's restarts, for GPU pods given with their
    owner; `jobs` None: the Jobs could not be read (their failed pods are not counted)."""
    by_job = {
        (str(_meta(j).get("namespace", "")), str(_meta(j).get("name", ""))): j for j in jobs or ()
    }
    runs: dict[tuple[str, str, str], int] = {}  # (namespace, kind, name) → restarts
    sweeps: dict[tuple[str, str], set[tuple[str, str, str]]] = {}
    placed: dict[tuple[str, str], tuple[tuple[str, str, str] | None, tuple[str, str] | None]] = {}
    for pod, owner in pods:
        meta = _meta(pod)
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        run = None
        if owner is not None and owner[0] in RUN_KINDS:
            run = (namespace, owner[0], owner[1])
            job = by_job.get((namespace, owner[1])) if owner[0] == "Job" else None
            if run not in runs:
                runs[run] = _failed(job)
            runs[run] += _restarts(pod)
        else:
            job = None
        experiment = _labels(pod).get(EXPERIMENT) or _labels(job).get(EXPERIMENT)
        sweep = (namespace, str(experiment)) if experiment else None
        if sweep is not None:
            sweeps.setdefault(sweep, set()).add(run or (namespace, "Pod", name))
            if run is None:
                runs[(namespace, "Pod", name)] = _restarts(pod)
        placed[(namespace, name)] = (run, sweep)
    counted: dict[tuple[str, str], Counted] = {}
    for key, (run, sweep) in placed.items():
        found = Counted()
        if run is not None:
            found = Counted(job=f"{run[1]}/{run[2]}", job_restarts=runs[run])
        if sweep is not None:
            members = sweeps[sweep]
            found = Counted(
                found.job,
                found.job_restarts,
                sweep=f"Experiment/{sweep[1]}",
                sweep_restarts=sum(runs[m] for m in members),
                sweep_runs=len(members),
            )
        counted[key] = found
    return counted


def note_of(counted: Counted, jobs_read: bool) -> str | None:
    """`PyTorchJob/bert: 3 restarts; Experiment/lr: 5 restarts over 2 runs` for the pod's note
    (nothing where there were none)."""
    parts = []
    if counted.job is not None and counted.job.startswith("Job/") and not jobs_read:
        parts.append(
            f"{counted.job}: {counted.job_restarts} restarts (its failed pods not counted: "
            "Jobs could not be listed)"
        )
    elif counted.job is not None and counted.job_restarts:
        parts.append(f"{counted.job}: {counted.job_restarts} restarts")
    if counted.sweep is not None and counted.sweep_restarts:
        parts.append(
            f"{counted.sweep}: {counted.sweep_restarts} restarts over {counted.sweep_runs} runs"
        )
    return "; ".join(parts) or None


def with_retries(
    resource: Resource, counted: Counted | None, jobs: Sequence[Mapping[str, Any]] | None
) -> Resource:
    """The pod with its run's and sweep's restarts in `run`, said in its note too."""
    if counted is None or (counted.job is None and counted.sweep is None):
        return resource
    run = replace(
        resource.run,
        job=counted.job,
        job_restarts=counted.job_restarts,
        sweep=counted.sweep,
        sweep_restarts=counted.sweep_restarts,
        sweep_runs=counted.sweep_runs,
    )
    said = note_of(counted, jobs is not None)
    note = "; ".join(n for n in (resource.source.note, said) if n) or None
    return replace(resource, run=run, source=replace(resource.source, note=note))
