"""Vertex AI custom and tuning jobs, and legacy AI Platform `trainingInput` jobs.

Recognised shapes:
- a CustomJobSpec (the `gcloud ai custom-jobs create --config` file): top-level `workerPoolSpecs`,
  as a list or written as a single mapping;
- a CustomJob body (`displayName`, `jobSpec.workerPoolSpecs`, `labels`);
- a HyperparameterTuningJob body (`maxTrialCount`, `studySpec`, `trialJobSpec`);
- a legacy AI Platform job or its `--config` file (`trainingInput` with `scaleTier`,
  `masterType`/`masterConfig.acceleratorConfig`, `workerCount`, `hyperparameters.maxTrials`);
- the flat launcher variables of Vertex sample notebooks (`machine_type`, `gpu_type`,
  `gpus_per_node`, `nodes`, `strategy`).

GPUs are summed over the worker pools (`acceleratorCount` × `replicaCount`, or the catalog's
GPUs for machine types with built-in GPUs) and judged by the largest class. Defaults: no
`scheduling.strategy` is STANDARD (on-demand); tuning studies stop trials early only with an
automated stopping spec. `baseOutputDirectory` is where Vertex points `AIP_CHECKPOINT_DIR`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpu_audit.catalog import canonical_gpu, class_rank, instance_spec
from gpu_audit.jobs.interface import JobDraft, JobFormat, as_bool, as_number
from gpu_audit.model import Capacity, Resource
from gpu_audit.yamlsrc import Document, LineList, LineMap, is_templated

_STRATEGY = {
    "SPOT": Capacity.SPOT,
    "LOW_COST": Capacity.SPOT,  # deprecated: "potential use of spot resources"
    "STANDARD": Capacity.ON_DEMAND,
    "ON_DEMAND": Capacity.ON_DEMAND,
    "STRATEGY_UNSPECIFIED": Capacity.ON_DEMAND,
    "FLEX_START": Capacity.ON_DEMAND,  # Dynamic Workload Scheduler: queued, on-demand priced
    "RESERVATION": Capacity.RESERVED,
}
_STOPPING_SPECS = (
    "decayCurveStoppingSpec",
    "medianAutomatedStoppingSpec",
    "convexAutomatedStoppingSpec",
)
# AI Platform's GPU-enabled legacy machine types and scale tiers: (GPU, count per machine).
_LEGACY_TYPES = {
    "standard_gpu": ("K80", 1),
    "complex_model_m_gpu": ("K80", 4),
    "complex_model_l_gpu": ("K80", 8),
    "standard_p100": ("P100", 1),
    "complex_model_m_p100": ("P100", 4),
    "standard_v100": ("V100", 1),
    "large_model_v100": ("V100", 1),
    "complex_model_m_v100": ("V100", 4),
    "complex_model_l_v100": ("V100", 8),
}
# A URI ends at a template or format placeholder (`{run}`, `$RUN`): what follows is not known.
_GCS = re.compile(r"gs://[A-Za-z0-9._\-]+(?:/[^\s\"',;{$]*)?")
_GCS_FUSE = re.compile(r"(?<![\w/])/gcs/([A-Za-z0-9._\-]+)(/[^\s\"',;{$]*)?")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


@dataclass
class _Pools:
    """GPUs summed over worker pools, with the line of the key each came from."""

    count: int | None = 0
    models: list[tuple[str, int | None]] | None = None
    machine_type: tuple[Any, int | None] | None = None
    count_line: int | None = None
    unknown: bool = False  # a templated machine or accelerator: it may have GPUs

    def add(self, model: str | None, gpus: int | None, line: int | None) -> None:
        if self.models is None:
            self.models = []
        if model:
            self.models.append((model, line))
        if self.count is not None and gpus is not None:
            self.count += gpus
        else:
            self.count = None
        self.count_line = self.count_line or line


def _job_spec(data: dict[Any, Any]) -> tuple[Any, str]:
    """The CustomJobSpec in a document and what holds it; (None, "") when there is none."""
    if "workerPoolSpecs" in data:
        return data, "CustomJobSpec"
    for key, kind in (("jobSpec", "CustomJob"), ("trialJobSpec", "HyperparameterTuningJob")):
        spec = data.get(key)
        if isinstance(spec, dict) and "workerPoolSpecs" in spec:
            return spec, kind
    return None, ""


def _is_launcher(data: dict[Any, Any]) -> bool:
    gpu_type = data.get("gpu_type")
    return (
        "machine_type" in data
        and isinstance(gpu_type, str)
        and (gpu_type.upper().startswith(("NVIDIA_", "TPU_")) or is_templated(gpu_type))
    )


class Vertex(JobFormat):
    name = "vertex"

    def detect(self, document: Document, path: str) -> bool:
        data = document.data
        if not isinstance(data, dict) or ("apiVersion" in data and "kind" in data):
            return False
        if _job_spec(data)[0] is not None:
            return True
        legacy = data.get("trainingInput")
        if isinstance(legacy, dict) and _legacy_markers(legacy):
            return True
        return _is_launcher(data)

    def parse(self, document: Document, path: str) -> list[Resource]:
        data = document.data
        spec, kind = _job_spec(data)
        if spec is not None:
            return _custom(document, path, data, spec, kind)
        if isinstance(data.get("trainingInput"), dict):
            return _legacy(document, path, data)
        return _launcher(document, path, data)


def _legacy_markers(legacy: dict[Any, Any]) -> bool:
    keys = ("scaleTier", "masterType", "masterConfig", "pythonModule", "runtimeVersion")
    return any(key in legacy for key in keys)


def _custom(document: Document, path: str, data: Any, spec: Any, kind: str) -> list[Resource]:
    draft = JobDraft("vertex", path, document, name=_text(data.get("displayName")))
    pools = _worker_pools(spec.get("workerPoolSpecs"), spec.line_of("workerPoolSpecs"))
    if not _set_gpus(draft, pools):
        return []
    notes: list[str] = []
    scheduling = spec.get("scheduling")
    if isinstance(scheduling, LineMap):
        _strategy(draft, scheduling.get("strategy"), scheduling.line_of("strategy"))
        _timeout(draft, scheduling.get("timeout"), scheduling.line_of("timeout"))
    _outputs(draft, spec, pools)
    labels = data.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            draft.tag(key, value)
    if kind == "HyperparameterTuningJob":
        _study(draft, data, notes)
    if kind == "CustomJobSpec":
        notes.append("a CustomJobSpec: region and labels are given on the command line")
    draft.note = "; ".join(filter(None, [draft.note, *notes])) or None
    return [draft.build()]


def _worker_pools(value: Any, line: int) -> _Pools:
    pools = _Pools()
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


def _set_gpus(draft: JobDraft, pools: _Pools) -> bool:
    """Fill instance type and GPUs; False when no pool has GPUs (a CPU job)."""
    if pools.machine_type is not None:
        machine_type, line = pools.machine_type
        _put(draft, "instance_type", machine_type if isinstance(machine_type, str) else None, line)
    if pools.models is None:
        return pools.unknown
    models = pools.models
    if not models and pools.count_line is not None:
        draft.lines["gpu.model"] = pools.count_line  # a templated accelerator
    if models:
        model, line = max(
            models, key=lambda m: (class_rank(m[0]) is not None, class_rank(m[0]) or 0)
        )
        _put(draft, "gpu.model", model, line)
        if len({m for m, _ in models}) > 1:
            draft.note = "pools mix " + ", ".join(sorted({m for m, _ in models}))
    _put(draft, "gpu.count", pools.count or None, pools.count_line)
    return True


def _strategy(draft: JobDraft, value: Any, line: int) -> None:
    if value is None:
        return
    capacity = _STRATEGY.get(str(value).upper()) if not is_templated(value) else None
    _put(draft, "capacity", capacity, line)
    if capacity is None:
        draft.values["capacity"] = None  # templated or unknown: missing, not the default


def _timeout(draft: JobDraft, value: Any, line: int) -> None:
    if value is None:
        return
    seconds: float | None = None
    if isinstance(value, str) and (match := _DURATION.match(value)):
        seconds = float(match.group(1))
    else:
        seconds = as_number(value)
    _put(draft, "limits.max_runtime_hours", None if seconds is None else seconds / 3600, line)


def _outputs(draft: JobDraft, spec: LineMap, pools: _Pools) -> None:
    uris: list[str] = []
    base = spec.get("baseOutputDirectory")
    base_line: int | None = None
    if isinstance(base, LineMap) and "outputUriPrefix" in base:
        prefix = base.get("outputUriPrefix")
        base_line = base.line_of("outputUriPrefix")
        _put(draft, "checkpoint.uri", _text(prefix), base_line)
        if _text(prefix):
            uris.append(str(prefix))
    first_arg_line: int | None = None
    for pool in _pool_list(spec.get("workerPoolSpecs")):
        for container_key in ("containerSpec", "pythonPackageSpec"):
            container = pool.get(container_key)
            if isinstance(container, LineMap):
                for key in ("args", "command", "env", "packageUris"):
                    if key in container and _gcs_uris(container.get(key), uris):
                        first_arg_line = first_arg_line or container.line_of(key)
    _put(draft, "data.uris", list(dict.fromkeys(uris)) or None, base_line or first_arg_line)


def _pool_list(value: Any) -> list[LineMap]:
    if isinstance(value, LineMap):
        return [value]
    if isinstance(value, list):
        return [pool for pool in value if isinstance(pool, LineMap)]
    return []


def _gcs_uris(value: Any, into: list[str], budget: int = 500) -> bool:
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


def _study(draft: JobDraft, data: LineMap, notes: list[str]) -> None:
    if "maxTrialCount" in data:
        trials = as_number(data.get("maxTrialCount"))
        _put(
            draft,
            "hpo.max_trials",
            int(trials) if trials is not None else None,
            data.line_of("maxTrialCount"),
        )
    study = data.get("studySpec")
    if isinstance(study, LineMap):
        stopping = next((key for key in _STOPPING_SPECS if key in study), None)
        if stopping is not None:
            _put(draft, "hpo.early_stopping", True, study.line_of(stopping))
        else:
            _put(draft, "hpo.early_stopping", False)  # no automated stopping spec: trials run out
    parallel = as_number(data.get("parallelTrialCount"))
    notes.append(
        "GPUs per trial" + (f"; up to {int(parallel)} trials in parallel" if parallel else "")
    )


def _legacy(document: Document, path: str, data: LineMap) -> list[Resource]:
    """An AI Platform (pre-Vertex) training job: master + workers of legacy or GCE machine types."""
    job = data["trainingInput"]
    name = _text(data.get("jobId"))
    draft = JobDraft("vertex", path, document, name=name)
    pools = _Pools()
    tier = str(job.get("scaleTier", "")).upper()
    if tier == "BASIC_GPU":
        pools.add("K80", 1, job.line_of("scaleTier"))  # one K80 worker
    else:
        for role, count_key in (
            ("master", None),
            ("worker", "workerCount"),
            ("parameterServer", "parameterServerCount"),
            ("evaluator", "evaluatorCount"),
        ):
            _legacy_role(job, role, count_key, pools, draft)
    if not _set_gpus(draft, pools):
        return []
    _put(
        draft,
        "region",
        _text(job.get("region")),
        job.line_of("region") if "region" in job else None,
    )
    scheduling = job.get("scheduling")
    if isinstance(scheduling, LineMap):
        _timeout(draft, scheduling.get("maxRunningTime"), scheduling.line_of("maxRunningTime"))
    output = job.get("jobDir")
    if _text(output):
        _put(draft, "checkpoint.uri", output, job.line_of("jobDir"))
        _put(draft, "data.uris", [output], job.line_of("jobDir"))
    hyper = job.get("hyperparameters")
    if isinstance(hyper, LineMap):
        if "maxTrials" in hyper:
            trials = as_number(hyper.get("maxTrials"))
            _put(
                draft,
                "hpo.max_trials",
                int(trials) if trials is not None else None,
                hyper.line_of("maxTrials"),
            )
        if "enableTrialEarlyStopping" in hyper:
            _put(
                draft,
                "hpo.early_stopping",
                as_bool(hyper.get("enableTrialEarlyStopping")),
                hyper.line_of("enableTrialEarlyStopping"),
            )
        else:
            _put(draft, "hpo.early_stopping", False)
    labels = data.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            draft.tag(key, value)
    draft.note = "; ".join(filter(None, [draft.note, "legacy AI Platform training job"]))
    return [draft.build()]


def _legacy_role(
    job: LineMap, role: str, count_key: str | None, pools: _Pools, draft: JobDraft
) -> None:
    machines = 1
    if count_key is not None:
        count = as_number(job.get(count_key, 0))
        if count is None:
            pools.unknown = True
            return
        machines = int(count)
    if machines <= 0:
        return
    type_key = f"{role}Type"
    machine_type = job.get(type_key)
    config = job.get(f"{role}Config")
    accelerator = config.get("acceleratorConfig") if isinstance(config, LineMap) else None
    if isinstance(accelerator, LineMap) and accelerator.get("type"):
        model = canonical_gpu(str(accelerator.get("type"))) or str(accelerator.get("type"))
        per = as_number(accelerator.get("count", 1))
        line = accelerator.line_of("type")
    elif isinstance(machine_type, str) and machine_type.lower() in _LEGACY_TYPES:
        model, per = _LEGACY_TYPES[machine_type.lower()]
        line = job.line_of(type_key)
    elif isinstance(machine_type, str) and (spec := instance_spec(machine_type)) is not None:
        model, per, line = spec.gpu_model, spec.gpu_count, job.line_of(type_key)
    else:
        if machine_type is not None and is_templated(machine_type):
            pools.unknown = True
        return
    if pools.machine_type is None:
        pools.machine_type = (_text(machine_type), job.line_of(type_key) if machine_type else line)
    pools.add(model, int(per * machines) if per is not None else None, line)


def _launcher(document: Document, path: str, data: LineMap) -> list[Resource]:
    """Vertex sample launcher variables: `nodes` × `gpus_per_node` `gpu_type` on `machine_type`."""
    draft = JobDraft("vertex", path, document, name=_text(data.get("job_prefix")))
    machine_line = data.line_of("machine_type")
    _put(draft, "instance_type", _text(data.get("machine_type")), machine_line)
    gpu_type = data.get("gpu_type")
    _put(
        draft,
        "gpu.model",
        None if is_templated(gpu_type) else canonical_gpu(gpu_type) or gpu_type,
        data.line_of("gpu_type"),
    )
    per = as_number(data.get("gpus_per_node"))
    nodes = as_number(data.get("nodes", 1))
    if per is not None and nodes is not None:
        _put(draft, "gpu.count", int(per * nodes), data.line_of("gpus_per_node"))
    if "strategy" in data:
        _strategy(draft, data.get("strategy"), data.line_of("strategy"))
    for key, field in (("region", "region"), ("zone", "zone")):
        if key in data:
            _put(draft, field, _text(data.get(key)), data.line_of(key))
    draft.note = "Vertex launcher variables (a sample's wrapper config)"
    return [draft.build()]


def _put(draft: JobDraft, field: str, value: Any, line: int | None = None) -> None:
    """Set a field; a key that is present but unusable stays missing and keeps its line."""
    if value is None and line is not None:
        draft.lines[field] = line
    else:
        draft.set(field, value, line)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() and not is_templated(value) else None
