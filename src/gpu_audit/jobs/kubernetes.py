"""Kubernetes workloads that request GPUs: batch Jobs, Pods, Kubeflow, KubeRay, Volcano, JobSet.

Every workload comes down to groups of identical pods (a role, a task, a worker group), each with
a replica count and a pod spec. GPUs are `nvidia.com/gpu` (and other device-plugin resources)
limits, else requests, summed over containers, times replicas. The GPU model, instance type and
spot capacity come from the node selectors, required node affinity and tolerations of the pods
that hold GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from gpu_audit.jobs.gpus import GpuAsk, alternatives_note, instance_ask, largest
from gpu_audit.jobs.interface import JobDraft, JobFormat
from gpu_audit.jobs.values import as_number, seconds_to_hours
from gpu_audit.model import Capacity, Resource, Workload
from gpu_audit.yamlsrc import Document, LineMap, is_templated

_GPU_RESOURCES = (
    "nvidia.com/gpu",
    "amd.com/gpu",
    "google.com/tpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neurondevice",
    "habana.ai/gaudi",
)
_MODEL_LABELS = (
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-tpu-accelerator",
    "nvidia.com/gpu.product",
    "karpenter.k8s.aws/instance-gpu-name",
    "eks.amazonaws.com/instance-gpu-name",
)
_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
# label → the values that mean spot, and those that mean on-demand
_CAPACITY_LABELS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "cloud.google.com/gke-spot": (frozenset({"true"}), frozenset({"false"})),
    "cloud.google.com/gke-preemptible": (frozenset({"true"}), frozenset({"false"})),
    "karpenter.sh/capacity-type": (frozenset({"spot"}), frozenset({"on-demand"})),
    "eks.amazonaws.com/capacitytype": (frozenset({"spot"}), frozenset({"on_demand"})),
    "kubernetes.azure.com/scalesetpriority": (frozenset({"spot"}), frozenset({"regular"})),
}
_INFERENCE_KINDS = {"Deployment", "StatefulSet", "ReplicaSet", "RayService"}
_DEADLINE_ANNOTATION = "provreq.kueue.x-k8s.io/maxRunDurationSeconds"


@dataclass
class _Group:
    """Identical pods: `replicas` × one pod spec (or, for TrainJob, one resources block)."""

    role: str
    replicas: float | None
    pod: LineMap | None
    resources: list[LineMap] = field(default_factory=list)


@dataclass
class _Workload:
    groups: list[_Group] = field(default_factory=list)
    deadline: tuple[Any, int] | None = None
    notes: list[str] = field(default_factory=list)


class Kubernetes(JobFormat):
    name: ClassVar[str] = "kubernetes"

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
        work = _workload(kind, api, spec)
        requests = [(g, _pod_gpus(g)) for g in work.groups]
        gpu_groups = [(g, gpus) for g, gpus in requests if gpus is not None]
        if not gpu_groups:
            return []
        metadata = _map(data.get("metadata")) or LineMap(document.line)
        name = metadata.get("name") or metadata.get("generateName")
        draft = JobDraft(self.name, path, document, name=None if name is None else str(name))
        _count(draft, gpu_groups)
        _placement(draft, [g for g, _ in gpu_groups])
        _deadline(draft, work, metadata)
        if kind in _INFERENCE_KINDS:
            draft.set("workload", Workload.INFERENCE, data.line_of("kind"))
        labels = metadata.get("labels")
        if isinstance(labels, dict):
            for key, value in labels.items():
                draft.tag(key, value)
        _buckets(draft, [g for g, _ in gpu_groups])
        for note in work.notes:
            draft.add_note(note)
        return [draft.build()]


def _map(value: Any) -> LineMap | None:
    return value if isinstance(value, LineMap) else None


def _items(value: Any) -> list[Any]:
    """A list, or a single mapping written where a list was expected."""
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, LineMap) else []


def _replicas(holder: LineMap, key: str = "replicas", default: float = 1) -> float | None:
    if key not in holder:
        return default
    return as_number(holder[key])


def _pod_of(template_holder: LineMap | None) -> LineMap | None:
    """`<x>.template.spec`: the pod spec of a pod template."""
    template = _map(template_holder.get("template")) if template_holder else None
    return _map(template.get("spec")) if template else None


def _job_groups(role: str, job_spec: LineMap | None, times: float | None) -> list[_Group]:
    if job_spec is None:
        return []
    parallelism = _replicas(job_spec, "parallelism")
    replicas = None if parallelism is None or times is None else parallelism * times
    return [_Group(role, replicas, _pod_of(job_spec))]


def _workload(kind: str, api: str, spec: LineMap) -> _Workload:
    work = _Workload()
    if "activeDeadlineSeconds" in spec:
        work.deadline = (spec["activeDeadlineSeconds"], spec.line_of("activeDeadlineSeconds"))
    run_policy = _map(spec.get("runPolicy"))
    if run_policy is not None and "activeDeadlineSeconds" in run_policy:
        value = run_policy["activeDeadlineSeconds"]
        work.deadline = (value, run_policy.line_of("activeDeadlineSeconds"))
    if kind == "Pod":
        work.groups.append(_Group("pod", 1, spec))
    elif kind == "Job" and api.startswith("batch.volcano.sh"):
        for task in _items(spec.get("tasks")):
            if isinstance(task, LineMap):
                work.groups.append(_Group(str(task.get("name")), _replicas(task), _pod_of(task)))
    elif kind == "Job":
        work.groups += _job_groups("job", spec, 1)
    elif kind == "CronJob":
        template = _map(spec.get("jobTemplate"))
        job_spec = _map(template.get("spec")) if template else None
        if job_spec is not None and "activeDeadlineSeconds" in job_spec:
            value = job_spec["activeDeadlineSeconds"]
            work.deadline = (value, job_spec.line_of("activeDeadlineSeconds"))
        work.groups += _job_groups("job", job_spec, 1)
    elif kind in {"Deployment", "StatefulSet", "ReplicaSet"}:
        work.groups.append(_Group(kind.lower(), _replicas(spec), _pod_of(spec)))
    elif kind == "JobSet":
        work.groups += _jobset_groups(spec, None, None)
    elif kind in {"TrainingRuntime", "ClusterTrainingRuntime"}:
        policy = _map(spec.get("mlPolicy"))
        nodes = _replicas(policy, "numNodes") if policy else 1
        template = _map(spec.get("template"))
        jobset = _map(template.get("spec")) if template else None
        work.groups += _jobset_groups(jobset, nodes, {"node", "trainer"}) if jobset else []
    elif kind == "TrainJob":
        trainer = _map(spec.get("trainer"))
        if trainer is not None:
            per_node = _map(trainer.get("resourcesPerNode"))
            nodes = _replicas(trainer, "numNodes")
            work.groups.append(_Group("trainer", nodes, None, [per_node] if per_node else []))
    elif kind in {"RayJob", "RayCluster", "RayService"}:
        key = {"RayJob": "rayClusterSpec", "RayService": "rayClusterConfig"}.get(kind)
        cluster = _map(spec.get(key)) if key else spec
        work.groups += _ray_groups(cluster) if cluster else []
    else:
        for key, roles in spec.items():
            if str(key).endswith("ReplicaSpecs") and isinstance(roles, LineMap):
                for role, role_spec in roles.items():
                    if isinstance(role_spec, LineMap):
                        pod = _pod_of(role_spec)
                        work.groups.append(_Group(str(role), _replicas(role_spec), pod))
        elastic = _map(spec.get("elasticPolicy"))
        if elastic is not None and "maxReplicas" in elastic:
            work.notes.append(f"elastic up to {elastic['maxReplicas']} replicas")
    return work


def _jobset_groups(
    jobset: LineMap | None, nodes: float | None, trainer_names: set[str] | None
) -> list[_Group]:
    groups: list[_Group] = []
    for replicated in _items(jobset.get("replicatedJobs") if jobset else None):
        if not isinstance(replicated, LineMap):
            continue
        name = str(replicated.get("name"))
        times = _replicas(replicated)
        template = _map(replicated.get("template"))
        job_spec = _map(template.get("spec")) if template else None
        if trainer_names and name in trainer_names and job_spec is not None:
            groups.append(_Group(name, nodes, _pod_of(job_spec)))  # numNodes sets the parallelism
        else:
            groups += _job_groups(name, job_spec, times)
    return groups


def _ray_groups(cluster: LineMap) -> list[_Group]:
    groups: list[_Group] = []
    head = _map(cluster.get("headGroupSpec"))
    if head is not None:
        groups.append(_Group("head", 1, _pod_of(head)))
    for worker in _items(cluster.get("workerGroupSpecs")):
        if not isinstance(worker, LineMap):
            continue
        replicas = _replicas(worker)
        minimum = _replicas(worker, "minReplicas", 0)
        if replicas is not None and minimum is not None:
            replicas = max(replicas, minimum)
        hosts = _replicas(worker, "numOfHosts")
        if replicas is not None and hosts is not None:
            replicas *= hosts
        groups.append(_Group(str(worker.get("groupName", "workers")), replicas, _pod_of(worker)))
    return groups


@dataclass
class _GpuRequest:
    count: float | None  # per pod; None when templated
    line: int


def _pod_gpus(group: _Group) -> _GpuRequest | None:
    """GPUs per pod of a group, or None if its pods request no accelerator."""
    holders = list(group.resources)
    if group.pod is not None:
        for container in _items(group.pod.get("containers")):
            resources = _map(container.get("resources")) if isinstance(container, dict) else None
            if resources is not None:
                holders.append(resources)
    total: float | None = 0
    line = None
    for holder in holders:
        found = _container_gpus(holder)
        if found is None:
            continue
        line = line or found.line
        total = None if total is None or found.count is None else total + found.count
    if line is None:
        return None
    if total == 0:
        return None
    return _GpuRequest(total, line)


def _container_gpus(resources: LineMap) -> _GpuRequest | None:
    for section in ("limits", "requests"):
        block = _map(resources.get(section))
        if block is None:
            continue
        for key in _GPU_RESOURCES:
            if key in block:
                return _GpuRequest(as_number(block[key]), block.line_of(key))
    return None


def _count(draft: JobDraft, groups: list[tuple[_Group, _GpuRequest]]) -> None:
    total: float | None = 0
    for group, request in groups:
        if total is None or group.replicas is None or request.count is None:
            total = None
        else:
            total += group.replicas * request.count
    count = None if total is None else int(total) if float(total).is_integer() else total
    draft.set("gpu.count", count, groups[0][1].line)


@dataclass
class _Constraint:
    key: str
    values: list[Any]
    line: int


def _constraints(pod: LineMap) -> list[_Constraint]:
    """Node selector labels and required node-affinity `In` expressions of a pod."""
    found: list[_Constraint] = []
    selector = _map(pod.get("nodeSelector"))
    if selector is not None:
        for key, value in selector.items():
            found.append(_Constraint(str(key).lower(), [value], selector.line_of(key)))
    affinity = _map(pod.get("affinity"))
    node = _map(affinity.get("nodeAffinity")) if affinity else None
    required = _map(node.get("requiredDuringSchedulingIgnoredDuringExecution")) if node else None
    for term in _items(required.get("nodeSelectorTerms") if required else None):
        for expression in _items(term.get("matchExpressions") if isinstance(term, dict) else None):
            if isinstance(expression, LineMap) and expression.get("operator") == "In":
                values = expression.get("values")
                values = list(values) if isinstance(values, list) else [values]
                key = str(expression.get("key", "")).lower()
                found.append(_Constraint(key, values, expression.line_of("values")))
    return found


def _tolerated_spot(pod: LineMap) -> int | None:
    """The line of a toleration that lets the pod onto spot nodes, if any."""
    for toleration in _items(pod.get("tolerations")):
        if not isinstance(toleration, LineMap):
            continue
        key = str(toleration.get("key", "")).lower()
        if key not in _CAPACITY_LABELS:
            continue
        spot_values, _ = _CAPACITY_LABELS[key]
        value = str(toleration.get("value", "")).lower()
        if toleration.get("operator") == "Exists" or value in spot_values:
            return toleration.line_of("key")
    return None


def _placement(draft: JobDraft, groups: list[_Group]) -> None:
    asks: list[GpuAsk] = []
    capacities: list[tuple[Capacity, int | None]] = []
    for group in groups:
        pod = group.pod
        constraints = _constraints(pod) if pod is not None else []
        capacity: tuple[Capacity, int | None] | None = None
        for constraint in constraints:
            values = [v for v in constraint.values if v is not None]
            if constraint.key in (label.lower() for label in _MODEL_LABELS):
                for value in values:
                    asks.append(GpuAsk(str(value), None, constraint.line, str(value)))
            elif constraint.key in _TYPE_LABELS:
                for value in values:
                    ask = instance_ask(str(value), constraint.line)
                    asks += [ask] if ask else []
                if values and draft.get("instance_type") is None:
                    draft.set("instance_type", str(values[0]), constraint.line)
            elif constraint.key in _CAPACITY_LABELS:
                capacity = _capacity_of(constraint, values) or capacity
        if capacity is None and pod is not None:
            line = _tolerated_spot(pod)
            capacity = (Capacity.SPOT, line) if line is not None else None
        capacities.append(capacity or (Capacity.ON_DEMAND, None))
    chosen = largest(asks)
    if chosen is not None:
        draft.set("gpu.model", chosen.model, chosen.line)
        draft.add_note(alternatives_note(asks, chosen))
    if all(capacity is Capacity.SPOT for capacity, _ in capacities):
        draft.set("capacity", Capacity.SPOT, capacities[0][1])
    else:
        worst = next(c for c in capacities if c[0] is not Capacity.SPOT)
        draft.set("capacity", worst[0], worst[1])


def _capacity_of(constraint: _Constraint, values: list[Any]) -> tuple[Capacity, int] | None:
    spot_values, demand_values = _CAPACITY_LABELS[constraint.key]
    if any(is_templated(v) for v in values):
        return Capacity.UNKNOWN, constraint.line
    texts = {str(v).lower() for v in values}
    if texts and texts <= spot_values:
        return Capacity.SPOT, constraint.line
    if texts & demand_values or (texts and not texts <= spot_values):
        return Capacity.ON_DEMAND, constraint.line
    return None


def _deadline(draft: JobDraft, work: _Workload, metadata: LineMap) -> None:
    deadline = work.deadline
    annotations = _map(metadata.get("annotations"))
    if deadline is None and annotations is not None and _DEADLINE_ANNOTATION in annotations:
        deadline = (annotations[_DEADLINE_ANNOTATION], annotations.line_of(_DEADLINE_ANNOTATION))
    if deadline is None:
        for group in work.groups:
            if group.pod is not None and "activeDeadlineSeconds" in group.pod:
                pod = group.pod
                deadline = (pod["activeDeadlineSeconds"], pod.line_of("activeDeadlineSeconds"))
                break
    if deadline is not None:
        draft.set("limits.max_runtime_hours", seconds_to_hours(deadline[0]), deadline[1])


_CSI_SCHEMES = {"gcsfuse.csi.storage.gke.io": "gs", "s3.csi.aws.com": "s3"}


def _buckets(draft: JobDraft, groups: list[_Group]) -> None:
    uris: list[str] = []
    line = None
    for group in groups:
        for volume in _items(group.pod.get("volumes") if group.pod else None):
            csi = _map(volume.get("csi")) if isinstance(volume, dict) else None
            scheme = _CSI_SCHEMES.get(str(csi.get("driver"))) if csi else None
            attributes = _map(csi.get("volumeAttributes")) if csi else None
            bucket = attributes.get("bucketName") if attributes else None
            if attributes is None or not scheme or not isinstance(bucket, str):
                continue
            if not is_templated(bucket) and not bucket.startswith("$"):
                uris.append(f"{scheme}://{bucket}")
                line = line or attributes.line_of("bucketName")
    if uris:
        draft.set("data.uris", tuple(dict.fromkeys(uris)), line)
