"""Spot lost work on job files (`check`): the spot saving is net of expected lost work, spot is
not advised where the net is not above zero, and a spot job whose lost work exceeds its discount
is a finding. Every figure is worked out by hand in the docstrings (docs/spot.md):

    lost = hours × rate × (interval ÷ 2 + resume) × spot hourly; discount = (on-demand − spot) ×
    hours; net = discount − lost (interval: the whole run where none is stated).

Prices are the bundled catalog's rows (prices.csv): `sagemaker:ml.p4d.24xlarge` us-east-1
on-demand 37.688 and spot 8.7421; Vertex `a2-highgpu-1g` on-demand 4.2244 and spot 1.6594 (the
Compute Engine row × 1.15). Rates: the bundled Spot Instance Advisor rows (p4d.24xlarge
us-east-1 is `10-15%`, max 16: 16 / 100 / 730 = 0.00021918 an hour) and the GCP capacity-advice
fixture (estimatedUptime 3,600 s: 1 an hour).
"""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.conftest import FIXTURES

GCP_RATES = FIXTURES / "interruptions" / "gcp-capacity-advice.json"
P4D_OD, P4D_SPOT, P4D_RATE = Decimal("37.688"), Decimal("8.7421"), Decimal("0.00021918")
A2_OD, A2_SPOT = Decimal("4.2244"), Decimal("1.6594")
RESUME_H = Decimal(5) / 60  # the runbook's bound: spot-resume-time's 5 minutes


def cents(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def sagemaker(
    tmp_path: Path,
    name: str,
    *,
    spot: bool,
    interval: str | None = None,
    checkpoint: bool = True,
    region: str = "us-east-1",
) -> Path:
    body: dict[str, Any] = {
        "TrainingJobName": name,
        "AlgorithmSpecification": {
            "TrainingImage": f"111122223333.dkr.ecr.{region}.amazonaws.com/train:1",
            "TrainingInputMode": "FastFile",
        },
        "RoleArn": "arn:aws:iam::111122223333:role/sagemaker",
        "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1,
                           "VolumeSizeInGB": 100},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        "OutputDataConfig": {"S3OutputPath": "s3://acme-out/"},
        "Tags": [{"Key": "team", "Value": "ml"}],
    }  # fmt: skip
    if spot:
        body["EnableManagedSpotTraining"] = True
        body["StoppingCondition"]["MaxWaitTimeInSeconds"] = 172800
    if checkpoint:
        body["CheckpointConfig"] = {"S3Uri": f"s3://acme-ckpt/{name}/"}
    if interval is not None:
        body["Tags"].append({"Key": "gpu-audit/checkpoint-interval-minutes", "Value": interval})
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(body, indent=2))
    return path


def vertex(tmp_path: Path, name: str, *, spot: bool, interval: str) -> Path:
    body = {
        "displayName": name,
        "labels": {"team": "nlp", "gpu-audit-checkpoint-interval-minutes": interval},
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "a2-highgpu-1g",
                                    "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 1},
                    "replicaCount": 1,
                    "containerSpec": {"imageUri": "us-docker.pkg.dev/acme/bert/trainer:3"},
                }
            ],
            "scheduling": {"strategy": "SPOT" if spot else "STANDARD", "timeout": "86400s"},
            "baseOutputDirectory": {"outputUriPrefix": f"gs://nlp-runs/{name}"},
        },
    }  # fmt: skip
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(body, indent=2))
    return path


