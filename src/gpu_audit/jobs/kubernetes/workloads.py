"""Kubernetes workload shapes as groups of identical pods: Jobs, Kubeflow, JobSet, KubeRay, LWS.

Every workload comes down to groups of identical pods (a role, a task, a worker group), each with
a replica count, a pod spec, the pod template's annotations and the template's line.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from gpu_audit.core.frozen import record
from gpu_audit.core.yamlsrc import LineMap
from gpu_audit.jobs.values import as_count, as_number


@record(frozen=False)
class Group:
    """Identical pods: `replicas` × one pod spec (or, for TrainJob, one resources block)."""

    role: str
    replicas: float | None
    pod: LineMap | None
    resources: list[LineMap] = field(default_factory=list)
    annotations: LineMap | None = None  # the pod template's
    line: int | None = None  # the pod template's (or the pod spec's) line


@record(frozen=False)
class Pods:
    """The GPU pod groups of a workload, its deadline and notes."""

    groups: list[Group] = field(default_factory=list)
    deadline: tuple[Any, int] | None = None
    notes: list[str] = field(default_factory=list)


def map_of(value: Any) -> LineMap | None:
    """`value` when it is a mapping with lines, else None."""
    return value if isinstance(value, LineMap) else None


def items(value: Any) -> list[Any]:
    """A list, or a single mapping written where a list was expected."""
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, LineMap) else []


def _replicas(holder: LineMap, key: str = "replicas", default: float = 1) -> float | None:
    if key not in holder:
        return default
    return as_count(holder[key], key, holder.line_of(key))


def _template(
    role: str, replicas: float | None, holder: LineMap | None, key: str = "template"
) -> Group:
    """The group of pods made from `<holder>.<key>`, a pod template (metadata and spec)."""
    template = map_of(holder.get(key)) if holder else None
    pod = map_of(template.get("spec")) if template else None
    metadata = map_of(template.get("metadata")) if template else None
    annotations = map_of(metadata.get("annotations")) if metadata else None
    line = holder.line_of(key) if holder is not None and template is not None else None
    return Group(role, replicas, pod, annotations=annotations, line=line)


def _job_groups(role: str, job_spec: LineMap | None, times: float | None) -> list[Group]:
    if job_spec is None:
        return []
    parallelism = _replicas(job_spec, "parallelism")
    replicas = None if parallelism is None or times is None else parallelism * times
    return [_template(role, replicas, job_spec)]


def workload(kind: str, api: str, spec: LineMap) -> Pods:
    """A workload's groups of identical pods (Pod, Job and CronJob, Deployment and StatefulSet,
    JobSet, Kubeflow Trainer and `*ReplicaSpecs` jobs, KServe, KubeRay, LWS, Volcano) and its
    deadline with its line."""
    work = Pods()
    if "activeDeadlineSeconds" in spec:
        work.deadline = (spec["activeDeadlineSeconds"], spec.line_of("activeDeadlineSeconds"))
    run_policy = map_of(spec.get("runPolicy"))
    if run_policy is not None and "activeDeadlineSeconds" in run_policy:
        value = run_policy["activeDeadlineSeconds"]
        work.deadline = (value, run_policy.line_of("activeDeadlineSeconds"))
    if kind == "Pod":
        work.groups.append(Group("pod", 1, spec, line=spec.line))
    elif kind == "LeaderWorkerSet":
        work.groups += _lws_groups(spec)
    elif kind == "Job" and api.startswith("batch.volcano.sh"):
        for task in items(spec.get("tasks")):
            if isinstance(task, LineMap):
                work.groups.append(_template(str(task.get("name")), _replicas(task), task))
    elif kind == "Job":
        work.groups += _job_groups("job", spec, 1)
    elif kind == "CronJob":
        template = map_of(spec.get("jobTemplate"))
        job_spec = map_of(template.get("spec")) if template else None
        if job_spec is not None and "activeDeadlineSeconds" in job_spec:
            value = job_spec["activeDeadlineSeconds"]
            work.deadline = (value, job_spec.line_of("activeDeadlineSeconds"))
        work.groups += _job_groups("job", job_spec, 1)
    elif kind in {"Deployment", "StatefulSet", "ReplicaSet"}:
        work.groups.append(_template(kind.lower(), _replicas(spec), spec))
    elif kind == "JobSet":
        work.groups += _jobset_groups(spec, None, None)
    elif kind in {"TrainingRuntime", "ClusterTrainingRuntime"}:
        policy = map_of(spec.get("mlPolicy"))
        nodes = _replicas(policy, "numNodes") if policy else 1
        template = map_of(spec.get("template"))
        jobset = map_of(template.get("spec")) if template else None
        work.groups += _jobset_groups(jobset, nodes, {"node", "trainer"}) if jobset else []
    elif kind == "TrainJob":
        trainer = map_of(spec.get("trainer"))
        if trainer is not None:
            per_node = map_of(trainer.get("resourcesPerNode"))
            nodes = _replicas(trainer, "numNodes")
            work.groups.append(Group("trainer", nodes, None, [per_node] if per_node else []))
    elif kind == "InferenceService" and api.startswith("serving.kserve.io"):
        work.groups += _kserve_groups(spec)
    elif kind in {"RayJob", "RayCluster", "RayService"}:
        key = {"RayJob": "rayClusterSpec", "RayService": "rayClusterConfig"}.get(kind)
        cluster = map_of(spec.get(key)) if key else spec
        work.groups += _ray_groups(cluster) if cluster else []
    else:
        for key, roles in spec.items():
            if str(key).endswith("ReplicaSpecs") and isinstance(roles, LineMap):
                for role, role_spec in roles.items():
                    if isinstance(role_spec, LineMap):
                        replicas = _replicas(role_spec)
                        work.groups.append(_template(str(role), replicas, role_spec))
        elastic = map_of(spec.get("elasticPolicy"))
        if elastic is not None and "maxReplicas" in elastic:
            work.notes.append(f"elastic up to {elastic['maxReplicas']} replicas")
    return work


def _jobset_groups(
    jobset: LineMap | None, nodes: float | None, trainer_names: set[str] | None
) -> list[Group]:
    groups: list[Group] = []
    for replicated in items(jobset.get("replicatedJobs") if jobset else None):
        if not isinstance(replicated, LineMap):
            continue
        name = str(replicated.get("name"))
        times = _replicas(replicated)
        template = map_of(replicated.get("template"))
        job_spec = map_of(template.get("spec")) if template else None
        if trainer_names and name in trainer_names and job_spec is not None:
            groups.append(_template(name, nodes, job_spec))  # numNodes sets the parallelism
        else:
            groups += _job_groups(name, job_spec, times)
    return groups


def _ray_groups(cluster: LineMap) -> list[Group]:
    groups: list[Group] = []
    head = map_of(cluster.get("headGroupSpec"))
    if head is not None:
        groups.append(_template("head", 1, head))
    for worker in items(cluster.get("workerGroupSpecs")):
        if not isinstance(worker, LineMap):
            continue
        if "maxReplicas" in worker and as_number(worker["maxReplicas"]) == 0:
            continue  # a worker group that may never start
        replicas = _replicas(worker)
        minimum = _replicas(worker, "minReplicas", 0)
        if replicas is not None and minimum is not None:
            replicas = max(replicas, minimum)
        hosts = _replicas(worker, "numOfHosts")
        if replicas is not None and hosts is not None:
            replicas *= hosts
        groups.append(_template(str(worker.get("groupName", "workers")), replicas, worker))
    return groups


def _kserve_groups(spec: LineMap) -> list[Group]:
    """KServe: each component (predictor, transformer, explainer) is a pod spec whose `model`
    (or containers) asks for the GPUs, at `minReplicas` (default 1) pods; the maximum is noted
    by the caller's note, never counted."""
    groups: list[Group] = []
    for role in ("predictor", "transformer", "explainer"):
        component = map_of(spec.get(role))
        if component is None:
            continue
        resources = []
        for value in component.values():  # `model:`, `pytorch:`, … hold the resources
            holder = map_of(value)
            found = map_of(holder.get("resources")) if holder is not None else None
            if found is not None:
                resources.append(found)
        least = _replicas(component, "minReplicas", 1)
        replicas = max(least, 1) if least is not None else None
        groups.append(Group(role, replicas, component, resources, line=spec.line_of(role)))
    return groups


def _lws_groups(spec: LineMap) -> list[Group]:
    """LeaderWorkerSet: `replicas` groups of `size` pods, one leader and `size - 1` workers."""
    replicas = _replicas(spec)
    template = map_of(spec.get("leaderWorkerTemplate"))
    if template is None:
        return []
    size = _replicas(template, "size")
    leader_key = "leaderTemplate" if "leaderTemplate" in template else "workerTemplate"
    workers = None if size is None or replicas is None else replicas * (size - 1)
    groups = [_template("leader", replicas, template, leader_key)]
    if workers:
        groups.append(_template("worker", workers, template, "workerTemplate"))
    return groups
