"""Azure ML CLI v2 YAML: command, sweep and pipeline jobs, and AmlCompute clusters.

A **job** gets its GPUs from `resources.instance_type` (serverless or Kubernetes compute) ×
`resources.instance_count` (default 1). On a named cluster (`compute: azureml:gpu-cluster`) the
cluster's VM size, defined elsewhere, decides the GPUs: the job is a GPU job when the cluster's
or the environment's name says so (`gpu`, `cuda`), with model and count missing. Capacity is
`queue_settings.job_tier` on serverless compute (Spot → spot, others dedicated → on-demand) and
missing otherwise: the cluster's `tier` decides it. `limits.timeout` (seconds) caps the runtime;
a sweep's `limits.max_total_trials` and `early_termination` are its tuning settings. An output
whose name says checkpoint, or that the command passes to a checkpoint flag, is the checkpoint
location (Azure ML uploads outputs to the workspace's datastore).

An **AmlCompute cluster** (`type: amlcompute`) is where the capacity decision lives, as a Batch
compute environment is: `tier` (default `dedicated`, per the amlCompute YAML reference;
`low_priority` → spot) and the GPU model of `size`; like a Batch compute environment it runs no
job itself, so its GPU count and runtime cap stay missing.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from gpu_audit.core.resource import Capacity, Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineMap
from gpu_audit.jobs.azureml.markers import is_azureml
from gpu_audit.jobs.evidence import Kind, infer, runs_in
from gpu_audit.jobs.gpus import gpu_instance, instance_ask
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.scripts import says_checkpoint
from gpu_audit.jobs.values import as_number, seconds_to_hours, text

_GPU_WORDS = re.compile(r"gpu|cuda|nvidia|\bnc\d|\bnd\d", re.IGNORECASE)
_OUTPUT_REF = re.compile(r"--([\w-]+)[=\s]+\$\{\{\s*outputs\.(\w+)\s*\}\}")


class AzureML(JobFormat):
    name: ClassVar[str] = "azureml"
    hints: ClassVar[dict[str, str]] = {
        "capacity": "set `queue_settings.job_tier` on a serverless job; on a named cluster its "
        "`tier` decides (check the cluster's file)",
        "gpu.count": "name the GPUs with `resources.instance_type`, or check the cluster's `size`",
    }
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "set `queue_settings.job_tier: spot` (serverless), or the compute cluster's "
        "`tier: low_priority`",
        "limits.max_runtime_hours": "set `limits.timeout` (seconds)",
        "gpu.model": "choose a smaller GPU size (`resources.instance_type`, or the cluster's "
        "`size`)",
        "hpo.max_trials": "set `limits.max_total_trials` on the sweep",
        "hpo.early_stopping": "set `early_termination` on the sweep",
        "tags.*": "add the keys to `tags`",
        "estimate.ceiling_usd": "lower `limits.timeout` (a sweep: or `limits.max_total_trials`, "
        "`limits.trial_timeout`), or raise the `gpu-audit/budget-usd` tag",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap) or not is_azureml(data):
            return None
        kind = str(data.get("type", "command")).lower()
        if kind == "amlcompute" or "amlcompute" in str(data.get("$schema", "")).lower():
            return _cluster(document, path, data)
        if kind == "pipeline" or isinstance(data.get("jobs"), LineMap):
            return _pipeline(document, path, data)
        if kind in ("command", "sweep"):
            anchor = data.line_of("trial" if "trial" in data else "command")
            name = text(data.get("display_name"))
            resource = _job(document, path, data, data, name, None, anchor)
            return [resource] if resource is not None else []
        return []


def _cluster(document: Document, path: str, data: LineMap) -> list[Resource]:
    size = text(data.get("size"))
    if size is None or not gpu_instance(size):
        return []
    draft = JobDraft("azureml", path, document, name=text(data.get("name")))
    line = data.line_of("size")
    draft.set("instance_type", size, line)
    ask = instance_ask(size, line)
    if ask is not None:  # it runs no job itself: GPU count and runtime cap stay missing
        draft.set("gpu.model", ask.model, line)
    tier = str(data.get("tier", "dedicated")).lower().replace("-", "_")
    capacity = Capacity.SPOT if tier == "low_priority" else Capacity.ON_DEMAND
    draft.set("capacity", capacity, data.line_of("tier") if "tier" in data else None)
    draft.set("workload", Workload.UNKNOWN)  # a cluster runs whatever jobs are sent to it
    draft.add_note("a compute cluster: capacity for whatever jobs run on it")
    if "location" in data:
        draft.set("region", text(data.get("location")), data.line_of("location"))
    draft.add_note("a compute cluster: capacity and GPUs for the jobs sent to it")
    nodes = as_number(data.get("max_instances"))
    if nodes:
        draft.add_note(f"up to {int(nodes)} nodes")
    _tags(draft, data)
    return [draft.build()]


def _pipeline(document: Document, path: str, data: LineMap) -> list[Resource]:
    """One resource per command or sweep step; a step without `compute` uses the default."""
    jobs = data.get("jobs")
    settings = data.get("settings")
    default = settings.get("default_compute") if isinstance(settings, LineMap) else None
    pipeline = text(data.get("display_name")) or text(data.get("experiment_name"))
    resources: list[Resource] = []
    if not isinstance(jobs, LineMap):
        return resources
    for step, body in jobs.items():
        if not isinstance(body, LineMap) or body.get("type", "command") not in ("command", "sweep"):
            continue
        name = f"{pipeline}/{step}" if pipeline else str(step)
        resource = _job(document, path, data, body, name, default, jobs.line_of(step))
        if resource is not None:
            resources.append(resource)
    return resources


def _job(
    document: Document,
    path: str,
    top: LineMap,
    body: LineMap,
    name: str | None,
    default_compute: Any = None,
    anchor: int | None = None,
) -> Resource | None:
    found = body.get("trial")
    trial: LineMap = found if isinstance(found, LineMap) else body
    draft = JobDraft("azureml", path, document, name=name)
    draft.anchor = anchor  # the job's command (or a pipeline step), not the `$schema` line
    compute = body.get("compute", default_compute)
    if not _gpus(draft, body, trial, compute):
        return None
    _capacity(draft, body, compute)
    limits = body.get("limits")
    sweep = body.get("type") == "sweep"
    if isinstance(limits, LineMap):
        # a sweep's `timeout` ends the whole sweep and `trial_timeout` each trial; a command
        # job's `timeout` is its own runtime cap
        caps = {"trial_timeout": "limits.max_runtime_hours", "timeout": "hpo.timeout_hours"}
        if not sweep:
            caps = {"timeout": "limits.max_runtime_hours"}
        for key, field in caps.items():
            if key in limits:
                raw = limits[key]
                draft.put(field, seconds_to_hours(raw), limits.line_of(key), raw=raw)
        if sweep and "max_concurrent_trials" in limits:
            line = limits.line_of("max_concurrent_trials")
            raw = limits["max_concurrent_trials"]
            parallel = draft.count("max_concurrent_trials", raw, line)
            draft.put("hpo.parallel_trials", parallel, line, raw=raw)
        if "max_total_trials" in limits:
            draft.put(  # the draft refuses an impossible count at its line
                "hpo.max_trials",
                as_number(limits["max_total_trials"]),
                limits.line_of("max_total_trials"),
                raw=limits["max_total_trials"],
            )
    if body.get("type") == "sweep":
        stop = body.get("early_termination")
        draft.set(
            "hpo.early_stopping",
            isinstance(stop, LineMap),
            body.line_of("early_termination") if stop else None,
        )
        draft.add_note("GPUs per trial")
    sweep = (
        Kind(Workload.TRAINING, "an Azure ML sweep job") if body.get("type") == "sweep" else None
    )
    infer(draft, runs_in(trial), sweep)
    _checkpoint(draft, trial, body)
    _tags(draft, top)
    if body is not top:
        _tags(draft, body)
    return draft.build()


def _gpus(draft: JobDraft, body: LineMap, trial: LineMap, compute: Any) -> bool:
    """GPUs from the instance type, else whether the compute or environment names a GPU."""
    resources = body.get("resources") or trial.get("resources")
    resources = resources if isinstance(resources, LineMap) else LineMap(body.line)
    nodes = as_number(resources.get("instance_count", 1))
    instance_type = text(resources.get("instance_type"))
    if instance_type is not None:
        line = resources.line_of("instance_type")
        if not gpu_instance(instance_type):
            return False
        draft.set("instance_type", instance_type, line)
        ask = instance_ask(instance_type, line)
        if ask is not None:
            draft.set("gpu.model", ask.model, line)
            if ask.count is not None and nodes is not None:
                draft.set("gpu.count", int(ask.count * nodes), line)
        return True
    environment = trial.get("environment") or body.get("environment")
    named = " ".join(str(v) for v in (compute, environment) if isinstance(v, str))
    if not _GPU_WORDS.search(named):
        return False
    where = body.line_of("compute") if "compute" in body else body.line
    draft.mark("gpu.model", where)
    draft.mark("gpu.count", where)
    draft.add_note(f"GPUs set by the compute {compute}" if compute else "GPUs set by the compute")
    return True


def _capacity(draft: JobDraft, body: LineMap, compute: Any) -> None:
    queue = body.get("queue_settings")
    tier = queue.get("job_tier") if isinstance(queue, LineMap) else None
    if isinstance(queue, LineMap) and "job_tier" in queue and text(tier):
        capacity = Capacity.SPOT if str(tier).lower() == "spot" else Capacity.ON_DEMAND
        draft.set("capacity", capacity, queue.line_of("job_tier"))
    else:  # the cluster's `tier` (or the serverless default, which is not documented) decides
        draft.unknown(
            "capacity", body.line_of("compute") if compute and "compute" in body else None
        )


def _checkpoint(draft: JobDraft, trial: LineMap, body: LineMap) -> None:
    outputs = body.get("outputs") or trial.get("outputs")
    if not isinstance(outputs, LineMap):
        return
    command = str(trial.get("command") or body.get("command") or "")
    flagged = {output: flag for flag, output in _OUTPUT_REF.findall(command)}
    for output, spec in outputs.items():
        flag = flagged.get(str(output))
        if says_checkpoint(str(output)):
            evidence = f"the output name {output}"
        elif flag is not None and says_checkpoint(flag):
            evidence = f"`--{flag}`"
        else:
            continue
        where = spec.get("path") if isinstance(spec, LineMap) else None
        uri = text(where) or f"azureml://outputs/{output}"  # the workspace datastore by default
        draft.set("checkpoint.uri", uri, outputs.line_of(output))
        draft.add_note(f"checkpoint location from {evidence}")
        return


def _tags(draft: JobDraft, data: LineMap) -> None:
    tags = data.get("tags")
    if isinstance(tags, dict):
        for key, value in tags.items():
            draft.tag(key, value)
