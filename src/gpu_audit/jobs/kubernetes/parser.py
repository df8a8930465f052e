"""Kubernetes GPU workloads: Jobs, Pods, Kubeflow, Katib, KubeRay, Volcano, JobSet, LWS.

GPUs are `nvidia.com/gpu` (and other device-plugin resources) limits, else requests, summed over
containers, times replicas (kube_workloads.py finds the groups of pods); a KAI/Run:ai
`gpu-fraction` annotation is a share of one GPU per pod. The GPU model, instance type and
capacity come from the node selectors, required node affinity and tolerations of the pods that
hold GPUs (kube_placement.py); capacity stays missing where they state none. A Katib Experiment
is the tuning job around its trial template.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from gpu_audit.catalog import instance_spec
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource, Workload
from gpu_audit.core.sharing import (
    COMPUTE_SLICES,
    HAMI,
    HAMI_PERCENT,
    MIG,
    mig_profile,
    profile_slices,
)
from gpu_audit.core.yamlsrc import Document, LineMap, is_templated
from gpu_audit.jobs.evidence import Kind, infer, runs_in
from gpu_audit.jobs.gpus import ray_accelerator_type
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.kubernetes.checkpoint import checkpoint_evidence, named_training
from gpu_audit.jobs.kubernetes.placement import placement
from gpu_audit.jobs.kubernetes.workloads import Group, Pods, items, map_of, workload
from gpu_audit.jobs.values import as_bool, as_number, seconds_to_hours

_GPU_RESOURCES = (
    "nvidia.com/gpu",
    "amd.com/gpu",
    "google.com/tpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neurondevice",
    "habana.ai/gaudi",
)
_INFERENCE_KINDS = {
    "Deployment",
    "StatefulSet",
    "ReplicaSet",
    "RayService",
    "LeaderWorkerSet",
    "InferenceService",
}
# Training operators: the kind is the evidence unless what the pods run says otherwise (an
# MPIJob that runs NCCL tests is a benchmark).
_TRAINING_KINDS = {
    "PyTorchJob",
    "TFJob",
    "MPIJob",
    "XGBoostJob",
    "PaddleJob",
    "JAXJob",
    "MXJob",
    "TrainJob",
    "TrainingRuntime",
    "ClusterTrainingRuntime",
}
# KAI Scheduler (and Run:ai before it) share a GPU through a pod annotation: `gpu-fraction: "0.5"`.
_FRACTION_ANNOTATIONS = ("gpu-fraction", "run.ai/gpu-fraction")
_DEADLINE_ANNOTATION = "provreq.kueue.x-k8s.io/maxRunDurationSeconds"


class Kubernetes(JobFormat):
    name: ClassVar[str] = "kubernetes"
    hints: ClassVar[dict[str, str]] = {
        "capacity": "state it in the GPU pod template: a `karpenter.sh/capacity-type` nodeSelector "
        "(or `cloud.google.com/gke-spot`, `eks.amazonaws.com/capacityType`, "
        "`kubernetes.azure.com/scalesetpriority`), or a toleration of the spot nodes' taint",
        "limits.max_runtime_hours": "set `activeDeadlineSeconds` on the job (or its `runPolicy`)",
        "gpu.model": "name the GPU model with a `nvidia.com/gpu.product` or "
        "`node.kubernetes.io/instance-type` nodeSelector (or node affinity) in the pod template",
    }
    fixes: ClassVar[dict[str, str]] = {
        "capacity": "select spot nodes in the pod template: nodeSelector "
        '`karpenter.sh/capacity-type: spot` (GKE `cloud.google.com/gke-spot: "true"`, EKS '
        "`eks.amazonaws.com/capacityType: SPOT`)",
        "limits.max_runtime_hours": "set `activeDeadlineSeconds` on the Job (or its `runPolicy`)",
        "gpu.model": "select a smaller GPU with the `nvidia.com/gpu.product` or "
        "`node.kubernetes.io/instance-type` nodeSelector",
        # a GKE manifest's nodes carry GKE's labels, an EKS/Karpenter one's AWS's
        "capacity@gce": "select spot nodes with the nodeSelector "
        '`cloud.google.com/gke-spot: "true"`',
        "gpu.model@gce": "select a smaller GPU with the `cloud.google.com/gke-accelerator` "
        "nodeSelector (e.g. `nvidia-l4`, `nvidia-tesla-a100`)",
        "gpu.model@ec2": "select a smaller GPU with the `karpenter.k8s.aws/instance-gpu-name` or "
        "`node.kubernetes.io/instance-type` nodeSelector",
        "checkpoint.uri": "pass the container a bucket to checkpoint to and resume from "
        "(`--checkpoint-dir s3://…` in `args`, or a `CHECKPOINT_DIR` env var)",
        "hpo.max_trials": "set `maxTrialCount` on the Katib Experiment",
        "hpo.early_stopping": "set `earlyStopping` on the Katib Experiment",
        "tags.*": "add the keys to `metadata.labels`",
        "estimate.ceiling_usd": "lower `activeDeadlineSeconds` (a Katib Experiment: or "
        "`maxTrialCount`), or raise the `gpu-audit/budget-usd` label",
    }

    def parse(self, document: Document, path: str) -> list[Resource] | None:
        data = document.data
        if not isinstance(data, LineMap):
            return None
        kind, api = data.get("kind"), data.get("apiVersion")
        if not isinstance(kind, str) or not isinstance(api, str):
            return None
        spec = data.get("spec")
        if not isinstance(spec, LineMap):
            return []
        metadata = map_of(data.get("metadata")) or LineMap(document.line)
        experiment = kind == "Experiment" and api.startswith("kubeflow.org/")
        work = _trial(spec) if experiment else workload(kind, api, spec)
        if kind == "Pod" and work.groups:
            work.groups[0].annotations = map_of(metadata.get("annotations"))
        requests = [(g, _pod_gpus(g)) for g in work.groups]
        gpu_groups = [(g, gpus) for g, gpus in requests if gpus is not None]
        if not gpu_groups:
            return []
        name = metadata.get("name") or metadata.get("generateName")
        draft = JobDraft(self.name, path, document, name=None if name is None else str(name))
        draft.anchor = gpu_groups[0][0].line
        _count(draft, gpu_groups)
        placement(draft, [(g.pod, g.line or data.line_of("spec")) for g, _ in gpu_groups])
        _fits_machine(draft, gpu_groups)
        per_pod = _deadline(draft, work, metadata)
        _release(draft, kind, spec)
        _serve_accelerator(draft, spec)
        if experiment:
            _experiment(draft, spec)
            _attempts(draft, spec, per_pod)
        labels = metadata.get("labels")
        if isinstance(labels, dict):
            for key, value in labels.items():
                draft.tag(key, value)
        _buckets(draft, [g for g, _ in gpu_groups])
        checkpoint_evidence(draft, [g for g, _ in gpu_groups])
        said = _kind(kind, experiment, data.line_of("kind"))
        named = None if said else named_training(name, [g for g, _ in gpu_groups])
        if named is not None:  # what it runs decides first; its names and writes, after
            said = Kind(Workload.TRAINING, f"a {kind} ({named[0]})", named[1])
        infer(draft, runs_in(spec), said)
        for note in work.notes:
            draft.add_note(note)
        return [draft.build()]


def _fits_machine(draft: JobDraft, groups: list[tuple[Group, _GpuRequest]]) -> None:
    """A pod runs on one node: one asking more GPUs than the selected machine type has is never
    scheduled there, and is not priced as several of them (`8 GPUs` on a 2-GPU type is no
    4 nodes); the type is left unknown (its line kept) and the job says why."""
    itype = draft.get("instance_type")
    spec = instance_spec(itype) if isinstance(itype, str) else None
    if spec is None or not spec.gpu_count:
        return
    asked = max((r.count for _, r in groups if r.count is not None and r.mode is None), default=0)
    if asked <= spec.gpu_count:
        return
    draft.unknown("instance_type", draft.lines.get("instance_type"))
    draft.add_note(
        f"a pod asks for {asked:g} GPUs and {spec.instance_type} has {spec.gpu_count}: no pod "
        f"fits that machine type (priced on one that holds {asked:g}, if any, never as "
        "several of it)"
    )


def _kind(kind: str, experiment: bool, line: int | None) -> Kind | None:
    """What the kind says: a server, a training operator, or nothing (a Job, Pod, JobSet)."""
    if kind in _INFERENCE_KINDS:
        return Kind(Workload.INFERENCE, f"a {kind}", line)
    if experiment:
        return Kind(Workload.TRAINING, "a Katib Experiment (tuning)", line)
    if kind in _TRAINING_KINDS:
        return Kind(Workload.TRAINING, f"a Kubeflow {kind}", line)
    return None


def _serve_accelerator(draft: JobDraft, spec: LineMap) -> None:
    """A RayService's Serve config names its GPU (`accelerator_type: "H100"` in
    `ray_actor_options`) where the pod templates' node selectors do not."""
    config = spec.get("serveConfigV2")
    if draft.get("gpu.model") is not None or not isinstance(config, str):
        return
    model = ray_accelerator_type(config)
    if model is not None:
        draft.set("gpu.model", model, spec.line_of("serveConfigV2"))
        draft.add_note(f"GPU {model} from the Serve config's accelerator_type")


