"""Vertex AI custom and tuning jobs, and legacy AI Platform `trainingInput` jobs.

Recognised shapes:
- a CustomJobSpec (the `gcloud ai custom-jobs create --config` file): top-level `workerPoolSpecs`,
  as a list or written as a single mapping;
- a CustomJob body (`displayName`, `jobSpec.workerPoolSpecs`, `labels`);
- a HyperparameterTuningJob body (`maxTrialCount`, `studySpec`, `trialJobSpec`);
- a legacy AI Platform job or its `--config` file (`trainingInput` with `scaleTier`,
  `masterType`/`masterConfig.acceleratorConfig`, `workerCount`, `hyperparameters.maxTrials`);
- the flat launcher variables of Vertex sample notebooks (`machine_type`, `gpu_type`,
  `gpus_per_node`, `nodes`, `strategy`);
- any of the job shapes in the Python SDK's snake_case, and model deployments to an endpoint
  (`dedicatedResources`): vertex_sdk.py.

GPUs are summed over the worker pools (`acceleratorCount` × `replicaCount`, or the catalog's
GPUs for machine types with built-in GPUs) and judged by the largest class. Defaults: no
`scheduling.strategy` is STANDARD (on-demand, per the CustomJobSpec reference); a pool's
`reservationAffinity` with a specific reservation is reserved; tuning studies stop trials early
only with an automated stopping spec. `baseOutputDirectory` is where Vertex points
`AIP_CHECKPOINT_DIR`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gpu_audit.catalog import canonical_gpu, instance_spec
from gpu_audit.core.resource import Capacity, Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineMap, is_templated
from gpu_audit.jobs.evidence import Kind, infer, runs_in
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.values import as_bool, as_number, text
from gpu_audit.jobs.vertex.pools import (
    Pools,
    set_gpus,
    set_outputs,
    set_strategy,
    set_timeout,
    worker_pools,
)
from gpu_audit.jobs.vertex.sdk import camel, deployment, is_snake_job

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
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "set `scheduling.strategy: SPOT`",
        "limits.max_runtime_hours": "set `scheduling.timeout` (in `trialJobSpec` for a tuning job)",
        "gpu.model": "choose a smaller GPU in `machineSpec.acceleratorType`",
        "checkpoint.uri": "set `baseOutputDirectory.outputUriPrefix` to a `gs://` prefix (the job "
        "gets it as `AIP_CHECKPOINT_DIR`) and save to and resume from it",
        "hpo.max_trials": "set `maxTrialCount`",
        "hpo.early_stopping": "set an automated stopping spec in `studySpec` "
        "(`decayCurveStoppingSpec`, `medianAutomatedStoppingSpec`)",
        "tags.*": "add the keys to `labels`",
        "estimate.ceiling_usd": "lower `scheduling.timeout` (a tuning job: or `maxTrialCount`), or "
        "raise the `gpu-audit-budget-usd` label",
        "retired": "ask for a current GPU in `machineSpec.acceleratorType`; a legacy AI Platform "
        "job moves to a Vertex AI custom job (`gcloud ai custom-jobs create`)",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap) or ("apiVersion" in data and "kind" in data):
            return None
        if is_snake_job(data) or "dedicated_resources" in data or "deployed_model" in data:
            data = camel(data)
        endpoint = deployment(data)
        if endpoint is not None:
            return _endpoint(document, path, data, endpoint)
        spec, kind = _job_spec(data)
        if spec is not None:
            return _custom(document, path, data, spec, kind)
        legacy = data.get("trainingInput")
        if isinstance(legacy, dict) and (_legacy_markers(legacy) or _is_launcher(data)):
            return _legacy(document, path, data)
        return _launcher(document, path, data) if _is_launcher(data) else None


def _endpoint(document: Document, path: str, data: LineMap, resources: LineMap) -> list[Resource]:
    """A model deployed to an endpoint: inference on `maxReplicaCount` (else min) machines."""
    model = data.get("deployedModel")
    name = text(model.get("displayName")) if isinstance(model, LineMap) else None
    draft = JobDraft("vertex", path, document, name=name or text(data.get("displayName")))
    replicas = resources.get("maxReplicaCount", resources.get("minReplicaCount", 1))
    pool = LineMap(resources.line)
    pool["machineSpec"] = resources["machineSpec"]
    pool.key_lines["machineSpec"] = resources.line_of("machineSpec")
    pool["replicaCount"] = replicas
    key = "maxReplicaCount" if "maxReplicaCount" in resources else "minReplicaCount"
    pool.key_lines["replicaCount"] = resources.line_of(key)
    if not set_gpus(draft, worker_pools(pool, resources.line)):
        return []
    infer(draft, [], Kind(Workload.INFERENCE, "a Vertex AI model deployment", resources.line))
    spot = as_bool(resources.get("spot"))
    if spot is not None:
        draft.set(
            "capacity", Capacity.SPOT if spot else Capacity.ON_DEMAND, resources.line_of("spot")
        )
    draft.default("capacity", Capacity.ON_DEMAND)  # `spot` defaults to false
    draft.add_note("a model deployment: GPUs of its maximum replica count")
    return [draft.build()]


def _legacy_markers(legacy: dict[Any, Any]) -> bool:
    keys = ("scaleTier", "masterType", "masterConfig", "pythonModule", "runtimeVersion")
    return any(key in legacy for key in keys) or _tuning_only(legacy)


def _tuning_only(legacy: dict[Any, Any]) -> bool:
    """A `--config` file of a tuning job alone: the machines come from `--scale-tier` on the
    command line (`gcloud ai-platform jobs submit training --config hptuning_config.yaml`)."""
    hyper = legacy.get("hyperparameters")
    return isinstance(hyper, dict) and any(k in hyper for k in ("maxTrials", "params", "goal"))


def _custom(document: Document, path: str, data: Any, spec: Any, kind: str) -> list[Resource]:
    draft = JobDraft("vertex", path, document, name=text(data.get("displayName")))
    pools = worker_pools(spec.get("workerPoolSpecs"), spec.line_of("workerPoolSpecs"))
    if not set_gpus(draft, pools):
        return []
    scheduling = spec.get("scheduling")
    if isinstance(scheduling, LineMap):
        set_strategy(draft, scheduling.get("strategy"), scheduling.line_of("strategy"))
        set_timeout(draft, scheduling.get("timeout"), scheduling.line_of("timeout"))
    set_outputs(draft, spec, pools)
    labels = data.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            draft.tag(key, value)
    if kind == "HyperparameterTuningJob":
        _study(draft, data)
    infer(draft, runs_in(spec), Kind(Workload.TRAINING, f"a Vertex AI {kind}"))
    if kind == "CustomJobSpec":
        draft.add_note("a CustomJobSpec: region and labels are given on the command line")
        draft.templated.add("tags.*")  # `--labels`: set at launch, so not evaluated here
    draft.default("capacity", Capacity.ON_DEMAND)  # no `scheduling.strategy`: STANDARD
    return [draft.build()]


def _study(draft: JobDraft, data: LineMap) -> None:
    if "maxTrialCount" in data:
        draft.put(  # the draft refuses an impossible count at its line
            "hpo.max_trials",
            as_number(data.get("maxTrialCount")),
            data.line_of("maxTrialCount"),
            raw=data.get("maxTrialCount"),  # `${MAX_TRIALS}`: set at deploy time, not absent
        )
    study = data.get("studySpec")
    if isinstance(study, LineMap):
        stopping = next((key for key in _STOPPING_SPECS if key in study), None)
        if stopping is not None:
            draft.put("hpo.early_stopping", True, study.line_of(stopping))
        else:
            draft.put("hpo.early_stopping", False)  # no automated stopping spec: trials run out
    line = data.line_of("parallelTrialCount")
    parallel = draft.count("parallelTrialCount", data.get("parallelTrialCount"), line)
    draft.put("hpo.parallel_trials", parallel, line, raw=data.get("parallelTrialCount"))
    draft.add_note(
        "GPUs per trial" + (f"; up to {parallel} trials in parallel" if parallel else "")
    )


def _legacy(document: Document, path: str, data: LineMap) -> list[Resource]:
    """An AI Platform (pre-Vertex) training job: master + workers of legacy or GCE machine types."""
    job = data["trainingInput"]
    name = text(data.get("jobId"))
    draft = JobDraft("vertex", path, document, name=name)
    pools = Pools()
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
    machines = ("scaleTier", "masterType", "masterConfig", "workerType")
    if pools.models is None and _tuning_only(job) and not any(k in job for k in machines):
        # a tuning config alone: the machines come from `--scale-tier`, not from the file
        pools.unknown = True
        draft.add_note("a tuning config: the scale tier and its GPUs are given on the command line")
    if not set_gpus(draft, pools):
        return []
    draft.put(
        "region",
        text(job.get("region")),
        job.line_of("region") if "region" in job else None,
    )
    scheduling = job.get("scheduling")
    if isinstance(scheduling, LineMap):
        set_timeout(draft, scheduling.get("maxRunningTime"), scheduling.line_of("maxRunningTime"))
    output = job.get("jobDir")
    if text(output):
        draft.put("checkpoint.uri", output, job.line_of("jobDir"))
        draft.put("data.uris", [output], job.line_of("jobDir"))
    hyper = job.get("hyperparameters")
    draft.anchor = data.line_of("trainingInput")  # a finding on an unstated field points here
    if isinstance(hyper, LineMap):
        for field in ("hpo.max_trials", "hpo.early_stopping"):  # the block that states them
            draft.mark(field, job.line_of("hyperparameters"))
        if "maxTrials" in hyper:
            draft.put(  # the draft refuses an impossible count at its line
                "hpo.max_trials",
                as_number(hyper.get("maxTrials")),
                hyper.line_of("maxTrials"),
                raw=hyper.get("maxTrials"),
            )
        if "enableTrialEarlyStopping" in hyper:
            draft.put(
                "hpo.early_stopping",
                as_bool(hyper.get("enableTrialEarlyStopping")),
                hyper.line_of("enableTrialEarlyStopping"),
            )
        else:
            draft.put("hpo.early_stopping", False)
    labels = data.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            draft.tag(key, value)
    infer(draft, runs_in(job), Kind(Workload.TRAINING, "an AI Platform training job"))
    draft.add_note(
        "legacy AI Platform training job: it has no spot capacity; Vertex AI custom jobs run on"
        " Spot with `scheduling.strategy: SPOT`"
    )
    draft.set("service", "ai-platform")
    draft.default("capacity", Capacity.ON_DEMAND)  # AI Platform Training had no spot option
    return [draft.build()]


def _legacy_role(
    job: LineMap, role: str, count_key: str | None, pools: Pools, draft: JobDraft
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
        pools.machine_type = (text(machine_type), job.line_of(type_key) if machine_type else line)
    pools.add(model, int(per * machines) if per is not None else None, line)


def _launcher(document: Document, path: str, data: LineMap) -> list[Resource]:
    """Vertex sample launcher variables: `nodes` × `gpus_per_node` `gpu_type` on `machine_type`."""
    draft = JobDraft("vertex", path, document, name=text(data.get("job_prefix")))
    machine_line = data.line_of("machine_type")
    draft.put("instance_type", text(data.get("machine_type")), machine_line)
    gpu_type = data.get("gpu_type")
    draft.put(
        "gpu.model",
        None if is_templated(gpu_type) else canonical_gpu(gpu_type) or gpu_type,
        data.line_of("gpu_type"),
    )
    per = as_number(data.get("gpus_per_node"))
    nodes = as_number(data.get("nodes", 1))
    if per is not None and nodes is not None:
        draft.put("gpu.count", int(per * nodes), data.line_of("gpus_per_node"))
    if "strategy" in data:
        set_strategy(draft, data.get("strategy"), data.line_of("strategy"))
    for key, field in (("region", "region"), ("zone", "zone")):
        if key in data:
            draft.put(field, text(data.get(key)), data.line_of(key))
    draft.add_note("Vertex launcher variables (a sample's wrapper config)")
    infer(draft, [], Kind(Workload.TRAINING, "a Vertex AI training launcher"))
    draft.default("capacity", Capacity.ON_DEMAND)  # no strategy: STANDARD, as in the CustomJob
    return [draft.build()]
