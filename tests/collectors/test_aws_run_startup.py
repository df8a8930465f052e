"""`scan --since` on SageMaker: resume time and billed start-up read from the secondary status
transitions, against the moto server on loopback through boto3's HTTP stack.

moto keeps a training job's states in its in-process backend (it creates every job Completed,
with no transitions): the tests set the states there, as tests/collectors/test_aws_sweeps.py
does, and the collector reads them back through the real DescribeTrainingJob. Prices: the
bundled `sagemaker:ml.g5.xlarge` us-east-1 on-demand rate, $1.408 an hour (prices.csv).
"""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from tests.collectors.test_aws_sweeps import (
    G5_XLARGE,
    IMAGE,
    NOW,
    REGION,
    ROLE,
    _backend,
    _scan,
    cents,
    tuning_job,
)

START = NOW - timedelta(days=3)


@pytest.fixture
def sagemaker(aws_fleet: Any) -> Any:
    return aws_fleet.client("sagemaker", REGION)


def _steps(*phases: tuple[str, int, int]) -> list[dict[str, Any]]:
    """Secondary transitions from (status, start second, end second) after START."""
    return [
        {
            "Status": status,
            "StartTime": START + timedelta(seconds=begin),
            "EndTime": START + timedelta(seconds=end),
            "StatusMessage": status,
        }
        for status, begin, end in phases
    ]


def job(
    client: Any,
    name: str,
    steps: list[dict[str, Any]],
    *,
    training: int,
    billable: int,
    count: int = 1,
    spot: bool = False,
    mode: str = "File",
    tuning_arn: str | None = None,
    checkpoint: bool = True,
) -> None:
    extra: dict[str, Any] = {}
    stopping = {"MaxRuntimeInSeconds": 86400}
    if spot:
        extra["EnableManagedSpotTraining"] = True
        stopping["MaxWaitTimeInSeconds"] = 172800
    if spot and checkpoint:
        extra["CheckpointConfig"] = {"S3Uri": f"s3://ckpt/{name}/"}
    client.create_training_job(
        TrainingJobName=name,
        AlgorithmSpecification={"TrainingImage": IMAGE, "TrainingInputMode": mode},
        RoleArn=ROLE,
        InputDataConfig=[
            {
                "ChannelName": "train",
                "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://d/t/"}},
                "InputMode": mode,
            }
        ],
        OutputDataConfig={"S3OutputPath": "s3://train-output/"},
        ResourceConfig={
            "InstanceType": "ml.g5.xlarge",
            "InstanceCount": count,
            "VolumeSizeInGB": 50,
        },
        StoppingCondition=stopping,
        **extra,
    )
    record = _backend().training_jobs[name]
    record.training_job_status = record.secondary_status = "Completed"
    record.training_start_time = START
    record.training_end_time = record.last_modified_time = START + timedelta(seconds=training)
    record.training_time_in_seconds = training
    record.billable_time_in_seconds = billable
    record.secondary_status_transitions = [*steps, {"Status": "Completed"}]
    if tuning_arn:
        record.tuning_job_arn = tuning_arn


def _runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in report["resources"] if r["kind"] == "run"}


