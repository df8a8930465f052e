"""SageMaker payloads read into Resources (service `sagemaker`) and their CloudWatch series.

- Training and tuning jobs are live jobs: `kind: job`, `state: running`, `workload: training`,
  capacity `spot` when `EnableManagedSpotTraining`. Job rules (runtime cap, checkpoint on spot,
  trial cap) and the running-capacity rules judge them, each rule once.
- Notebook instances (`workload: notebook`), endpoint variants (`inference`) and HyperPod instance
  groups are instances. An endpoint or cluster with several GPU variants or groups gives one
  resource each, its id the ARN plus `/` and the variant or group name.
- `gpu.count` is GPUs per instance × instances (× parallel trials for a tuning job).
- CPU instance types (not in the catalog) and serverless variants are not GPU capacity: skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog import instance_spec
from gpu_audit.collectors.aws.metrics import Series
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import (
    Capacity,
    Checkpoint,
    DataRef,
    Gpu,
    Hpo,
    Kind,
    Limits,
    Resource,
    SourceRef,
    State,
    Workload,
)

SERVICE = "sagemaker"
METRIC = "GPUUtilization"
DataOf = Callable[[Sequence[str], list[str]], DataRef]  # (S3 URIs, notes) → data.uris/regions


@record
class Found:
    """A SageMaker resource before utilization, and the series that measure it."""

    resource: Resource
    series: tuple[Series, ...] = ()


def tag_map(pairs: Sequence[Mapping[str, str]] | None) -> dict[str, str]:
    """AWS `[{"Key", "Value"}]` tags as a dict (a tag without a key left out, a missing value
    empty)."""
    return {t["Key"]: t.get("Value", "") for t in pairs or () if "Key" in t}


def _time(value: Any) -> datetime | None:
    return value.astimezone(UTC) if isinstance(value, datetime) else None


def _hours(seconds: Any) -> float | None:
    return round(seconds / 3600, 4) if isinstance(seconds, int | float) else None


def _gpu(instance_type: str | None, instances: int) -> Gpu | None:
    spec = instance_spec(instance_type)
    if spec is None or instances < 1:
        return None
    return Gpu(spec.gpu_model, spec.gpu_count * instances, spec.gpu_memory_gib)


def _s3_inputs(channels: Sequence[Mapping[str, Any]] | None) -> list[str]:
    uris = []
    for channel in channels or ():
        uri = ((channel.get("DataSource") or {}).get("S3DataSource") or {}).get("S3Uri")
        if uri:
            uris.append(str(uri))
    return uris


class SageMakerMapper:
    """Translates one region's payloads; `data_of` resolves input buckets to regions."""

    def __init__(self, settings: AwsSettings, account: str, region: str, data_of: DataOf) -> None:
        self.aws = settings
        self.account = account
        self.region = region
        self.data_of = data_of

    def _base(self, tags: dict[str, str], **fields: Any) -> Resource:
        return Resource(
            provider="aws",
            service=SERVICE,
            account=self.account,
            region=self.region,
            state=State.RUNNING,
            tags=tags,
            **fields,
        )

    def _arn(self, kind: str, name: str) -> str:
        # Real Search results carry the ARN; this is its documented form, for a result without.
        return f"arn:aws:sagemaker:{self.region}:{self.account}:{kind}/{name.lower()}"

    def training_job(self, job: Mapping[str, Any]) -> Found | None:
        """A training job in progress as a Resource (data inputs, checkpoint, runtime cap, spot
        wait) and a GPU utilization series per host; None when it holds no GPU."""
        config = job.get("ResourceConfig") or {}
        instance_type, count = first_gpu_group(config)
        gpu = _gpu(instance_type, count)
        if gpu is None:
            return None
        name = str(job["TrainingJobName"])
        stopping = job.get("StoppingCondition") or {}
        notes: list[str] = []
        data = self.data_of(_s3_inputs(job.get("InputDataConfig")), notes)
        wait = _hours(stopping.get("MaxWaitTimeInSeconds"))
        if wait is not None:
            notes.append(f"managed spot: waits at most {wait:g} h")
        resource = self._base(
            tag_map(job.get("Tags")),
            kind=Kind.JOB,
            id=str(job.get("TrainingJobArn") or self._arn("training-job", name)),
            name=name,
            instance_type=instance_type,
            capacity=Capacity.SPOT if job.get("EnableManagedSpotTraining") else Capacity.ON_DEMAND,
            gpu=gpu,
            workload=Workload.TRAINING,
            launched_at=_time(job.get("TrainingStartTime") or job.get("CreationTime")),
            data=data,
            checkpoint=Checkpoint(uri=(job.get("CheckpointConfig") or {}).get("S3Uri")),
            limits=Limits(max_runtime_hours=_hours(stopping.get("MaxRuntimeInSeconds"))),
            source=SourceRef(note="; ".join(notes) or None),
        )
        per = float((instance_spec(instance_type) or _NO_SPEC).gpu_count)
        series = tuple(
            Series(
                resource.id,
                self.aws.sagemaker_training_namespace,
                METRIC,
                (("Host", f"{name}/algo-{host}"),),
                per,
            )
            for host in range(1, count + 1)
        )
        return Found(resource, series)

    def tuning_job(self, job: Mapping[str, Any]) -> Found | None:
        """A tuning job as a Resource holding its parallel trials' GPUs (one trial's instances ×
        MaxParallelTrainingJobs), None without a GPU."""
        definition: Mapping[str, Any] = job.get("TrainingJobDefinition") or next(
            iter(job.get("TrainingJobDefinitions") or ()), {}
        )
        settings = job.get("HyperParameterTuningJobConfig") or {}
        limits = settings.get("ResourceLimits") or {}
        parallel = int(limits.get("MaxParallelTrainingJobs") or 1)
        instance_type, count = first_gpu_group(definition.get("ResourceConfig") or {})
        gpu = _gpu(instance_type, count * parallel)
        if gpu is None:
            return None
        name = str(job["HyperParameterTuningJobName"])
        stopping = definition.get("StoppingCondition") or {}
        notes = [f"{parallel} trials in parallel"]
        data = self.data_of(_s3_inputs(definition.get("InputDataConfig")), notes)
        trials = limits.get("MaxNumberOfTrainingJobs")
        spot = definition.get("EnableManagedSpotTraining")
        checkpoint = (definition.get("CheckpointConfig") or {}).get("S3Uri")
        resource = self._base(
            tag_map(job.get("Tags")),
            kind=Kind.JOB,
            id=str(
                job.get("HyperParameterTuningJobArn")
                or self._arn("hyper-parameter-tuning-job", name)
            ),
            name=name,
            instance_type=instance_type,
            capacity=Capacity.SPOT if spot else Capacity.ON_DEMAND,
            gpu=gpu,
            workload=Workload.TRAINING,
            launched_at=_time(job.get("CreationTime")),
            data=data,
            checkpoint=Checkpoint(uri=checkpoint),
            limits=Limits(max_runtime_hours=_hours(stopping.get("MaxRuntimeInSeconds"))),
            hpo=Hpo(
                max_trials=int(trials) if isinstance(trials, int) else None,
                early_stopping=settings.get("TrainingJobEarlyStoppingType", "Off") == "Auto",
            ),
            source=SourceRef(note="; ".join(notes)),
        )
        return Found(resource)

    def notebook(self, summary: Mapping[str, Any], tags: dict[str, str]) -> Found | None:
        """A GPU notebook instance as an on-demand Resource (up since its last start), None for a
        CPU one."""
        instance_type = summary.get("InstanceType")
        gpu = _gpu(instance_type, 1)
        if gpu is None:
            return None
        resource = self._base(
            tags,
            kind=Kind.INSTANCE,
            id=str(summary["NotebookInstanceArn"]),
            name=str(summary["NotebookInstanceName"]),
            instance_type=instance_type,
            capacity=Capacity.ON_DEMAND,
            gpu=gpu,
            workload=Workload.NOTEBOOK,
            # A notebook's LastModifiedTime moves when it is started: up since then, at least.
            launched_at=_time(summary.get("LastModifiedTime") or summary.get("CreationTime")),
            source=SourceRef(note="notebook instances publish no GPU metric"),
        )
        return Found(resource)

    def endpoint(self, endpoint: Mapping[str, Any], config: Mapping[str, Any]) -> list[Found]:
        """One Resource per GPU production variant of an endpoint (its current instance count, else
        the initial one); serverless variants hold none."""
        live = {v.get("VariantName"): v for v in endpoint.get("ProductionVariants") or ()}
        name = str(endpoint["EndpointName"])
        arn = str(endpoint.get("EndpointArn") or self._arn("endpoint", name))
        variants = []
        for variant in config.get("ProductionVariants") or ():
            if variant.get("ServerlessConfig"):
                continue  # serverless inference holds no GPU
            current = live.get(variant.get("VariantName")) or {}
            count = current.get("CurrentInstanceCount", variant.get("InitialInstanceCount"))
            gpu = _gpu(variant.get("InstanceType"), int(count or 0))
            if gpu is not None:
                variants.append((variant, gpu))
        found = []
        for variant, gpu in variants:
            variant_name = str(variant.get("VariantName"))
            resource = self._base(
                tag_map(endpoint.get("Tags")),
                kind=Kind.INSTANCE,
                id=arn if len(variants) == 1 else f"{arn}/{variant_name}",
                name=name,
                instance_type=variant["InstanceType"],
                capacity=Capacity.ON_DEMAND,
                gpu=gpu,
                workload=Workload.INFERENCE,
                launched_at=_time(endpoint.get("CreationTime")),
                source=SourceRef(note=f"variant {variant_name}"),
            )
            per = float((instance_spec(variant["InstanceType"]) or _NO_SPEC).gpu_count)
            dims = (("EndpointName", name), ("VariantName", variant_name))
            metric = Series(resource.id, self.aws.sagemaker_endpoint_namespace, METRIC, dims, per)
            found.append(Found(resource, (metric,)))
        return found

    def cluster(self, cluster: Mapping[str, Any], tags: dict[str, str]) -> list[Found]:
        """One Resource per GPU instance group of a HyperPod cluster (reserved when a training plan
        backs it)."""
        groups = []
        for group in cluster.get("InstanceGroups") or ():
            count = group.get("CurrentCount", group.get("TargetCount", 0))
            gpu = _gpu(group.get("InstanceType"), int(count or 0))
            if gpu is not None:
                groups.append((group, gpu))
        arn = str(cluster["ClusterArn"])
        found = []
        for group, gpu in groups:
            group_name = str(group.get("InstanceGroupName"))
            reserved = bool(group.get("TrainingPlanArn"))
            resource = self._base(
                tags,
                kind=Kind.INSTANCE,
                id=arn if len(groups) == 1 else f"{arn}/{group_name}",
                name=str(cluster["ClusterName"]),
                instance_type=group["InstanceType"],
                capacity=Capacity.RESERVED if reserved else Capacity.ON_DEMAND,
                gpu=gpu,
                workload=_workload(tags.get(self.aws.workload_tag)),
                launched_at=_time(cluster.get("CreationTime")),
                source=SourceRef(note=f"HyperPod instance group {group_name}"),
            )
            found.append(Found(resource))
        return found


@record
class _NoSpec:
    gpu_count: int = 1


_NO_SPEC = _NoSpec()


def first_gpu_group(config: Mapping[str, Any]) -> tuple[str | None, int]:
    """The instance type and count of a ResourceConfig, or of its first GPU instance group."""
    if config.get("InstanceType"):
        return str(config["InstanceType"]), int(config.get("InstanceCount") or 1)
    for group in config.get("InstanceGroups") or ():
        if instance_spec(group.get("InstanceType")) is not None:
            return str(group["InstanceType"]), int(group.get("InstanceCount") or 1)
    return None, 0


def _workload(value: str | None) -> Workload:
    try:
        return Workload((value or "").strip().lower())
    except ValueError:
        return Workload.UNKNOWN
