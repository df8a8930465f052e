"""Fault injection: one region throttled or failing behind a proxy in front of moto; secrets stay out."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.collectors.aws.collector import AwsCollector
from gpu_audit.collectors.aws.sagemaker import LISTS
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap

# The values conftest sets in the environment (conftest modules are not imported by name).
ACCESS_KEY = "AKIAGPUAUDITTEST0001"
SECRET_KEY = "gpu-audit-test-secret-never-printed"
SESSION_TOKEN = "gpu-audit-test-session-token-never-printed"
REGIONS = ("eu-west-1", "us-east-1", "us-west-2")


def fleet_in_three_regions(fleet: Any) -> dict[str, str]:
    ids = {}
    for region in REGIONS:
        (ids[region],) = fleet.launch(region, "g5.xlarge", tags={"workload": "training"})
    fleet.utilization("us-east-1", ids["us-east-1"], [1, 2, 1])
    return ids


@pytest.mark.parametrize(
    ("status", "code"),
    [(503, "RequestLimitExceeded"), (500, "InternalError"), (403, "AuthFailure")],
)
def test_a_failing_region_is_a_gap_and_the_rest_completes(
    aws_fleet: Any, faulty_proxy: Any, monkeypatch: pytest.MonkeyPatch, status: int, code: str
) -> None:
    ids = fleet_in_three_regions(aws_fleet)
    faulty_proxy.failing["eu-west-1"] = (status, code)
    monkeypatch.setenv("AWS_ENDPOINT_URL", faulty_proxy.url)
    config = AwsSettings(regions=REGIONS, max_attempts=2)

    items = list(AwsCollector(config).collect())

    gaps = [i for i in items if isinstance(i, CoverageGap)]
    resources = {i.id: i for i in items if isinstance(i, Resource)}
    assert [(g.scope, g.account, g.region, g.error) for g in gaps] == [
        ("account/region", "123456789012", "eu-west-1", code)
    ]
    assert set(resources) == {ids["us-east-1"], ids["us-west-2"]}
    assert resources[ids["us-east-1"]].utilization.gpu_p95 == 2
    # Throttling and 5xx are retried (adaptive mode) up to max_attempts; 403 is not. EC2's
    # instances and capacity reservations, SageMaker's lists and its finished runs (`--since`),
    # asked at once so each is refused, all fail: one gap, naming both services.
    assert faulty_proxy.refused == (1 if status == 403 else 2) * (2 + len(LISTS) + 1)
    assert "; sagemaker: " in gaps[0].message
    # The proxy echoed the access key id in its error message: the gap must not carry it.
    assert ACCESS_KEY not in gaps[0].message and "[redacted]" in gaps[0].message


def test_a_sagemaker_failure_keeps_ec2_and_adds_a_gap(
    aws_fleet: Any, faulty_proxy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = fleet_in_three_regions(aws_fleet)
    faulty_proxy.failing["us-west-2"] = (403, "AccessDeniedException")
    faulty_proxy.services = {"sagemaker"}
    monkeypatch.setenv("AWS_ENDPOINT_URL", faulty_proxy.url)

    items = list(AwsCollector(AwsSettings(regions=REGIONS, max_attempts=2)).collect())

    resources = {i.id for i in items if isinstance(i, Resource)}
    assert resources == set(ids.values())
    gaps = [i for i in items if isinstance(i, CoverageGap)]
    assert [(g.region, g.error) for g in gaps] == [("us-west-2", "AccessDeniedException")]
    assert gaps[0].message.startswith("sagemaker: ")


def test_a_cloudwatch_failure_keeps_the_instances_and_adds_a_gap(
    aws_fleet: Any, faulty_proxy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = fleet_in_three_regions(aws_fleet)
    faulty_proxy.failing["us-east-1"] = (500, "InternalFailure")
    faulty_proxy.services = {"monitoring"}
    monkeypatch.setenv("AWS_ENDPOINT_URL", faulty_proxy.url)
    config = AwsSettings(regions=REGIONS, max_attempts=2)

    items = list(AwsCollector(config).collect())

    gaps = [i for i in items if isinstance(i, CoverageGap)]
    resources = {i.id: i for i in items if isinstance(i, Resource)}
    assert set(resources) == set(ids.values())
    assert resources[ids["us-east-1"]].utilization.gpu_p95 is None  # missing, not zero
    assert [(g.region, g.error) for g in gaps] == [("us-east-1", "InternalFailure")]
    assert "GetMetricData" in gaps[0].message


def test_cli_exits_3_and_prints_no_credentials(
    aws_fleet: Any,
    faulty_proxy: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ids = fleet_in_three_regions(aws_fleet)
    faulty_proxy.failing["us-west-2"] = (503, "Throttling")
    monkeypatch.setenv("AWS_ENDPOINT_URL", faulty_proxy.url)
    config = tmp_path / ".gpu-audit.yaml"
    config.write_text("aws:\n  max_attempts: 2\n  window_hours: 12\n")
    caplog.set_level(logging.INFO)  # every logger at INFO, ours at DEBUG (set last: handler level)
    caplog.set_level(logging.DEBUG, logger="gpu_audit")

    args = ["scan", "--provider", "aws", "--config", str(config), "--format", "json"]
    for region in REGIONS:
        args += ["--region", region]
    result = CliRunner().invoke(main, args)

    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert {r["id"] for r in report["resources"]} == {ids["eu-west-1"], ids["us-east-1"]}
    assert [(g["region"], g["error"]) for g in report["coverage_gaps"]] == [
        ("us-west-2", "Throttling")
    ]
    assert "incomplete: aws 123456789012/us-west-2: Throttling" in result.stderr
    assert {"us-east-1", "eu-west-1"} <= set(report["scope"]["regions"])
    everything = result.output + result.stderr + "\n".join(r.getMessage() for r in caplog.records)
    assert any(r.name.startswith("gpu_audit") for r in caplog.records)
    for secret in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN):
        assert secret not in everything