def _findings(report: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    index = [i for i, r in enumerate(report["resources"]) if r["name"] == name]
    return {f["rule_id"]: f for f in report["findings"] if f["resource"] in index}


def test_a_long_file_mode_download_is_billed_start_up_and_a_finding(sagemaker: Any) -> None:
    """2 × ml.g5.xlarge on demand, File mode, 3,600 s training = billable; Downloading 900 s +
    DownloadingTrainingImage 300 s = 1,200 s of billed start-up:
    1,200 × 2 / 3,600 × 1.408 × (3,600 ÷ 3,600) = $0.938667 → $0.94, of a $2.816 run (33.33%,
    over the runbook's 10%). The control (FastFile, 30 s download, 7,200 s) bills
    30 / 3,600 × 1.408 = $0.0117 → $0.01, 0.42%: no finding."""
    job(
        sagemaker, "file-mode", training=3600, billable=3600, count=2,
        steps=_steps(("Starting", 0, 60), ("Downloading", 60, 960),
                     ("DownloadingTrainingImage", 960, 1260), ("Training", 1260, 3600)),
    )  # fmt: skip
    job(
        sagemaker, "control", training=7200, billable=7200, mode="FastFile",
        steps=_steps(("Starting", 0, 60), ("Downloading", 60, 90), ("Training", 90, 7200)),
    )  # fmt: skip
    report = _scan()
    runs = _runs(report)
    startup = Decimal(1200) * 2 / 3600 * G5_XLARGE
    cost = Decimal(3600) * 2 / 3600 * G5_XLARGE
    run = runs["file-mode"]["run"]
    assert (run["startup_minutes"], run["startup_usd"], run["input_mode"]) == (
        20.0,
        0.938667,
        "File",
    )
    assert run["startup_share"] == float(round(startup / cost * 100, 2)) == 33.33
    found = _findings(report, "file-mode")["billed-startup"]
    assert (
        (found["saving_usd"], found["saving_unit"])
        == (cents(startup), "period")
        == (0.94, "period")
    )
    assert "FastFile" in found["remediation"] and "Pipe" in found["remediation"]
    control = runs["control"]["run"]
    assert control["startup_usd"] == round(float(Decimal(30) / 3600 * G5_XLARGE), 6)
    assert control["startup_share"] == 0.42 and control["input_mode"] == "FastFile"
    assert not _findings(report, "control")  # no interruption, no start-up over 10%
    (sweep,) = [s for s in report["sweeps"] if s["name"] == "file-mode"]
    assert (sweep["startup_usd"], sweep["startup_share_pct"]) == (0.94, 33.33)
    assert sweep["trials"][0]["startup_seconds"] == 1200.0


def test_a_slow_resume_after_an_interruption_is_a_finding_and_waiting_is_not_resume(
    sagemaker: Any,
) -> None:
    """Spot, checkpointed, 10,000 s training, 3,000 s billable. Interrupted from 2,000 s to
    2,600 s (waiting for capacity: not resume), then Starting, Downloading and the image until
    training again at 3,000 s: resume = 3,000 − 2,600 = 400 s = 6.67 minutes, over the 5-minute
    bound. Billed start-up 60 + 60 + 240 = 360 s at 1.408 × 3,000 ÷ 10,000 an hour = $0.04224
    → $0.04 of $1.173333 (3.6%): no start-up finding."""
    job(
        sagemaker, "slow-resume", training=10_000, billable=3_000, spot=True,
        steps=_steps(("Starting", 0, 30), ("Downloading", 30, 90), ("Training", 90, 2000),
                     ("Interrupted", 2000, 2600), ("Restarting", 2600, 2600),
                     ("Starting", 2600, 2700), ("Downloading", 2700, 2760),
                     ("DownloadingTrainingImage", 2760, 3000), ("Training", 3000, 10_000)),
    )  # fmt: skip
    report = _scan()
    run = _runs(report)["slow-resume"]["run"]
    assert (run["interruptions"], run["restarts"], run["resume_minutes"]) == (1, 1, 6.6667)
    found = _findings(report, "slow-resume")
    assert found["spot-resume-time"]["actual"] == "run.resume_minutes = 6.6667"
    assert "billed-startup" not in found and "spot-restart-from-zero" not in found
    startup = Decimal(360) / 3600 * G5_XLARGE * Decimal(3000) / Decimal(10_000)
    assert run["startup_usd"] == float(round(startup, 6)) == 0.04224
    assert run["startup_share"] == float(
        round(startup / (Decimal(3000) / 3600 * G5_XLARGE) * 100, 2)
    )


def test_a_sweeps_interruptions_and_mean_resume_are_counted_across_its_trials(
    sagemaker: Any,
) -> None:
    """Trial a: interrupted twice, resumed after 120 s and 240 s; trial b: once, after 60 s.
    The sweep: 3 interruptions, 2 trials retried, mean resume (120 + 240 + 60) / 3 = 140 s =
    2.33 minutes: within the bound, no finding."""
    arn = tuning_job(sagemaker, "resume-sweep")
    job(
        sagemaker, "resume-sweep-a", training=5000, billable=2000, spot=True, tuning_arn=arn,
        steps=_steps(("Training", 0, 1000), ("Interrupted", 1000, 1500), ("Training", 1620, 3000),
                     ("Interrupted", 3000, 3300), ("Training", 3540, 5000)),
    )  # fmt: skip
    job(
        sagemaker, "resume-sweep-b", training=4000, billable=1500, spot=True, tuning_arn=arn,
        steps=_steps(("Training", 0, 1000), ("Interrupted", 1000, 1100), ("Training", 1160, 4000)),
    )  # fmt: skip
    report = _scan()
    (sweep,) = [s for s in report["sweeps"] if s["name"] == "resume-sweep"]
    assert sweep["interruptions"] == 3 and sweep["trials_by_outcome"]["retried"] == 2
    assert sweep["resume_minutes"] == round(140 / 60, 2) == 2.33
    trials = {t["name"]: t for t in sweep["trials"]}
    assert (trials["resume-sweep-a"]["resume_seconds"], trials["resume-sweep-a"]["resumes"]) == (
        360.0,
        2,
    )
    run = _runs(report)["resume-sweep"]["run"]
    assert run["resume_minutes"] == round(140 / 60, 4)
    assert "spot-resume-time" not in _findings(report, "resume-sweep")


def test_a_finished_run_states_its_expected_lost_work_from_its_own_figures(
    sagemaker: Any, tmp_path: Any
) -> None:
    """A spot job alone, no checkpoint, 7,200 s training, 2,880 s billable, interrupted once and
    resumed 120 s later (2 minutes, measured). With a rate file giving ml.g5.xlarge us-east-1
    0.5 an hour: the run's spot rate = 1.408 × 2,880 ÷ 7,200 = 0.5632; hours = 2;
    lost = 2 × 0.5 × (2/2 + 2/60) × 0.5632 = 0.581973 → $0.58; discount = (1.408 − 0.5632) × 2
    = 1.6896 → $1.69; net = 1.107627 → $1.11. An on-demand job with a checkpoint has no stated
    interval: its lost work is unknown, never a restart from zero."""
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({
        "gpu_audit_interruptions": 1, "as_of": "2026-12-01",
        "unit": "interruptions per instance-hour", "method": "a team's own measure",
        "sources": [{"name": "team", "url": "internal dashboard", "date": "2026-12-01"}],
        "rows": [{"provider": "aws", "type": "g5.xlarge", "region": "us-east-1", "per_hour": 0.5,
                  "public": "0.5/h measured", "source": "team", "date": "2026-12-01"}],
    }))  # fmt: skip
    job(
        sagemaker, "spot-alone", training=7200, billable=2880, spot=True, checkpoint=False,
        steps=_steps(("Training", 0, 3000), ("Interrupted", 3000, 3300), ("Training", 3420, 7200)),
    )  # fmt: skip
    job(sagemaker, "od-alone", training=3600, billable=3600, steps=_steps(("Training", 0, 3600)))
    _backend().training_jobs["od-alone"].checkpoint_config = {"S3Uri": "s3://ckpt/od/"}
    report = _scan("--interruption-rates", str(rates))
    figures = _runs(report)["spot-alone"]["interruption"]
    spot = G5_XLARGE * 2880 / 7200
    lost = 2 * Decimal("0.5") * (1 + Decimal(2) / 60) * spot
    discount = (G5_XLARGE - spot) * 2
    assert (figures["hours"], figures["resume_minutes"], figures["spot_hourly_usd"]) == (
        2.0, 2.0, float(spot)
    )  # fmt: skip
    assert (figures["lost_usd"], figures["discount_usd"], figures["net_usd"]) == (
        cents(lost), cents(discount), cents(discount - lost)
    ) == (0.58, 1.69, 1.11)  # fmt: skip
    assert figures["checkpoint_minutes"] == 120.0 and figures["rate_public"] == "0.5/h measured"
    on_demand = _runs(report)["od-alone"]["interruption"]
    assert on_demand["lost_usd"] is None and on_demand["checkpoint_minutes"] is None


