"""`scan --since` on SageMaker: a finished tuning sweep and a spot training job, against the moto
server on loopback through boto3's HTTP stack.

moto creates training jobs as Completed with no billable time, no secondary status transitions
and no tuning job; the tests set those through moto's in-process backend (the server runs in
this process). moto has no `ListTrainingJobsForHyperParameterTuningJob`: `aws_fleet` (conftest)
adds it to the server, answering from the backend's training jobs in the API's shape, paged by
NextToken. The collector and boto3 are the real ones; every expected dollar is worked out here
from the rate card and the seconds.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.collectors.aws.collector import AwsCollector
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.runs import Outcome, Sweep

ACCOUNT = "123456789012"  # moto's default account
REGION = "us-east-1"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sagemaker"
IMAGE = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/train:latest"
G5_XLARGE = Decimal("1.408")  # sagemaker:ml.g5.xlarge, us-east-1 on-demand (prices.csv)
P3_2XLARGE = Decimal("3.825")  # sagemaker:ml.p3.2xlarge
NOW = datetime.now(UTC).replace(tzinfo=None, microsecond=0)  # moto keeps naive UTC times
SINCE = (NOW - timedelta(days=30)).date().isoformat()


def _backend() -> Any:
    from moto.sagemaker.models import sagemaker_backends

    return sagemaker_backends[ACCOUNT][REGION]


@pytest.fixture
def sagemaker(aws_fleet: Any) -> Any:
    return aws_fleet.client("sagemaker", REGION)


def _transitions(start: datetime, interrupted_after: int | None, end: str) -> list[Any]:
    steps = [{"Status": "Starting", "StartTime": start, "EndTime": start}]
    at = start
    if interrupted_after is not None:
        stop = at + timedelta(seconds=interrupted_after)
        steps += [
            {"Status": "Training", "StartTime": at, "EndTime": stop},
            {"Status": "Interrupted", "StartTime": stop, "EndTime": stop},
            {"Status": "Restarting", "StartTime": stop, "EndTime": stop},
        ]
        at = stop
    steps += [{"Status": "Training", "StartTime": at, "EndTime": at}, {"Status": end}]
    return steps


def training_job(
    client: Any,
    name: str,
    *,
    instance_type: str = "ml.g5.xlarge",
    count: int = 2,
    spot: bool = True,
    checkpoint: str | None = None,
    status: str = "Completed",
    training: int = 3600,
    billable: int = 1800,
    ended: datetime = NOW - timedelta(days=2),
    interrupted_after: int | None = None,
    tuning_arn: str | None = None,
) -> None:
    extra: dict[str, Any] = {}
    stopping = {"MaxRuntimeInSeconds": 86400}
    if spot:
        extra["EnableManagedSpotTraining"] = True
        stopping["MaxWaitTimeInSeconds"] = 172800
    if checkpoint:
        extra["CheckpointConfig"] = {"S3Uri": checkpoint}
    client.create_training_job(
        TrainingJobName=name,
        AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": "File"},
        RoleArn=ROLE,
        OutputDataConfig={"S3OutputPath": "s3://train-output/"},
        ResourceConfig={
            "InstanceType": instance_type,
            "InstanceCount": count,
            "VolumeSizeInGB": 50,
        },
        StoppingCondition=stopping,
        **extra,
    )
    job = _backend().training_jobs[name]
    job.training_job_status = job.secondary_status = status
    job.training_start_time = ended - timedelta(seconds=training)
    job.training_end_time = job.last_modified_time = ended
    job.training_time_in_seconds = training
    job.billable_time_in_seconds = billable
    job.secondary_status_transitions = _transitions(
        job.training_start_time, interrupted_after, status
    )
    if status == "Failed":
        job.failure_reason = "AlgorithmError: CUDA out of memory"
    if tuning_arn:
        job.tuning_job_arn = tuning_arn


def tuning_job(client: Any, name: str) -> str:
    client.create_hyper_parameter_tuning_job(
        HyperParameterTuningJobName=name,
        HyperParameterTuningJobConfig={
            "Strategy": "Bayesian",
            "ResourceLimits": {"MaxNumberOfTrainingJobs": 20, "MaxParallelTrainingJobs": 4},
            "TrainingJobEarlyStoppingType": "Auto",
            "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "loss"},
        },
        TrainingJobDefinition={
            "AlgorithmSpecification": {"TrainingImage": IMAGE, "TrainingInputMode": "File"},
            "RoleArn": ROLE,
            "OutputDataConfig": {"S3OutputPath": "s3://train-output/"},
            "ResourceConfig": {
                "InstanceType": "ml.g5.xlarge",
                "InstanceCount": 2,
                "VolumeSizeInGB": 50,
            },
            "StoppingCondition": {"MaxRuntimeInSeconds": 7200, "MaxWaitTimeInSeconds": 14400},
            "EnableManagedSpotTraining": True,
        },
    )
    return str(_backend().hyper_parameter_tuning_jobs[name].arn)


# The sweep: 12 completed, 5 stopped early, 3 failed (two of them spot trials interrupted once,
# 1,200 s into training, with no checkpoint); every trial on 2 × ml.g5.xlarge, managed spot.
OUTCOMES = ["Completed"] * 12 + ["Stopped"] * 5 + ["Failed"] * 3
INTERRUPTED = {17, 18}


def _seconds(index: int) -> tuple[int, int]:
    """(training, billable) seconds of trial `index`: spot bills 40% of the training time."""
    training = 3000 + 100 * index
    return training, training * 2 // 5


def build_sweep(client: Any) -> str:
    arn = tuning_job(client, "lr-sweep")
    for index, status in enumerate(OUTCOMES):
        training, billable = _seconds(index)
        training_job(
            client,
            f"lr-sweep-{index:03d}",
            status=status,
            training=training,
            billable=billable,
            interrupted_after=1200 if index in INTERRUPTED else None,
            tuning_arn=arn,
        )
    return arn


def cents(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def trial_cost(index: int) -> Decimal:
    _, billable = _seconds(index)
    return Decimal(billable) * 2 / 3600 * G5_XLARGE  # billable seconds × instances × rate


def _scan(*args: str) -> dict[str, Any]:
    command = ["scan", "--provider", "aws", "--region", REGION, "--service", "sagemaker"]
    result = CliRunner().invoke(main, [*command, "--since", SINCE, "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_a_sweep_reports_its_cost_per_successful_trial_and_failed_trials_to_the_cent(
    sagemaker: Any,
) -> None:
    build_sweep(sagemaker)
    report = _scan()
    (sweep,) = [s for s in report["sweeps"] if s["kind"] == "tuning"]
    total = sum(trial_cost(i) for i in range(20))
    failed = sum(trial_cost(i) for i in range(17, 20))
    assert sweep["name"] == "lr-sweep"
    assert sweep["trials_by_outcome"] == {
        "completed": 12,
        "stopped": 5,
        "failed": 3,
        "running": 0,
        "retried": 2,
    }
    assert sweep["cost_usd"] == cents(total)
    assert sweep["cost_per_success_usd"] == cents(total / 12)
    assert sweep["failed_usd"] == cents(failed)
    assert sweep["failed_share_pct"] == float(round(failed / total * 100, 2))
    assert sweep["interruptions"] == 2 and sweep["spot_savings_pct"] == 60.0
    assert sweep["ceiling_gpu_hours"] is None and sweep["ceiling"].startswith("not available")
    assert len(sweep["trials"]) == 20
    first = sweep["trials"][0]
    assert (first["outcome"], first["instances"], first["hourly_usd"]) == ("completed", 2, 1.408)
    assert first["billable_hours"] == round(1200 * 2 / 3600, 4)  # 1,200 s billed × 2 instances
    # Failed trials are 15.9% of the cost: below the pack's 25%, no finding for that.
    rules = {f["rule_id"] for f in report["findings"]}
    assert "sweep-failed-trials" not in rules
    # Two spot trials interrupted with no CheckpointConfig: each restarted from zero.
    (lost,) = [f for f in report["findings"] if f["rule_id"] == "spot-restart-from-zero"]
    thrown_away = 2 * Decimal(1200) * 2 / 3600 * G5_XLARGE * Decimal("0.4")
    assert lost["saving_usd"] == cents(thrown_away) and lost["saving_unit"] == "period"
    resource = report["resources"][lost["resource"]]
    assert resource["kind"] == "run" and resource["run"]["failed"] == 3


def test_a_spot_training_job_reports_its_realised_savings(sagemaker: Any) -> None:
    training_job(
        sagemaker,
        "solo-spot",
        instance_type="ml.p3.2xlarge",
        count=1,
        training=10_000,
        billable=3_000,
        interrupted_after=600,
        checkpoint="s3://ckpt/solo/",
    )
    training_job(sagemaker, "solo-on-demand", spot=False, training=7200, billable=7200)
    report = _scan()
    jobs = {s["name"]: s for s in report["sweeps"] if s["kind"] == "training"}
    spot = jobs["solo-spot"]
    assert spot["spot_savings_pct"] == 70.0  # 1 − 3,000 ÷ 10,000
    assert spot["billable_hours"] == round(3000 / 3600, 4)
    assert spot["cost_usd"] == cents(Decimal(3000) / 3600 * P3_2XLARGE)
    assert (spot["interruptions"], spot["restarts"]) == (1, 1)
    assert jobs["solo-on-demand"]["spot_savings_pct"] == 0.0
    assert jobs["solo-on-demand"]["cost_usd"] == cents(Decimal(7200) * 2 / 3600 * G5_XLARGE)
    # Interrupted, but it checkpoints: it resumed, nothing to find.
    assert not [f for f in report["findings"] if f["rule_id"] == "spot-restart-from-zero"]


def test_failed_trials_over_the_packs_share_are_a_finding_with_their_dollars(
    sagemaker: Any,
) -> None:
    arn = tuning_job(sagemaker, "broken-sweep")
    for index, status in enumerate(["Completed", "Failed", "Failed"]):
        training_job(
            sagemaker, f"broken-{index}", status=status, spot=False, training=3600, billable=3600,
            tuning_arn=arn,
        )  # fmt: skip
    report = _scan()
    (finding,) = [f for f in report["findings"] if f["rule_id"] == "sweep-failed-trials"]
    assert finding["saving_usd"] == cents(2 * Decimal(3600) * 2 / 3600 * G5_XLARGE)
    (sweep,) = report["sweeps"]
    assert sweep["failed_share_pct"] == 66.67
    assert sweep["cost_per_success_usd"] == cents(3 * Decimal(3600) * 2 / 3600 * G5_XLARGE)


def _collect(settings: AwsSettings, calls: list[str] | None = None) -> list[Sweep]:
    hooks: tuple[Any, ...] = ()
    if calls is not None:
        hooks = (("before-call", lambda model, **_: calls.append(model.name)),)
    found = AwsCollector(settings, event_hooks=hooks).collect()
    return [item for item in found if isinstance(item, Sweep)]


def test_a_wide_sweep_is_paged_and_only_the_period_is_described(sagemaker: Any) -> None:
    """130 trials, 20 of which ended before the period: two pages of trials (100 a page), and
    110 descriptions, the trials in the period only (the same arithmetic holds for thousands)."""
    arn = tuning_job(sagemaker, "wide-sweep")
    old = NOW - timedelta(days=60)
    for index in range(130):
        training_job(
            sagemaker, f"wide-{index:03d}", spot=False, training=600, billable=600, tuning_arn=arn,
            ended=old if index < 20 else NOW - timedelta(days=1),
        )  # fmt: skip
    calls: list[str] = []
    settings = AwsSettings(regions=(REGION,), services=("sagemaker",), since=SINCE)
    (sweep,) = _collect(settings, calls)
    assert len(sweep.trials) == 110 and sweep.completed == 110
    assert {c for c in calls if not c.startswith(("Describe", "List", "Get"))} == {"Search"}
    counts = {c: calls.count(c) for c in set(calls) if "Training" in c or "Tuning" in c}
    assert counts == {
        "ListHyperParameterTuningJobs": 2,  # the live scan's, and the period's
        "ListTrainingJobsForHyperParameterTuningJob": 2,  # 100 a page
        "DescribeTrainingJob": 110,  # the trials in the period only
        "ListTrainingJobs": 2,  # 110 modified in the period, 100 a page; all trials
    }
    # Each is in the IAM policy docs/permissions.md gives (the read-only grant).
    policy = (Path(__file__).parents[2] / "docs" / "permissions.md").read_text()
    assert all(f'"sagemaker:{operation}"' in policy for operation in counts)


def test_a_throttled_describe_is_retried_and_the_sweep_is_whole(
    sagemaker: Any, faulty_proxy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_sweep(sagemaker)
    monkeypatch.setenv("AWS_ENDPOINT_URL", faulty_proxy.url)
    faulty_proxy.failing[REGION] = (400, "ThrottlingException")
    faulty_proxy.operations = {"DescribeTrainingJob", "ListTrainingJobsForHyperParameterTuningJob"}
    faulty_proxy.limit = 2  # the first two such calls are throttled, then they pass
    settings = AwsSettings(regions=(REGION,), services=("sagemaker",), since=SINCE)
    (sweep,) = _collect(settings)
    assert faulty_proxy.refused == 2
    assert (sweep.completed, sweep.stopped, sweep.failed) == (12, 5, 3)
    assert sweep.cost_usd is not None
    assert round(Decimal(sweep.cost_usd), 6) == round(sum(trial_cost(i) for i in range(20)), 6)
    assert all(t.outcome is not Outcome.RUNNING for t in sweep.trials)


def test_a_bad_since_is_one_line_and_exit_2(aws_fleet: Any) -> None:
    result = CliRunner().invoke(
        main, ["scan", "--provider", "aws", "--region", REGION, "--since", "last tuesday"]
    )
    assert result.exit_code == 2
    assert result.output == (
        "gpu-audit: error: --since 'last tuesday': expected a date (2026-09-01) or an ISO time\n"
    )
    assert "Traceback" not in result.output


def test_merge_keeps_a_shards_sweeps_to_the_cent_and_refuses_a_bad_value(
    sagemaker: Any, tmp_path: Path
) -> None:
    build_sweep(sagemaker)
    shard = tmp_path / "shard-1.json"
    command = ["scan", "--provider", "aws", "--region", REGION, "--service", "sagemaker"]
    scanned = CliRunner().invoke(main, [*command, "--since", SINCE, "--shard", "1/1",
                                        "-o", str(shard)])  # fmt: skip
    assert scanned.exit_code in (0, 1), scanned.output
    merged = CliRunner().invoke(main, ["merge", str(shard), "--format", "json"])
    assert merged.exit_code in (0, 1), merged.output
    (sweep,) = json.loads(merged.stdout)["sweeps"]
    assert sweep == json.loads(shard.read_text())["sweeps"][0]
    assert sweep["cost_per_success_usd"] == cents(sum(trial_cost(i) for i in range(20)) / 12)
    document = json.loads(shard.read_text())
    document["sweeps"][0]["trials"][3]["instances"] = "two"
    bad = tmp_path / "shard-bad.json"
    bad.write_text(json.dumps(document))
    refused = CliRunner().invoke(main, ["merge", str(bad), "--format", "json"])
    assert refused.exit_code == 2
    assert refused.output == (
        f"gpu-audit: error: merge: {bad}: sweeps[0].trials[3].instances: "
        "expected a whole number of at least 0\n"
    )