def check(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["check", *args, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def findings(report: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    index = [i for i, r in enumerate(report["resources"]) if r["name"] == name]
    return {f["rule_id"]: f for f in report["findings"] if f["resource"] in index}


def resource(report: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [r for r in report["resources"] if r["name"] == name]
    return found


def not_evaluated(report: dict[str, Any], name: str) -> dict[str, str]:
    return {n["rule_id"]: n["missing"] for n in report["not_evaluated"] if n["resource_id"] == name}


def test_an_on_demand_job_with_a_20_minute_checkpoint_is_told_spot_net_of_lost_work(
    tmp_path: Path,
) -> None:
    """24 h cap on ml.p4d.24xlarge, us-east-1, checkpoint every 20 minutes:
    lost = 24 × 0.00021918 × (10/60 + 5/60) × 8.7421 = 0.0115 → $0.01;
    discount = (37.688 − 8.7421) × 24 = 694.7016 → $694.70; net = 694.6901 → $694.69."""
    report = check(str(sagemaker(tmp_path, "od-ckpt-20", spot=False, interval="20")))
    hours, interval = Decimal(24), Decimal(20) / 60
    lost = hours * P4D_RATE * (interval / 2 + RESUME_H) * P4D_SPOT
    discount = (P4D_OD - P4D_SPOT) * hours
    spot = findings(report, "od-ckpt-20")["spot-for-training"]
    assert (
        (spot["saving_usd"], spot["saving_unit"])
        == (cents(discount - lost), "run")
        == (
            694.69,
            "run",
        )
    )
    figures = resource(report, "od-ckpt-20")["interruption"]
    assert figures == {
        "rate_per_hour": 0.00021918,
        "rate_public": "10-15% (r=2, max 16)",
        "rate_source": "aws-spot-advisor "
        "(https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json, 2025-06-28)",
        "rate_as_of": "2025-06-28",
        "instances": 1,
        "hours": 24.0,
        "checkpoint_minutes": 20.0,
        "checkpoint_from": "label or tag gpu-audit/checkpoint-interval-minutes",
        "resume_minutes": 5.0,
        "spot_hourly_usd": 8.7421,
        "lost_usd": cents(lost),
        "discount_usd": cents(discount),
        "net_usd": cents(discount - lost),
        # per hour: (37.688 − 8.7421) − 0.00021918 × 0.25 × 8.7421 = 28.945421 → 28.9454
        "net_hourly_usd": float(round((P4D_OD - P4D_SPOT) - lost / hours, 4)),
    }
    assert (
        cents(lost) == 0.01 and cents(discount) == 694.70 and figures["net_hourly_usd"] == 28.9454
    )


def test_a_spot_job_with_no_checkpoint_prices_a_restart_from_zero(tmp_path: Path) -> None:
    """No checkpoint: the interval is the whole 24 h run.
    lost = 24 × 0.00021918 × (24/2 + 5/60) × 8.7421 = 0.5557 → $0.56; net = 694.7016 − 0.5557
    = 694.1459 → $694.15: still above zero, so no spot-lost-work (checkpoint-on-spot says it)."""
    report = check(str(sagemaker(tmp_path, "spot-none", spot=True, checkpoint=False)))
    hours = Decimal(24)
    lost = hours * P4D_RATE * (hours / 2 + RESUME_H) * P4D_SPOT
    net = (P4D_OD - P4D_SPOT) * hours - lost
    figures = resource(report, "spot-none")["interruption"]
    assert (
        (figures["checkpoint_minutes"], figures["lost_usd"], figures["net_usd"])
        == (
            1440.0,
            cents(lost),
            cents(net),
        )
        == (1440.0, 0.56, 694.15)
    )
    rules = findings(report, "spot-none")
    assert "checkpoint-on-spot" in rules and "spot-lost-work" not in rules


def test_a_6_hour_interval_on_a_high_interruption_type_costs_more_than_spot_saves(
    tmp_path: Path,
) -> None:
    """a2-highgpu-1g, no region named: the type's highest rate, 1 an hour (capacity advice);
    lost = 24 × 1 × (360/60/2 + 5/60) × 1.6594 = 74 × 1.6594 = 122.7956 → $122.80;
    discount = (4.2244 − 1.6594) × 24 = 61.56; net = −61.2356 → −$61.24. The spot job is a
    finding worth the excess, $61.24; the same job on demand is not told to move to spot."""
    spot = vertex(tmp_path, "bert-spot", spot=True, interval="360")
    on_demand = vertex(tmp_path, "bert-od", spot=False, interval="360")
    report = check(str(spot), str(on_demand), "--interruption-rates", str(GCP_RATES))
    hours = Decimal(24)
    lost = hours * 1 * (Decimal(6) / 2 + RESUME_H) * A2_SPOT
    net = (A2_OD - A2_SPOT) * hours - lost
    found = findings(report, "bert-spot")["spot-lost-work"]
    assert (found["saving_usd"], found["saving_unit"]) == (cents(-net), "run") == (61.24, "run")
    figures = resource(report, "bert-spot")["interruption"]
    assert (figures["lost_usd"], figures["discount_usd"], figures["net_usd"]) == (
        122.80,
        61.56,
        -61.24,
    )
    assert figures["rate_public"] == "estimatedUptime 3600s"
    assert resource(report, "bert-od")["interruption"]["net_usd"] == -61.24
    assert "spot-for-training" not in findings(report, "bert-od")  # never advised at a loss
    # without the capacity-advice file the GCP type has no row: not evaluated, not assumed rare
    bundled = check(str(spot))
    assert not_evaluated(bundled, "bert-spot")["spot-lost-work"] == "interruption.net_usd"
    assert resource(bundled, "bert-spot")["interruption"]["rate_per_hour"] is None


def test_a_templated_interval_leaves_the_spot_rules_not_evaluated(tmp_path: Path) -> None:
    od = sagemaker(tmp_path, "od-templated", spot=False, interval="${CKPT_MINUTES}")
    spot = sagemaker(tmp_path, "spot-templated", spot=True, interval="{{ .Values.ckpt }}")
    report = check(str(od), str(spot))
    assert not_evaluated(report, "od-templated")["spot-for-training"] == "interruption.net_usd"
    assert not_evaluated(report, "spot-templated")["spot-lost-work"] == "interruption.net_usd"
    assert "spot-for-training" not in findings(report, "od-templated")
    assert resource(report, "od-templated")["interruption"]["net_usd"] is None


def test_the_control_a_checkpointing_spot_job_has_nothing_to_find(tmp_path: Path) -> None:
    """Spot, 20-minute checkpoint: net $694.69 (as on demand above) > 0: no lost-work finding,
    no spot advice; the figures still travel in the JSON."""
    report = check(str(sagemaker(tmp_path, "spot-ckpt-20", spot=True, interval="20")))
    rules = findings(report, "spot-ckpt-20")
    assert not {"spot-lost-work", "spot-for-training", "checkpoint-on-spot"} & set(rules)
    assert resource(report, "spot-ckpt-20")["interruption"]["net_usd"] == 694.69


def test_a_region_with_no_row_is_not_evaluated(tmp_path: Path) -> None:
    report = check(str(sagemaker(tmp_path, "spot-mumbai", spot=True, region="ap-south-1")))
    assert not_evaluated(report, "spot-mumbai")["spot-lost-work"] == "interruption.net_usd"


def test_a_pack_changing_the_resume_bound_changes_the_lost_work(tmp_path: Path) -> None:
    """resume 65 minutes: lost = 24 × 0.00021918 × (10/60 + 65/60) × 8.7421 = 0.0575 → $0.06."""
    pack = tmp_path / "team.yaml"
    pack.write_text(
        "version: 1\nextends: runbook\nrules:\n  - id: spot-resume-time\n    severity: medium\n"
        "    targets: [run]\n    require: {run.resume_minutes: {lte: 65m}}\n"
    )
    job = sagemaker(tmp_path, "od-slow", spot=False, interval="20")
    report = check(str(job), "--policy", str(pack))
    lost = 24 * P4D_RATE * (Decimal(10) / 60 + Decimal(65) / 60) * P4D_SPOT
    figures = resource(report, "od-slow")["interruption"]
    assert (figures["resume_minutes"], figures["lost_usd"]) == (65.0, cents(lost)) == (65.0, 0.06)


def test_estimate_states_the_lost_work_and_the_net_with_the_rate_file(tmp_path: Path) -> None:
    """estimate at the 24 h cap: lost $122.80, net −$61.24 (as check above); with --hours 12:
    lost = 12 × 1 × (3 + 5/60) × 1.6594 = 61.3978 → $61.40; discount = 2.565 × 12 = 30.78;
    net = −30.6178 → −$30.62."""
    spot = str(vertex(tmp_path, "bert-spot", spot=True, interval="360"))
    rates = ("--interruption-rates", str(GCP_RATES))
    text = CliRunner().invoke(main, ["estimate", spot, *rates])
    assert text.exit_code == 0, text.output
    assert "spot lost work: $122.80 expected per run at 1 interruptions an hour" in text.stdout
    assert "spot saves -$61.24 net" in text.stdout and "2026-12-03" in text.stdout
    data = CliRunner().invoke(main, ["estimate", spot, *rates, "--format", "json", "--hours", "12"])
    (job,) = json.loads(data.stdout)["jobs"]
    lost = 12 * (Decimal(6) / 2 + RESUME_H) * A2_SPOT
    assert (
        (job["spot_lost_usd"], job["spot_net_usd"])
        == (
            cents(lost),
            cents((A2_OD - A2_SPOT) * 12 - lost),
        )
        == (61.40, -30.62)
    )
    bundled = CliRunner().invoke(main, ["estimate", spot])  # no GCP row: said, not assumed rare
    assert "spot lost work not evaluated: no interruption rate" in bundled.stdout


def test_a_job_with_no_runtime_cap_is_judged_per_hour_where_it_states_an_interval(
    tmp_path: Path,
) -> None:
    """No cap, 6 h interval, 1 interruption an hour: per hour, discount 4.2244 − 1.6594 = 2.565,
    lost 1 × (3 + 5/60) × 1.6594 = 5.1165: net −2.5515 an hour: not told spot. At a 20-minute
    interval: lost (10/60 + 5/60) × 1.6594 = 0.41485, net 2.15015 → the saving per GPU-hour
    (1 GPU) 2.1502 rather than the gross 2.565."""

    def uncapped(name: str, interval: str) -> Path:
        path = vertex(tmp_path, name, spot=False, interval=interval)
        body = json.loads(path.read_text())
        del body["jobSpec"]["scheduling"]["timeout"]
        path.write_text(json.dumps(body))
        return path

    report = check(str(uncapped("od-6h", "360")), str(uncapped("od-20m", "20")),
                   "--interruption-rates", str(GCP_RATES))  # fmt: skip
    six = resource(report, "od-6h")["interruption"]
    assert (six["hours"], six["net_usd"], six["net_hourly_usd"]) == (None, None, -2.5515)
    assert "spot-for-training" not in findings(report, "od-6h")
    net = (A2_OD - A2_SPOT) - (Decimal(20) / 60 / 2 + RESUME_H) * A2_SPOT
    spot = findings(report, "od-20m")["spot-for-training"]
    assert (spot["saving_usd"], spot["saving_unit"]) == (float(round(net, 4)), "gpu-hour")
    assert spot["saving_usd"] == 2.1502


def test_a_checkpoint_at_an_unstated_interval_leaves_the_lost_work_unknown(tmp_path: Path) -> None:
    """CheckpointConfig with no interval stated: not a restart from zero, and no interval to
    price; the figures say so (the spot job's spot-lost-work is not evaluated), and an on-demand
    job keeps the catalog's discount as its saving: (37.688 − 8.7421) × 24 = $694.70."""
    spot = sagemaker(tmp_path, "spot-ckpt-unstated", spot=True)
    on_demand = sagemaker(tmp_path, "od-ckpt-unstated", spot=False)
    report = check(str(spot), str(on_demand))
    figures = resource(report, "spot-ckpt-unstated")["interruption"]
    assert (figures["checkpoint_minutes"], figures["lost_usd"], figures["net_usd"]) == (None,) * 3
    assert figures["rate_per_hour"] == 0.00021918  # the rate is known; the interval is not
    assert not_evaluated(report, "spot-ckpt-unstated")["spot-lost-work"] == "interruption.net_usd"
    saving = findings(report, "od-ckpt-unstated")["spot-for-training"]["saving_usd"]
    assert saving == cents((P4D_OD - P4D_SPOT) * 24) == 694.70


def test_a_job_on_several_instances_is_interrupted_when_any_of_them_is(tmp_path: Path) -> None:
    """fixtures/jobs/kubernetes/pytorchjob-spot.yaml: 4 × p4d.24xlarge on spot, 24 h deadline,
    no region (p4d's highest rate, >20%: 0.00136986), no checkpoint: lost = 24 × 0.00136986 × 4
    × (12 + 5/60) × (4 × 5.0933) = 32.3737 → $32.37; discount = (4 × 21.957642 − 4 × 5.0933) ×
    24 = 1618.9768 → $1,618.98; net 1586.6031 → $1,586.60."""
    report = check(str(FIXTURES / "jobs" / "kubernetes" / "pytorchjob-spot.yaml"))
    figures = resource(report, "bert-large")["interruption"]
    rate, hours, spot = Decimal("0.00136986"), Decimal(24), 4 * Decimal("5.0933")
    lost = hours * rate * 4 * (hours / 2 + RESUME_H) * spot
    discount = (4 * Decimal("21.957642") - spot) * hours
    assert (figures["instances"], figures["rate_per_hour"], figures["spot_hourly_usd"]) == (
        4,
        0.00136986,
        20.3732,
    )
    assert (
        (figures["lost_usd"], figures["discount_usd"], figures["net_usd"])
        == (
            cents(lost),
            cents(discount),
            cents(discount - lost),
        )
        == (32.37, 1618.98, 1586.6)
    )