def test_a_finished_runs_checkpoint_interval_is_its_tag(sagemaker: Any, tmp_path: Any) -> None:
    """A spot job alone that checkpoints, tagged `gpu-audit/checkpoint-interval-minutes: 20`
    (read through ListTags), 7,200 s training, 2,880 s billable, never interrupted (so resume =
    the runbook's 5-minute bound). Rate 0.5 an hour; spot rate 1.408 × 2,880 ÷ 7,200 = 0.5632;
    lost = 2 × 0.5 × (20/2 + 5)/60 × 0.5632 = 0.1408 → $0.14; discount $1.69; net 1.5488 →
    $1.55. The same job untagged: checkpointed at an unknown interval, no lost work; a tag that
    is no number is unknown too, never a restart from zero."""
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({
        "gpu_audit_interruptions": 1, "as_of": "2026-12-01",
        "unit": "interruptions per instance-hour", "method": "a team's own measure",
        "sources": [{"name": "team", "url": "internal dashboard", "date": "2026-12-01"}],
        "rows": [{"provider": "aws", "type": "g5.xlarge", "region": "us-east-1", "per_hour": 0.5,
                  "public": "0.5/h measured", "source": "team", "date": "2026-12-01"}],
    }))  # fmt: skip
    for name in ("tagged", "untagged", "not-a-number"):
        job(sagemaker, name, training=7200, billable=2880, spot=True,
            steps=_steps(("Training", 0, 7200)))  # fmt: skip
    for name, value in (("tagged", "20"), ("not-a-number", "every epoch")):
        sagemaker.add_tags(
            ResourceArn=_backend().training_jobs[name].arn,
            Tags=[{"Key": "gpu-audit/checkpoint-interval-minutes", "Value": value}],
        )
    report = _scan("--interruption-rates", str(rates))
    figures = _runs(report)["tagged"]["interruption"]
    spot = G5_XLARGE * 2880 / 7200
    lost = 2 * Decimal("0.5") * (Decimal(20) / 2 + 5) / 60 * spot
    discount = (G5_XLARGE - spot) * 2
    assert (figures["checkpoint_minutes"], figures["resume_minutes"]) == (20.0, 5.0)
    assert figures["checkpoint_from"] == "label or tag gpu-audit/checkpoint-interval-minutes"
    assert (figures["lost_usd"], figures["discount_usd"], figures["net_usd"]) == (
        cents(lost), cents(discount), cents(discount - lost)
    ) == (0.14, 1.69, 1.55)  # fmt: skip
    for name in ("untagged", "not-a-number"):
        unknown = _runs(report)[name]["interruption"]
        assert unknown["lost_usd"] is None and unknown["checkpoint_minutes"] is None, name