def _trial(spec: LineMap) -> Pods:
    """A Katib Experiment's trial: the Job, PyTorchJob or TFJob of `trialTemplate.trialSpec`."""
    template = map_of(spec.get("trialTemplate"))
    trial = map_of(template.get("trialSpec")) if template else None
    trial_spec = map_of(trial.get("spec")) if trial else None
    if trial is None or trial_spec is None:
        return Pods()
    return workload(str(trial.get("kind", "")), str(trial.get("apiVersion", "")), trial_spec)


def _experiment(draft: JobDraft, spec: LineMap) -> None:
    """Katib: trials are capped by `maxTrialCount`; stopped early only with `earlyStopping`."""
    if "maxTrialCount" in spec:
        draft.put(  # the draft refuses an impossible count at its line
            "hpo.max_trials",
            as_number(spec["maxTrialCount"]),
            spec.line_of("maxTrialCount"),
            raw=spec["maxTrialCount"],
        )
    early = map_of(spec.get("earlyStopping"))
    if early is not None and early.get("algorithmName"):
        draft.set("hpo.early_stopping", True, spec.line_of("earlyStopping"))
    else:  # Katib's default: no early stopping, every trial runs to the end
        draft.set("hpo.early_stopping", False)
        draft.mark("hpo.early_stopping", spec.line)
    line = spec.line_of("parallelTrialCount")
    parallel = draft.count("parallelTrialCount", spec.get("parallelTrialCount"), line)
    draft.put("hpo.parallel_trials", parallel, line, raw=spec.get("parallelTrialCount"))
    draft.add_note(
        "GPUs per trial" + (f"; up to {parallel} trials in parallel" if parallel else "")
    )


