"""Vertex AI worker pools and the fields around them: GPUs, scheduling, outputs, bucket URIs."""

from __future__ import annotations

import re
from typing import Any

from gpu_audit.catalog import canonical_gpu, class_rank, instance_spec
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Capacity
from gpu_audit.core.yamlsrc import LineList, LineMap, is_templated
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.values import as_number, duration_hours, text

_STRATEGY = {
    "SPOT": Capacity.SPOT,
    "LOW_COST": Capacity.SPOT,  # deprecated: "potential use of spot resources"
    "STANDARD": Capacity.ON_DEMAND,
    "ON_DEMAND": Capacity.ON_DEMAND,
    "STRATEGY_UNSPECIFIED": Capacity.ON_DEMAND,
    "FLEX_START": Capacity.ON_DEMAND,  # Dynamic Workload Scheduler: queued, on-demand priced
    "RESERVATION": Capacity.RESERVED,
}


_GCS = re.compile(r"gs://[A-Za-z0-9._\-]+(?:/[^\s\"',;{$]*)?")


_GCS_FUSE = re.compile(r"(?<![\w/])/gcs/([A-Za-z0-9._\-]+)(/[^\s\"',;{$]*)?")


@record(frozen=False)
class Pools:
    """GPUs summed over worker pools, with the line of the key each came from."""

    count: int | None = 0
    models: list[tuple[str, int | None]] | None = None
    machine_type: tuple[Any, int | None] | None = None
    count_line: int | None = None
    unknown: bool = False  # a templated machine or accelerator: it may have GPUs
    reserved: int | None = None  # the line of a pool's specific-reservation affinity

    def add(self, model: str | None, gpus: int | None, line: int | None) -> None:
        """Add one pool's GPUs: its model kept with its line, the count summed (unknown once any
        pool's is)."""
        if self.models is None:
            self.models = []
        if model:
            self.models.append((model, line))
        if self.count is not None and gpus is not None:
            self.count += gpus
        else:
            self.count = None
        self.count_line = self.count_line or line


def worker_pools(value: Any, line: int) -> Pools:
    """The GPUs of every worker pool (a list, or one pool as a mapping): models, the count summed
    over replicas, the machine type and any reservation affinity, each with its line; a
    templated accelerator leaves the count unknown."""
    pools = Pools()
    entries: list[tuple[Any, int]]
    if isinstance(value, LineList):
        entries = list(zip(value, value.item_lines, strict=False))
    elif isinstance(value, dict):
        entries = [(value, line)]  # a single pool written as a mapping
    else:
        entries = []
    for pool, _ in entries:
        if not isinstance(pool, LineMap) or not pool:
            continue  # `{}` keeps a pool index free in the list
        machine = pool.get("machineSpec")
        if not isinstance(machine, LineMap):
            continue
        affinity = machine.get("reservationAffinity")
        kind = affinity.get("reservationAffinityType") if isinstance(affinity, LineMap) else None
        if isinstance(affinity, LineMap) and str(kind).upper() in _RESERVED:
            pools.reserved = pools.reserved or affinity.line_of("reservationAffinityType")
        replicas_line = pool.line_of("replicaCount") if "replicaCount" in pool else None
        replicas = as_number(pool.get("replicaCount", 1))
        machine_type = machine.get("machineType")
        if pools.machine_type is None or (pools.machine_type[0] is None and machine_type):
            pools.machine_type = (machine_type, machine.line_of("machineType"))
        accelerator = machine.get("acceleratorType")
        accel_line = machine.line_of("acceleratorType") if "acceleratorType" in machine else None
        per_machine: int | None
        model: str | None
        if accelerator is not None and str(accelerator) != "ACCELERATOR_TYPE_UNSPECIFIED":
            if is_templated(accelerator):
                pools.unknown = True
                pools.add(None, None, accel_line)
                continue
            model = canonical_gpu(str(accelerator)) or str(accelerator)
            count = as_number(machine.get("acceleratorCount", 1))
            per_machine = int(count) if count is not None else None
            count_line = (
                machine.line_of("acceleratorCount") if "acceleratorCount" in machine else accel_line
            )
        else:
            if not isinstance(machine_type, str) or is_templated(machine_type):
                pools.unknown = pools.unknown or machine_type is not None
                continue
            spec = instance_spec(machine_type)
            if spec is None:
                continue  # a CPU-only pool
            model, per_machine = canonical_gpu(spec.gpu_model) or spec.gpu_model, spec.gpu_count
            accel_line = count_line = machine.line_of("machineType")
        gpus = (
            per_machine * int(replicas)
            if per_machine is not None and replicas is not None
            else None
        )
        pools.add(model, gpus, accel_line)
        pools.count_line = pools.count_line or (
            replicas_line if replicas_line and gpus else count_line
        )
    return pools


