"""Vertex AI payloads read into Resources (service `vertex`), following the SageMaker mapping.

Running custom and tuning jobs are live jobs (`kind: job`, `state: running`, `workload:
training`); endpoints' deployed models on dedicated GPU resources (`inference`) and persistent
resources' GPU pools are instances. A custom job that runs on a persistent resource is left to
it, so its GPUs count once. Workbench instances are Compute Engine VMs: the GCE scan has them.
`gpu.count` sums accelerators × replicas over the GPU worker pools (× parallel trials for a
tuning job); a deployed model counts its minimum replicas, the ones always billed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog import canonical_gpu, gpu_class, instance_spec
from gpu_audit.core.resource import (
    Capacity,
    Checkpoint,
    Gpu,
    Hpo,
    Kind,
    Limits,
    Resource,
    SourceRef,
    State,
    Workload,
)

SERVICE = "vertex"
_STRATEGY = {"SPOT": Capacity.SPOT, "LOW_COST": Capacity.SPOT, "RESERVATION": Capacity.RESERVED}
_SECONDS = re.compile(r"^(\d+(?:\.\d+)?)s$")
_STOPPING = ("decayCurveStoppingSpec", "medianAutomatedStoppingSpec", "convexAutomatedStoppingSpec")


def api_time(stamp: Any) -> datetime | None:
    """An API timestamp (RFC 3339, `Z` or an offset) in UTC; None for anything else."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _hours(duration: Any) -> float | None:
    found = _SECONDS.match(str(duration or ""))
    return round(float(found.group(1)) / 3600, 4) if found else None


def pool_gpu(machine: Mapping[str, Any], replicas: int) -> tuple[str | None, Gpu | None]:
    """(machine type, GPUs × replicas) of a machine spec; no GPU, no Gpu."""
    machine_type = machine.get("machineType")
    spec = instance_spec(machine_type)
    count = int(machine.get("acceleratorCount") or 0)
    accelerator = str(machine.get("acceleratorType") or "")
    if count and accelerator and accelerator != "ACCELERATOR_TYPE_UNSPECIFIED":
        model = canonical_gpu(accelerator) or accelerator
        known = gpu_class(model)
        memory = spec.gpu_memory_gib if spec and spec.gpu_model == model else None
        if memory is None and known is not None:
            memory = known.memory_gib
        return machine_type, Gpu(model, count * replicas, memory)
    if spec is not None and replicas > 0:
        return machine_type, Gpu(spec.gpu_model, spec.gpu_count * replicas, spec.gpu_memory_gib)
    return machine_type, None


def _pools(pools: Sequence[Mapping[str, Any]], factor: int) -> tuple[str | None, Gpu | None]:
    """The GPU worker pools summed: the largest pool's type and model, every pool's GPUs."""
    found = []
    for pool in pools:
        replicas = int(pool.get("replicaCount") or 1) * factor
        machine_type, gpu = pool_gpu(pool.get("machineSpec") or {}, replicas)
        if gpu is not None:
            found.append((machine_type, gpu))
    if not found:
        return None, None
    machine_type, biggest = max(found, key=lambda item: item[1].count or 0)
    total = sum(g.count or 0 for _, g in found if g.model == biggest.model)
    return machine_type, Gpu(biggest.model, total, biggest.memory_gib)