@record(frozen=False)
class _GpuRequest:
    """A container's GPU request, with its line."""

    count: float | None  # per pod; None when templated
    line: int
    share: float | None = None  # a fraction of one GPU (KAI/Run:ai), noted
    mode: str | None = None  # `mig` or `hami`: a share the job's price follows
    profile: str | None = None  # the MIG profile
    units: float | None = None  # shares per pod: compute slices (MIG), percent (HAMi)
    per_gpu: int | None = None


def _pod_gpus(group: Group) -> _GpuRequest | None:
    """GPUs per pod of a group, or None if its pods request no accelerator."""
    holders = list(group.resources)
    if group.pod is not None:
        for container in items(group.pod.get("containers")):
            resources = map_of(container.get("resources")) if isinstance(container, dict) else None
            if resources is not None:
                holders.append(resources)
    total: float | None = 0
    line = None
    found_all = []
    for holder in holders:
        found = _container_gpus(holder)
        if found is None:
            continue
        found_all.append(found)
        line = line or found.line
        total = None if total is None or found.count is None else total + found.count
    if line is None or total == 0:
        return _fraction(group)
    first = found_all[0]
    if first.mode is None or any(
        (f.mode, f.per_gpu) != (first.mode, first.per_gpu) for f in found_all
    ):
        return _GpuRequest(total, line)  # whole GPUs, or shares of two kinds: priced whole
    units = sum(f.units or 0 for f in found_all)
    profiles = ", ".join(dict.fromkeys(f.profile for f in found_all if f.profile)) or None
    return replace(first, count=total, line=line, units=units, profile=profiles)


