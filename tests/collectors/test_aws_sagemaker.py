"""SageMaker in the AWS scan, against the moto server on loopback through boto3's HTTP stack.

moto creates training and tuning jobs as Completed; the tests set InProgress through moto's
in-process backend (the ThreadedMotoServer runs in this process), never by faking the API.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.collectors.aws.collector import AwsCollector
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.resource import Capacity, Kind, Resource, State, Workload
from gpu_audit.core.results import CoverageGap

ACCOUNT = "123456789012"  # moto's default account
REGION = "us-east-1"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sagemaker"
IMAGE = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/train:latest"
ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}"


def _backend() -> Any:
    from moto.sagemaker.models import sagemaker_backends

    return sagemaker_backends[ACCOUNT][REGION]


def _pairs(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


class SageMakerFleet:
    """Builds SageMaker resources on moto through boto3, and their CloudWatch datapoints."""

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        self.client = fleet.client("sagemaker", REGION)

    def training_job(
        self,
        name: str,
        instance_type: str,
        *,
        count: int = 1,
        spot: bool = False,
        checkpoint: str | None = None,
        tags: dict[str, str] | None = None,
        running: bool = True,
    ) -> None:
        extra: dict[str, Any] = {}
        stopping: dict[str, int] = {"MaxRuntimeInSeconds": 86400}
        if spot:
            extra["EnableManagedSpotTraining"] = True
            stopping["MaxWaitTimeInSeconds"] = 172800
        if checkpoint:
            extra["CheckpointConfig"] = {"S3Uri": checkpoint}
        self.client.create_training_job(
            TrainingJobName=name,
            AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            RoleArn=ROLE,
            InputDataConfig=[
                {
                    "ChannelName": "train",
                    "DataSource": {
                        "S3DataSource": {
                            "S3DataType": "S3Prefix",
                            "S3Uri": "s3://train-data-eu/shards/",
                        }
                    },
                }
            ],
            OutputDataConfig={"S3OutputPath": "s3://train-output/"},
            ResourceConfig={
                "InstanceType": instance_type,
                "InstanceCount": count,
                "VolumeSizeInGB": 100,
            },
            StoppingCondition=stopping,
            Tags=_pairs(tags or {}),
            **extra,
        )
        if running:
            _backend().training_jobs[name].training_job_status = "InProgress"

    def tuning_job(self, name: str, instance_type: str, *, trials: int | None) -> None:
        limits: dict[str, int] = {"MaxParallelTrainingJobs": 3}
        if trials is not None:
            limits["MaxNumberOfTrainingJobs"] = trials
        self.client.create_hyper_parameter_tuning_job(
            HyperParameterTuningJobName=name,
            HyperParameterTuningJobConfig={
                "Strategy": "Bayesian",
                "ResourceLimits": limits,
                "TrainingJobEarlyStoppingType": "Off",
                "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "loss"},
            },
            TrainingJobDefinition={
                "AlgorithmSpecification": {"TrainingImage": IMAGE, "TrainingInputMode": "File"},
                "RoleArn": ROLE,
                "OutputDataConfig": {"S3OutputPath": "s3://train-output/"},
                "ResourceConfig": {
                    "InstanceType": instance_type,
                    "InstanceCount": 1,
                    "VolumeSizeInGB": 50,
                },
                "StoppingCondition": {"MaxRuntimeInSeconds": 7200},
            },
            Tags=_pairs({"team": "search"}),
        )
        _backend().hyper_parameter_tuning_jobs[
            name
        ].hyper_parameter_tuning_job_status = "InProgress"

    def notebook(self, name: str, instance_type: str, tags: dict[str, str]) -> None:
        self.client.create_notebook_instance(
            NotebookInstanceName=name, InstanceType=instance_type, RoleArn=ROLE, Tags=_pairs(tags)
        )

    def endpoint(self, name: str, variants: list[dict[str, Any]], tags: dict[str, str]) -> None:
        self.client.create_model(
            ModelName=f"{name}-model",
            ExecutionRoleArn=ROLE,
            PrimaryContainer={"Image": IMAGE},
        )
        for variant in variants:
            variant.setdefault("ModelName", f"{name}-model")
        self.client.create_endpoint_config(
            EndpointConfigName=f"{name}-config", ProductionVariants=variants
        )
        self.client.create_endpoint(
            EndpointName=name, EndpointConfigName=f"{name}-config", Tags=_pairs(tags)
        )

    def cluster(self, name: str, groups: dict[str, tuple[str, int]], tags: dict[str, str]) -> None:
        self.client.create_cluster(
            ClusterName=name,
            InstanceGroups=[
                {
                    "InstanceGroupName": group,
                    "InstanceType": instance_type,
                    "InstanceCount": count,
                    "LifeCycleConfig": {
                        "SourceS3Uri": "s3://sagemaker-lifecycle/scripts/",
                        "OnCreate": "on_create.sh",
                    },
                    "ExecutionRole": ROLE,
                    "ThreadsPerCore": 1,
                }
                for group, (instance_type, count) in groups.items()
            ],
            Tags=_pairs(tags),
        )

    def gpu_utilization(
        self, namespace: str, dimensions: dict[str, str], values: list[float]
    ) -> None:
        now = datetime.now(UTC)
        self.fleet.client("cloudwatch", REGION).put_metric_data(
            Namespace=namespace,
            MetricData=[
                {
                    "MetricName": "GPUUtilization",
                    "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
                    "Timestamp": now - timedelta(hours=hour + 1),
                    "Value": value,
                    "Unit": "Percent",
                }
                for hour, value in enumerate(values)
            ],
        )


def build(fleet: Any) -> SageMakerFleet:
    fleet.bucket("train-data-eu", "eu-central-1")
    sm = SageMakerFleet(fleet)
    owner = {"team": "nlp", "owner": "ana", "project": "llm"}
    sm.training_job("pretrain", "ml.p4d.24xlarge", count=2, tags=owner)
    sm.training_job("finetune", "ml.g5.xlarge", spot=True, checkpoint="s3://ckpt/finetune/")
    sm.training_job("cpu-prep", "ml.m5.xlarge")
    sm.training_job("done", "ml.g5.xlarge", running=False)
    sm.tuning_job("sweep", "ml.g5.2xlarge", trials=None)
    sm.notebook("gpu-notebook", "ml.p3.2xlarge", {"owner": "bo"})
    sm.notebook("cpu-notebook", "ml.t3.medium", {"owner": "bo"})
    sm.endpoint(
        "chat",
        [
            {"VariantName": "gpu", "InstanceType": "ml.g4dn.xlarge", "InitialInstanceCount": 2},
            {
                "VariantName": "serverless",
                "ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5},
            },
        ],
        {"team": "chat"},
    )
    sm.endpoint(
        "cpu-api",
        [{"VariantName": "main", "InstanceType": "ml.m5.large", "InitialInstanceCount": 1}],
        {},
    )
    sm.cluster(
        "hyperpod",
        {"workers": ("ml.g5.8xlarge", 4), "controller": ("ml.c5.xlarge", 1)},
        {"workload": "training", "team": "research"},
    )
    sm.gpu_utilization("/aws/sagemaker/TrainingJobs", {"Host": "pretrain/algo-1"}, [640, 720, 560])
    sm.gpu_utilization("/aws/sagemaker/TrainingJobs", {"Host": "pretrain/algo-2"}, [400])
    sm.gpu_utilization(
        "/aws/sagemaker/Endpoints", {"EndpointName": "chat", "VariantName": "gpu"}, [3, 5, 4]
    )
    return sm


def scan(**aws: Any) -> tuple[dict[str, Resource], list[CoverageGap]]:
    settings = replace(AwsSettings(regions=(REGION,), max_attempts=2), **aws)
    items = list(AwsCollector(settings).collect())
    resources = {i.id: i for i in items if isinstance(i, Resource)}
    return resources, [i for i in items if isinstance(i, CoverageGap)]


def test_every_live_gpu_resource_and_none_of_the_cpu_ones(aws_fleet: Any) -> None:
    build(aws_fleet)
    resources, gaps = scan(services=("sagemaker",))
    assert gaps == []
    assert set(resources) == {
        f"{ARN}:training-job/pretrain",
        f"{ARN}:training-job/finetune",
        f"{ARN}:hyper-parameter-tuning-job/sweep",
        f"{ARN}:notebook-instance/gpu-notebook",
        f"{ARN}:endpoint/chat",
        f"{ARN}:cluster/hyperpod",
    }
    assert {r.service for r in resources.values()} == {"sagemaker"}
    assert {r.provider for r in resources.values()} == {"aws"}

    pretrain = resources[f"{ARN}:training-job/pretrain"]
    assert (pretrain.kind, pretrain.state, pretrain.workload) == (
        Kind.JOB,
        State.RUNNING,
        Workload.TRAINING,
    )
    assert (pretrain.name, pretrain.instance_type) == ("pretrain", "ml.p4d.24xlarge")
    assert (pretrain.gpu.model, pretrain.gpu.count) == ("A100-40GB", 16)
    assert pretrain.capacity is Capacity.ON_DEMAND
    assert pretrain.tags == {"team": "nlp", "owner": "ana", "project": "llm"}
    assert pretrain.limits.max_runtime_hours == 24
    assert pretrain.data.uris == ("s3://train-data-eu/shards/",)
    assert pretrain.data.regions == ("eu-central-1",)
    assert pretrain.checkpoint.uri is None
    # GPUUtilization is summed over a host's 8 GPUs: 640 → 80% per GPU; both hosts pooled.
    assert pretrain.utilization.gpu_avg == pytest.approx((80 + 90 + 70 + 50) / 4)
    assert pretrain.utilization.gpu_p95 == 90

    finetune = resources[f"{ARN}:training-job/finetune"]
    assert finetune.capacity is Capacity.SPOT
    assert finetune.checkpoint.uri == "s3://ckpt/finetune/"
    assert finetune.source.note and "waits at most 48 h" in finetune.source.note
    assert finetune.utilization.gpu_avg is None  # no datapoints: missing, not zero

    sweep = resources[f"{ARN}:hyper-parameter-tuning-job/sweep"]
    assert (sweep.kind, sweep.workload, sweep.instance_type) == (
        Kind.JOB,
        Workload.TRAINING,
        "ml.g5.2xlarge",
    )
    assert sweep.gpu.count == 3  # one A10G per trial × 3 in parallel
    assert (sweep.hpo.max_trials, sweep.hpo.early_stopping) == (None, False)
    assert sweep.tags == {"team": "search"}

    notebook = resources[f"{ARN}:notebook-instance/gpu-notebook"]
    assert (notebook.kind, notebook.workload) == (Kind.INSTANCE, Workload.NOTEBOOK)
    assert (notebook.gpu.model, notebook.gpu.count) == ("V100", 1)
    assert notebook.tags == {"owner": "bo"}
    assert notebook.launched_at is not None
    assert notebook.utilization.gpu_p95 is None

    chat = resources[f"{ARN}:endpoint/chat"]
    assert (chat.workload, chat.instance_type, chat.gpu.count) == (
        Workload.INFERENCE,
        "ml.g4dn.xlarge",
        2,
    )
    assert chat.tags == {"team": "chat"}
    assert (chat.utilization.gpu_avg, chat.utilization.gpu_p95) == (4, 5)

    cluster = resources[f"{ARN}:cluster/hyperpod"]
    assert (cluster.instance_type, cluster.gpu.model, cluster.gpu.count) == (
        "ml.g5.8xlarge",
        "A10G",
        4,
    )
    assert cluster.workload is Workload.TRAINING  # from its tag
    assert cluster.tags["team"] == "research"


def test_service_setting_narrows_and_ec2_is_labelled(aws_fleet: Any) -> None:
    build(aws_fleet)
    (instance,) = aws_fleet.launch(REGION, "g5.xlarge")
    only_ec2, _ = scan(services=("ec2",))
    assert set(only_ec2) == {instance}
    assert only_ec2[instance].service == "ec2"
    both, _ = scan()
    assert len(both) == 7


def test_read_only_calls_and_their_count(aws_fleet: Any) -> None:
    build(aws_fleet)
    calls: list[str] = []

    def record(model: Any, **_: Any) -> None:
        calls.append(model.name)

    settings = AwsSettings(regions=(REGION,), services=("sagemaker",))
    list(AwsCollector(settings, event_hooks=(("before-call", record),)).collect())
    assert {c for c in calls if not c.startswith(("Describe", "List", "Get"))} == {"Search"}
    counts = {c: calls.count(c) for c in set(calls)}
    assert counts == {
        "GetCallerIdentity": 1,
        "Search": 2,  # training jobs, endpoints: one page each
        "ListHyperParameterTuningJobs": 2,  # in progress; and touched in the period (--since)
        "DescribeHyperParameterTuningJob": 1,
        "ListTrainingJobsForHyperParameterTuningJob": 1,  # its trials: none in the period
        "ListTrainingJobs": 1,  # jobs alone modified in the period
        "DescribeTrainingJob": 1,  # the one of them that ended ("done")
        "ListNotebookInstances": 1,
        "DescribeEndpointConfig": 2,  # one per endpoint config
        "ListClusters": 1,
        "DescribeCluster": 1,
        "ListTags": 3,  # the tuning job, the GPU notebook, the GPU cluster
        "GetBucketLocation": 1,
        "GetMetricData": 1,  # training hosts and the endpoint variant in one batch
    }


def test_cli_json_prices_with_sagemaker_rates(aws_fleet: Any) -> None:
    build(aws_fleet)
    args = ["scan", "--provider", "aws", "--region", REGION, "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--service", "sagemaker"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    found = {r["id"]: r for r in report["resources"]}
    chat = found[f"{ARN}:endpoint/chat"]
    assert (chat["service"], chat["workload"], chat["capacity"]) == (
        "sagemaker",
        "inference",
        "on-demand",
    )
    assert chat["price"]["hourly_usd"] > 2 * 0.526  # two instances at SageMaker's rate, not EC2's
    finetune = found[f"{ARN}:training-job/finetune"]
    assert finetune["price"]["hourly_usd"] == finetune["price"]["spot_hourly_usd"]
    assert finetune["price"]["spot_hourly_usd"] < finetune["price"]["on_demand_hourly_usd"]
    rules = {(f["rule_id"], report["resources"][f["resource"]]["id"]) for f in report["findings"]}
    assert ("spot-for-training", f"{ARN}:training-job/pretrain") in rules
    assert ("hpo-trial-cap", f"{ARN}:hyper-parameter-tuning-job/sweep") in rules
    assert ("checkpoint-on-spot", f"{ARN}:training-job/finetune") not in rules
    per_rule = [
        f["rule_id"]
        for f in report["findings"]
        if report["resources"][f["resource"]]["id"].endswith("pretrain")
    ]
    assert len(per_rule) == len(set(per_rule))  # one finding per rule, never two


@pytest.mark.parametrize("operation", ["ListNotebookInstances", "ListHyperParameterTuningJobs"])
def test_one_failing_list_is_the_same_gap_and_the_other_lists_stay(
    aws_fleet: Any, faulty_proxy: Any, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    """The region's lists run as tasks of their own: one refused is the region's one SageMaker
    gap, as in a sequential scan, and what the other lists found is kept (EC2's too)."""
    build(aws_fleet)
    (instance,) = aws_fleet.launch(REGION, "g5.xlarge", tags={"workload": "training"})
    faulty_proxy.failing[REGION] = (403, "AccessDeniedException")
    faulty_proxy.operations = {operation}
    monkeypatch.setenv("AWS_ENDPOINT_URL", faulty_proxy.url)

    resources, gaps = scan()

    assert [(g.scope, g.account, g.region, g.error) for g in gaps] == [
        ("account/region", ACCOUNT, REGION, "AccessDeniedException")
    ]
    assert gaps[0].message.startswith("sagemaker: ")
    # A 403 is not retried; ListHyperParameterTuningJobs is called twice (in progress, and the
    # period's for --since), each refused once, and both failures are the one gap.
    assert faulty_proxy.refused == {"ListNotebookInstances": 1}.get(operation, 2)
    lost = {
        "ListNotebookInstances": f"{ARN}:notebook-instance/gpu-notebook",
        "ListHyperParameterTuningJobs": f"{ARN}:hyper-parameter-tuning-job/sweep",
    }[operation]
    assert set(resources) == {
        instance,
        f"{ARN}:training-job/pretrain",
        f"{ARN}:training-job/finetune",
        f"{ARN}:hyper-parameter-tuning-job/sweep",
        f"{ARN}:notebook-instance/gpu-notebook",
        f"{ARN}:endpoint/chat",
        f"{ARN}:cluster/hyperpod",
    } - {lost}
    # CloudWatch still measured the other lists' resources.
    assert resources[f"{ARN}:training-job/pretrain"].utilization.gpu_p95 == 90
