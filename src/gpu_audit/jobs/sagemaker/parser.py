"""SageMaker jobs: API request bodies, operator/ACK CRDs, CloudFormation, Step Functions, pipelines.

One Resource per body found: a CreateTrainingJob request, a CreateHyperParameterTuningJob
request (one per training definition), a pipeline `Training`/`Tuning` step, an endpoint
config's production variant (inference), a notebook instance, or the SageMaker Python SDK
`RemoteFunction` defaults. Bodies are found anywhere in the document (bare, in a CRD's `spec`,
in a CloudFormation resource, in a Step Functions state's `Parameters`, in a `DefinitionString`)
by a bounded walk; keys are matched case-insensitively, so camelCase CRDs read the same.

Defaults (the CreateTrainingJob documentation): no `EnableManagedSpotTraining` is on-demand;
no `MaxRuntimeInSeconds` is SageMaker's 1-day cap; no `TrainingJobEarlyStoppingType` is `Off`.
GPUs come from the catalog for the instance type, × `InstanceCount` (and summed over
`InstanceGroups`); a CPU instance type yields no Resource.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from gpu_audit.core.resource import Resource, Workload
from gpu_audit.core.yamlsrc import Document, LineMap, is_templated
from gpu_audit.jobs.aws_bodies import (
    Found,
    Refs,
    has,
    items,
    lookup,
    search,
)
from gpu_audit.jobs.evidence import Kind, infer, runs_in
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.sagemaker.bodies import (
    finish,
    set_data,
    set_region,
    set_resources,
    set_spot,
    set_stopping,
    set_tags,
)
from gpu_audit.jobs.sagemaker.markers import CRD_GROUPS, is_sdk_config
from gpu_audit.jobs.values import as_number, literal, seconds_to_hours

_CRD_KINDS = {"trainingjob", "hyperparametertuningjob", "endpointconfig", "notebookinstance"}


def _is_training(node: Any) -> bool:
    return has(node, "ResourceConfig") and has(
        node,
        "AlgorithmSpecification",
        "StoppingCondition",
        "OutputDataConfig",
        "TrainingJobName",
        "RoleArn",
        "InputDataConfig",
        "EnableManagedSpotTraining",
    )


def _is_tuning(node: Any) -> bool:
    return has(node, "HyperParameterTuningJobConfig") and has(
        node, "TrainingJobDefinition", "TrainingJobDefinitions"
    )


def _is_endpoint_config(node: Any) -> bool:
    variants, _ = lookup(node, "ProductionVariants")
    return any(has(v, "InstanceType") for v, _ in items(variants))


def _is_notebook(node: Any) -> bool:
    return node.get("Type") == "AWS::SageMaker::NotebookInstance" and isinstance(
        node.get("Properties"), dict
    )


def _matches(node: Any) -> bool:
    return _is_tuning(node) or _is_training(node) or _is_endpoint_config(node) or _is_notebook(node)


class SageMaker(JobFormat):
    name = "sagemaker"
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "set `EnableManagedSpotTraining: true` (with "
        "`StoppingCondition.MaxWaitTimeInSeconds` and a `CheckpointConfig`)",
        "limits.max_runtime_hours": "set `StoppingCondition.MaxRuntimeInSeconds`",
        "gpu.model": "choose a smaller GPU type in `ResourceConfig.InstanceType`",
        "hpo.max_trials": "set `ResourceLimits.MaxNumberOfTrainingJobs`",
        "hpo.early_stopping": "set `TrainingJobEarlyStoppingType: Auto`",
        "checkpoint.uri": "set `CheckpointConfig.S3Uri` (SageMaker syncs `/opt/ml/checkpoints` "
        "to it, and back after an interruption)",
        "tags.*": "add the keys to `Tags`",
        "estimate.ceiling_usd": "lower `StoppingCondition.MaxRuntimeInSeconds` (a tuning job: or "
        "`ResourceLimits.MaxNumberOfTrainingJobs`), or raise the `gpu-audit/budget-usd` tag",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        remote = _remote_function(document.data)
        found = _bodies(document, path)
        if remote is None and not found:
            return None
        resources: list[Resource] = []
        if remote is not None:
            resources.extend(_remote_resource(document, path, remote))
        for each in found:
            resources.extend(_parse_found(document, path, each))
        return resources


def _bodies(document: Document, path: str) -> list[Found]:
    data = document.data
    if not isinstance(data, dict):
        return []
    if "apiVersion" in data and "kind" in data:
        return _crd_bodies(data)
    if is_sdk_config(data):  # its TrainingJob section holds defaults, not a job
        return []
    return search(data, path, _matches)


def _crd_bodies(data: dict[Any, Any]) -> list[Found]:
    """A SageMaker operator or ACK custom resource; any other Kubernetes object is not ours."""
    group = str(data.get("apiVersion", "")).split("/", 1)[0]
    kind = str(data.get("kind", "")).lower()
    spec = data.get("spec")
    if group not in CRD_GROUPS or kind not in _CRD_KINDS or not isinstance(spec, LineMap):
        return []
    if kind == "notebookinstance":
        return [Found(spec, Refs(), data)] if has(spec, "InstanceType") else []
    return [Found(spec, Refs(), data)] if _matches(spec) else []


def _parse_found(document: Document, path: str, found: Found) -> list[Resource]:
    body = found.body
    if _is_crd(found.parent, "notebookinstance") or _is_notebook(body):
        return _notebook(document, path, found)
    if _is_tuning(body):
        return _tuning(document, path, found)
    if _is_training(body):
        resource = _training(document, path, found, body, name_key="TrainingJobName")
        return [resource] if resource is not None else []
    if _is_endpoint_config(body):
        return _endpoint_config(document, path, found)
    return []


def _is_crd(data: Any, kind: str) -> bool:
    return isinstance(data, dict) and "apiVersion" in data and str(data.get("kind")).lower() == kind


_STRUCTURAL = {
    "parameters",
    "arguments",
    "properties",
    "spec",
    "definition",
    "definitionstring",
    "fn::sub",
    "fn::tojsonstring",
    "pipelinedefinition",
    "pipelinedefinitionbody",
    "states",
    "steps",
    "ifsteps",
    "elsesteps",
    "resources",
    "branches",
    "iterator",
    "itemprocessor",
    "trainingjobdefinition",
    "trainingjobdefinitions",
}


def _name(found: Found, body: Any, key: str) -> str | None:
    """The job's own name, else the CRD's name, pipeline step name, state or logical id."""
    for candidate in (lookup(body, key)[0], _crd_name(found.parent), _step_name(found)):
        if literal(candidate):
            return str(candidate)
    for part in reversed(found.trail):  # a Step Functions state name or a CloudFormation logical id
        if isinstance(part, str) and part.lower() not in _STRUCTURAL:
            return part
    return None


def _crd_name(parent: Any) -> object:
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def _step_name(found: Found) -> object:
    parent = found.parent
    if isinstance(parent, dict) and parent.get("Arguments") is found.body:
        return parent.get("Name")
    return None


def _training(
    document: Document,
    path: str,
    found: Found,
    body: Any,
    name_key: str,
    tuning: Callable[[JobDraft], None] | None = None,
    parent: Any = None,
) -> Resource | None:
    refs = found.scoped()
    draft = JobDraft("sagemaker", path, document, name=_name(found, body, name_key))
    draft.anchor = draft.tags_anchor = found.line
    if tuning is not None:  # the tuning job's caps, checked against their bounds like any field
        tuning(draft)
    if not set_resources(draft, body, refs, count_key="InstanceCount"):
        return None
    set_spot(draft, body, refs)
    set_stopping(draft, body, refs)
    set_data(draft, body, refs)
    set_region(draft, body, found)
    if parent is not None:  # a tuning job's Tags tag every training job it starts
        set_tags(draft, parent)
    set_tags(draft, body)
    infer(draft, runs_in(body), Kind(Workload.TRAINING, "a SageMaker training job"))
    return finish(draft, refs)


def _tuning(document: Document, path: str, found: Found) -> list[Resource]:
    """One training Resource per definition, named for the tuning job and carrying its caps."""
    body, refs = found.body, found.scoped()
    config, _ = lookup(body, "HyperParameterTuningJobConfig")
    config = refs.resolve(config)
    limits, _ = lookup(config, "ResourceLimits")
    name = _name(found, body, "HyperParameterTuningJobName")

    def tuning(draft: JobDraft) -> None:
        if name is not None:
            draft.name = name
        trials, trials_line = lookup(limits, "MaxNumberOfTrainingJobs")
        raw_trials = refs.resolve(trials)
        draft.put("hpo.max_trials", as_number(raw_trials), trials_line, raw=raw_trials)
        stopping, stopping_line = lookup(config, "TrainingJobEarlyStoppingType")
        if stopping_line is None:
            draft.set("hpo.early_stopping", False)  # absent: `Off`, the documented default
        else:
            text = refs.resolve(stopping)
            if isinstance(text, str) and not is_templated(text):
                draft.set("hpo.early_stopping", text.lower() == "auto", stopping_line)
            else:
                draft.unknown("hpo.early_stopping", stopping_line)
        parallel, parallel_line = lookup(limits, "MaxParallelTrainingJobs")
        at_once = draft.count("MaxParallelTrainingJobs", refs.resolve(parallel), parallel_line)
        draft.put("hpo.parallel_trials", at_once, parallel_line, raw=refs.resolve(parallel))
        timeout, timeout_line = lookup(limits, "MaxRuntimeInSeconds")
        if timeout_line is not None:  # the tuning job's own wall clock, over every trial
            raw = refs.resolve(timeout)
            draft.put("hpo.timeout_hours", seconds_to_hours(raw), timeout_line, raw=raw)
        draft.add_note(
            "per training job of the tuning job"
            + (f"; up to {at_once} in parallel" if at_once is not None else "")
        )

    definitions = items(lookup(body, "TrainingJobDefinition")[0])
    definitions += items(lookup(body, "TrainingJobDefinitions")[0])
    resources: list[Resource] = []
    for definition, _ in definitions:
        resource = _training(
            document, path, found, definition, "DefinitionName", tuning, parent=body
        )
        if resource is not None:
            resources.append(resource)
    return resources


def _endpoint_config(document: Document, path: str, found: Found) -> list[Resource]:
    """One inference Resource per production variant that runs on instances (not serverless)."""
    body, refs = found.body, found.scoped()
    variants, _ = lookup(body, "ProductionVariants")
    base = _name(found, body, "EndpointConfigName")
    resources: list[Resource] = []
    for variant, _ in items(variants):
        if not has(variant, "InstanceType"):
            continue
        variant_name, _ = lookup(variant, "VariantName")
        name = "/".join(str(n) for n in (base, variant_name) if n and not is_templated(n)) or None
        draft = JobDraft("sagemaker", path, document, name=name)
        draft.anchor = draft.tags_anchor = found.line
        if not set_resources(draft, variant, refs, count_key="InitialInstanceCount"):
            continue
        infer(draft, [], Kind(Workload.INFERENCE, "a SageMaker endpoint variant"))
        set_tags(draft, body)
        resources.append(finish(draft, refs))
    return resources


def _notebook(document: Document, path: str, found: Found) -> list[Resource]:
    body = found.body.get("Properties") if _is_notebook(found.body) else found.body
    draft = JobDraft("sagemaker", path, document, name=_name(found, body, "NotebookInstanceName"))
    draft.anchor = draft.tags_anchor = found.line
    refs = found.scoped()
    if not set_resources(draft, body, refs, count_key="InstanceCount"):
        return []
    infer(draft, [], Kind(Workload.NOTEBOOK, "a SageMaker notebook instance"))
    set_tags(draft, body)
    return [finish(draft, refs)]


def _remote_function(data: Any) -> object:
    """The SageMaker Python SDK config's `SageMaker.PythonSDK.Modules.RemoteFunction` defaults."""
    if not is_sdk_config(data):
        return None
    node: Any = data
    for key in ("SageMaker", "PythonSDK", "Modules", "RemoteFunction"):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, LineMap) and has(node, "InstanceType") else None


def _remote_resource(document: Document, path: str, node: Any) -> list[Resource]:
    draft = JobDraft("sagemaker", path, document, name="RemoteFunction")
    draft.add_note("SageMaker Python SDK defaults for @remote; the decorator may override them")
    if not set_resources(draft, node, Refs(), count_key="InstanceCount"):
        return []
    set_tags(draft, node)
    infer(draft, runs_in(node))
    draft.put(
        "data.uris",
        [u for u in [lookup(node, "S3RootUri")[0]] if isinstance(u, str)] or None,
        lookup(node, "S3RootUri")[1],
    )
    return [finish(draft, Refs())]