def _fraction(group: Group) -> _GpuRequest | None:
    """A KAI/Run:ai GPU share: the pod holds (part of) one GPU."""
    annotations = group.annotations
    for key in _FRACTION_ANNOTATIONS:
        if annotations is not None and key in annotations:
            share = as_number(annotations[key])
            if share is not None and share <= 0:
                return None
            return _GpuRequest(None if share is None else 1, annotations.line_of(key), share)
    return None


def _container_gpus(resources: LineMap) -> _GpuRequest | None:
    for section in ("limits", "requests"):
        block = map_of(resources.get(section))
        if block is None:
            continue
        for key in block:
            profile = mig_profile(str(key))
            count = as_number(block[key]) if profile else 0
            if profile and count != 0:  # `nvidia.com/mig-1g.10gb: 1` (MIG mixed strategy)
                units = None if count is None else profile_slices(profile) * count  # templated
                line = block.line_of(key)
                return _GpuRequest(count, line, None, MIG, profile, units, COMPUTE_SLICES)
        for key in _GPU_RESOURCES:
            if key in block:
                return _hami(block, _GpuRequest(as_number(block[key]), block.line_of(key)))
    return None


def _hami(block: LineMap, request: _GpuRequest) -> _GpuRequest:
    """HAMi's `nvidia.com/gpumem-percentage` beside `nvidia.com/gpu`: that percent of each
    GPU's memory (`nvidia.com/gpumem` in MiB needs the GPU's memory: noted, not priced)."""
    percent = as_number(block.get(HAMI_PERCENT)) if HAMI_PERCENT in block else None
    if percent is None or request.count is None or not 0 < percent < 100:
        return request
    units = request.count * percent
    return replace(request, mode=HAMI, units=units, per_gpu=100)


def _count(draft: JobDraft, groups: list[tuple[Group, _GpuRequest]]) -> None:
    total: float | None = 0
    for group, request in groups:
        if request.share is not None:
            draft.add_note(f"{group.role} pods share a GPU (gpu-fraction {request.share:g})")
        if total is None or group.replicas is None or request.count is None:
            total = None
        else:
            total += group.replicas * request.count
    count = None if total is None else int(total) if float(total).is_integer() else total
    draft.set("gpu.count", count, groups[0][1].line)
    _shares(draft, groups)


def _shares(draft: JobDraft, groups: list[tuple[Group, _GpuRequest]]) -> None:
    """MIG slices or HAMi fractions the job's pods hold: priced at their share of a GPU
    (docs/shared-gpus.md); only when every GPU group asks for the same kind of share."""
    modes = {(r.mode, r.per_gpu) for _, r in groups}
    if len(modes) != 1 or groups[0][1].mode is None:
        return
    units: float = 0
    for group, request in groups:
        if group.replicas is None or request.units is None:
            return
        units += group.replicas * request.units
    first = groups[0][1]
    profiles = ", ".join(dict.fromkeys(r.profile for _, r in groups if r.profile))
    draft.set("share.mode", first.mode, first.line)
    if profiles:
        draft.set("share.profile", profiles, first.line)
    draft.set("share.per_gpu", first.per_gpu, first.line)
    draft.set("share.units", int(units) if float(units).is_integer() else units, first.line)
    draft.set("share.gpus", round(units / (first.per_gpu or 1), 4), first.line)


def _deadline(draft: JobDraft, work: Pods, metadata: LineMap) -> bool:
    """The runtime cap; True when it is a pod's `activeDeadlineSeconds`, which each retried
    pod gets afresh (a Job's or `runPolicy`'s covers every attempt)."""
    per_pod = False
    deadline = work.deadline
    annotations = map_of(metadata.get("annotations"))
    if deadline is None and annotations is not None and _DEADLINE_ANNOTATION in annotations:
        deadline = (annotations[_DEADLINE_ANNOTATION], annotations.line_of(_DEADLINE_ANNOTATION))
    if deadline is None:
        for group in work.groups:
            if group.pod is not None and "activeDeadlineSeconds" in group.pod:
                pod = group.pod
                deadline = (pod["activeDeadlineSeconds"], pod.line_of("activeDeadlineSeconds"))
                per_pod = True
                break
    if deadline is not None:
        hours = seconds_to_hours(deadline[0])
        draft.set("limits.max_runtime_hours", hours, deadline[1], raw=deadline[0])
    return per_pod