class VertexMapper:
    """Translates one project's payloads (`location` is the region Vertex names)."""

    def __init__(self, project: str) -> None:
        self.project = project

    def _base(self, item: Mapping[str, Any], location: str, **fields: Any) -> Resource:
        return Resource(
            provider="gcp",
            service=SERVICE,
            id=str(item["name"]),
            name=str(item.get("displayName") or item["name"]).strip() or None,
            account=self.project,
            region=location,
            state=State.RUNNING,
            tags={str(k): str(v) for k, v in (item.get("labels") or {}).items()},
            launched_at=api_time(item.get("startTime") or item.get("createTime")),
            **fields,
        )

    def _job(
        self,
        item: Mapping[str, Any],
        location: str,
        spec: Mapping[str, Any],
        factor: int,
        **fields: Any,
    ) -> Resource | None:
        machine_type, gpu = _pools(spec.get("workerPoolSpecs") or (), factor)
        if gpu is None:
            return None
        scheduling = spec.get("scheduling") or {}
        output = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
        return self._base(
            item,
            location,
            kind=Kind.JOB,
            instance_type=machine_type,
            capacity=_STRATEGY.get(str(scheduling.get("strategy")), Capacity.ON_DEMAND),
            gpu=gpu,
            workload=Workload.TRAINING,
            checkpoint=Checkpoint(uri=output),  # where Vertex points AIP_CHECKPOINT_DIR
            limits=Limits(max_runtime_hours=_hours(scheduling.get("timeout"))),
            **fields,
        )

    def custom_job(self, job: Mapping[str, Any], location: str) -> Resource | None:
        """A custom job as a Resource, None when it runs on a persistent resource (whose GPUs are
        counted there) or holds no GPU."""
        spec = job.get("jobSpec") or {}
        if spec.get("persistentResourceId"):
            return None  # its GPUs are the persistent resource's
        return self._job(job, location, spec, 1)

    def tuning_job(self, job: Mapping[str, Any], location: str) -> Resource | None:
        """A hyperparameter tuning job as a Resource holding its parallel trials' GPUs, with its
        trial limit and early stopping; None without a GPU."""
        parallel = int(job.get("parallelTrialCount") or 1)
        study = job.get("studySpec") or {}
        trials = job.get("maxTrialCount")
        return self._job(
            job,
            location,
            job.get("trialJobSpec") or {},
            parallel,
            hpo=Hpo(
                max_trials=int(trials) if trials is not None else None,
                early_stopping=any(key in study for key in _STOPPING),
            ),
            source=SourceRef(note=f"{parallel} trials in parallel"),
        )

    def endpoint(self, endpoint: Mapping[str, Any], location: str) -> list[Resource]:
        """One Resource per deployed model on dedicated GPU replicas (its minimum replica count),
        named by model when the endpoint has several."""
        found = []
        for model in endpoint.get("deployedModels") or ():
            dedicated = model.get("dedicatedResources") or {}
            replicas = int(dedicated.get("minReplicaCount") or 1)
            machine_type, gpu = pool_gpu(dedicated.get("machineSpec") or {}, replicas)
            if gpu is not None:
                found.append((model, machine_type, gpu, bool(dedicated.get("spot"))))
        out = []
        for model, machine_type, gpu, spot in found:
            item = dict(endpoint)
            if len(found) > 1:
                item["name"] = f"{endpoint['name']}/deployedModels/{model.get('id')}"
            resource = self._base(
                item,
                location,
                kind=Kind.INSTANCE,
                instance_type=machine_type,
                capacity=Capacity.SPOT if spot else Capacity.ON_DEMAND,
                gpu=gpu,
                workload=Workload.INFERENCE,
                source=SourceRef(note=f"deployed model {model.get('id')}"),
            )
            out.append(resource)
        return out

    def persistent_resource(
        self, resource: Mapping[str, Any], location: str, workload: Workload
    ) -> list[Resource]:
        """One Resource per GPU pool of a persistent resource (its replica count), named by pool
        when it has several."""
        found = []
        for pool in resource.get("resourcePools") or ():
            replicas = int(pool.get("replicaCount") or 1)
            machine_type, gpu = pool_gpu(pool.get("machineSpec") or {}, replicas)
            if gpu is not None:
                found.append((pool, machine_type, gpu))
        out = []
        for pool, machine_type, gpu in found:
            item = dict(resource)
            if len(found) > 1:
                item["name"] = f"{resource['name']}/resourcePools/{pool.get('id')}"
            out.append(
                self._base(
                    item,
                    location,
                    kind=Kind.INSTANCE,
                    instance_type=machine_type,
                    capacity=Capacity.ON_DEMAND,
                    gpu=gpu,
                    workload=workload,
                    source=SourceRef(note=f"persistent resource pool {pool.get('id')}"),
                )
            )
        return out