_RESERVED = {"SPECIFIC_RESERVATION", "ANY_RESERVATION"}


def set_gpus(draft: JobDraft, pools: Pools) -> bool:
    """Fill instance type and GPUs; False when no pool has GPUs (a CPU job)."""
    if pools.reserved is not None:
        draft.set("capacity", Capacity.RESERVED, pools.reserved)
    if pools.machine_type is not None:
        machine_type, line = pools.machine_type
        draft.put("instance_type", machine_type if isinstance(machine_type, str) else None, line)
    if pools.models is None:
        return pools.unknown
    models = pools.models
    if not models:
        draft.mark("gpu.model", pools.count_line)  # a templated accelerator
    if models:
        model, line = max(
            models, key=lambda m: (class_rank(m[0]) is not None, class_rank(m[0]) or 0)
        )
        draft.put("gpu.model", model, line)
        if len({m for m, _ in models}) > 1:
            draft.add_note("pools mix " + ", ".join(sorted({m for m, _ in models})))
    draft.put("gpu.count", pools.count or None, pools.count_line)
    return True


def set_strategy(draft: JobDraft, value: Any, line: int) -> None:
    """Set the capacity from `scheduling.strategy` (`SPOT`, `LOW_COST`, `STANDARD`…); templated or
    unknown leaves it unknown."""
    if value is None:
        return
    capacity = _STRATEGY.get(str(value).upper()) if not is_templated(value) else None
    if capacity is None:
        draft.unknown("capacity", line)  # templated or unknown: missing, not the default
    else:
        draft.set("capacity", capacity, line)


def set_timeout(draft: JobDraft, value: Any, line: int) -> None:
    """Set the runtime cap from `scheduling.timeout` (a duration such as `86400s`)."""
    if value is None:
        return
    draft.put("limits.max_runtime_hours", duration_hours(value), line, raw=value)


def set_outputs(draft: JobDraft, spec: LineMap, pools: Pools) -> None:
    """Set the checkpoint from `baseOutputDirectory.outputUriPrefix`, and the data URIs from it
    and the `gs://` URIs in the pools' args, command, env and package URIs."""
    uris: list[str] = []
    base = spec.get("baseOutputDirectory")
    base_line: int | None = None
    if isinstance(base, LineMap) and "outputUriPrefix" in base:
        prefix = base.get("outputUriPrefix")
        base_line = base.line_of("outputUriPrefix")
        draft.put("checkpoint.uri", text(prefix), base_line)
        if text(prefix):
            uris.append(str(prefix))
    first_arg_line: int | None = None
    for pool in pool_list(spec.get("workerPoolSpecs")):
        for container_key in ("containerSpec", "pythonPackageSpec"):
            container = pool.get(container_key)
            if isinstance(container, LineMap):
                for key in ("args", "command", "env", "packageUris"):
                    if key in container and gcs_uris(container.get(key), uris):
                        first_arg_line = first_arg_line or container.line_of(key)
    draft.put("data.uris", list(dict.fromkeys(uris)) or None, base_line or first_arg_line)


def pool_list(value: Any) -> list[LineMap]:
    """The worker pools as a list of mappings (one pool written as a mapping; anything else
    none)."""
    if isinstance(value, LineMap):
        return [value]
    if isinstance(value, list):
        return [pool for pool in value if isinstance(pool, LineMap)]
    return []


def gcs_uris(value: Any, into: list[str], budget: int = 500) -> bool:
    """Collect gs:// URIs (and gcsfuse `/gcs/bucket/…` paths) from args and env values."""
    found = False
    stack = [value]
    while stack and budget > 0:
        budget -= 1
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str) and not is_templated(item):
            for match in _GCS.finditer(item):
                into.append(match.group(0).rstrip("/."))
                found = True
            for match in _GCS_FUSE.finditer(item):
                into.append(f"gs://{match.group(1)}{match.group(2) or ''}".rstrip("/."))
                found = True
    return found