_JOB_BACKOFF_DEFAULT = 6  # Kubernetes Job `backoffLimit` when unset (batch/v1 reference)


def _attempts(draft: JobDraft, spec: LineMap, per_pod: bool) -> None:
    """A Katib trial whose deadline is the pod's: each retry of the trial's Job runs to a fresh
    deadline, so a trial may bill 1 + `backoffLimit` times its cap."""
    template = map_of(spec.get("trialTemplate"))
    trial = map_of(template.get("trialSpec")) if template else None
    trial_spec = map_of(trial.get("spec")) if trial else None
    if not per_pod or trial is None or trial_spec is None:
        return
    holders = [trial_spec, map_of(trial_spec.get("runPolicy"))]
    holder = next((h for h in holders if h is not None and "backoffLimit" in h), None)
    if holder is not None:
        retries = as_number(holder["backoffLimit"])
        line = holder.line_of("backoffLimit")
        if retries is None:  # templated: the attempts are not known
            draft.put("hpo.attempts", None, line, raw=holder["backoffLimit"])
            return
        draft.set("hpo.attempts", int(retries) + 1, line)
    elif trial.get("kind") == "Job":
        draft.set("hpo.attempts", _JOB_BACKOFF_DEFAULT + 1)
        draft.add_note("trial Job's backoffLimit unset: Kubernetes' default of 6 retries")


# Kinds whose pods end with the work (their GPUs go back to the cluster); an MPIJob only when its
# `cleanPodPolicy` removes the workers, which otherwise wait on after the launcher finishes.
_ENDS = frozenset(
    {
        "Job",
        "CronJob",
        "JobSet",
        "TrainJob",
        "PyTorchJob",
        "TFJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
        "MXJob",
        "Experiment",
        "RayJob",
    }
)


def _release(draft: JobDraft, kind: str, spec: LineMap) -> None:
    """Whether the GPUs are released when the work ends, and how often a failed run is retried."""
    run_policy = map_of(spec.get("runPolicy"))
    ends = kind in _ENDS
    if kind == "RayJob":
        ends = as_bool(spec.get("shutdownAfterJobFinishes")) is True
    if kind == "MPIJob":
        policy = run_policy.get("cleanPodPolicy") if run_policy else spec.get("cleanPodPolicy")
        ends = str(policy) in ("Running", "All")
    if ends:
        draft.set("limits.release_hours", 0.0, draft.anchor)
    for holder in (spec, run_policy):
        if holder is not None and "backoffLimit" in holder:
            raw = holder["backoffLimit"]
            retries = as_number(raw)
            draft.set(
                "limits.max_retries",
                None if retries is None else int(retries),
                holder.line_of("backoffLimit"),
                raw=raw,
            )


_CSI_SCHEMES = {"gcsfuse.csi.storage.gke.io": "gs", "s3.csi.aws.com": "s3"}


def _buckets(draft: JobDraft, groups: list[Group]) -> None:
    uris: list[str] = []
    line = None
    for group in groups:
        for volume in items(group.pod.get("volumes") if group.pod else None):
            csi = map_of(volume.get("csi")) if isinstance(volume, dict) else None
            scheme = _CSI_SCHEMES.get(str(csi.get("driver"))) if csi else None
            attributes = map_of(csi.get("volumeAttributes")) if csi else None
            bucket = attributes.get("bucketName") if attributes else None
            if attributes is None or not scheme or not isinstance(bucket, str):
                continue
            if not is_templated(bucket) and not bucket.startswith("$"):
                uris.append(f"{scheme}://{bucket}")
                line = line or attributes.line_of("bucketName")
    if uris:
        draft.set("data.uris", tuple(dict.fromkeys(uris)), line)
