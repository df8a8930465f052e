"""One job, one price, in every command (issue 48): `catalog lookup` of an `ml.` type shows the
SageMaker rate card `estimate` and `check` price it on, and a job with no price says so."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli import main

ROOT = Path(__file__).resolve().parents[1]
TRAINING = """\
{"TrainingJobName": "p4d-run",
 "AlgorithmSpecification": {"TrainingImage":
   "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.1", "TrainingInputMode": "File"},
 "RoleArn": "arn:aws:iam::111122223333:role/sm",
 "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1, "VolumeSizeInGB": 100},
 "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
 "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}}
"""


def _run(*args: str) -> str:
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code in (0, 1), done.output
    return done.output


def test_lookup_of_an_ml_type_is_the_rate_estimate_prices_the_job_at(tmp_path: Path) -> None:
    job = tmp_path / "train.json"
    job.write_text(TRAINING, encoding="utf-8")
    (estimated,) = json.loads(_run("estimate", "--format", "json", str(job)))["jobs"]
    looked = json.loads(_run("catalog", "lookup", "--format", "json", "ml.p4d.24xlarge"))
    (ml,) = looked["items"]
    assert ml["on_demand_usd"] == estimated["on_demand"]["hourly_usd"] == 37.688
    assert ml["source"].startswith("SageMaker AI pricing page")
    (ec2,) = json.loads(_run("catalog", "lookup", "--format", "json", "p4d.24xlarge"))["items"]
    assert round(ec2["on_demand_usd"], 4) == 21.9576  # the EC2 type keeps the EC2 rate
    table = _run("catalog", "lookup", "ml.p4d.24xlarge")
    assert "$37.6880" in table and "$21.9576" not in table


def test_a_job_with_no_price_says_not_priced_never_a_zero_rate(tmp_path: Path) -> None:
    sweep = ROOT / "fixtures/sweeps/public/wandb-grid-hyperband.yaml"
    line = _run("check", str(sweep)).splitlines()[-1]
    assert "GPU rate not priced" in line and "$0.00" not in line
    report = tmp_path / "check.md"
    _run("check", "--format", "markdown", "-o", str(report), str(sweep))
    text = report.read_text(encoding="utf-8")
    assert "| GPU rate of the jobs | not priced (1 job) |" in text
    assert "$0.00 / hour" not in text


def test_a_priced_and_an_unpriced_job_keep_the_rate_and_name_the_gap(tmp_path: Path) -> None:
    job = tmp_path / "train.json"
    job.write_text(TRAINING, encoding="utf-8")
    sweep = ROOT / "fixtures/sweeps/public/wandb-grid-hyperband.yaml"
    line = _run("check", str(job), str(sweep)).splitlines()[-1]
    assert "GPU rate $37.69/hour (not priced: 1 job)" in line
