"""The AWS collector's lookups and pure helpers: GpuInfo fallback (against moto), metrics maths."""

from __future__ import annotations

from typing import Any

import pytest

from gpu_audit.collectors.aws.collector import AwsCollector
from gpu_audit.collectors.aws.lookups import InstanceTypes, bucket_name, bucket_uri, gpu_from_info
from gpu_audit.collectors.aws.metrics import metric_period, percentile, summarize
from gpu_audit.collectors.aws.scan import error_code, workload_of
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.resource import Gpu, Utilization, Workload


def test_describe_instance_types_fallback_against_moto(aws_fleet: Any) -> None:
    calls: list[str] = []
    ec2 = aws_fleet.client("ec2", "us-east-1")
    ec2.meta.events.register("before-call", lambda model, **_: calls.append(model.name))
    found = InstanceTypes().describe(ec2, ["g7.2xlarge", "p3.2xlarge", "t3.micro", "g6f.large"])

    g7 = found["g7.2xlarge"].gpu
    assert g7 is not None and (g7.count, g7.memory_gib) == (1, 32.0)
    assert g7.model == "RTX PRO 4500" or g7.model == "RTX-PRO-4500"
    fractional = found["g6f.large"].gpu
    assert fractional is not None and (fractional.model, fractional.count) == ("L4", 1)
    assert found["t3.micro"].gpu is None  # not GPU capacity
    # moto does not know p3.2xlarge: the whole call fails, each type is asked alone, and the
    # P family still makes it GPU capacity, with the spec missing and a note saying why.
    assert found["p3.2xlarge"].gpu == Gpu()
    assert (
        found["p3.2xlarge"].note
    ) == "GPU spec unknown for p3.2xlarge (DescribeInstanceTypes: InvalidInstanceType)"
    assert calls == ["DescribeInstanceTypes"] * 5


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        (
            {"Gpus": [{"Name": "A100", "Count": 8, "MemoryInfo": {"SizeInMiB": 81920}}]},
            Gpu("A100-80GB", 8, 80.0),
        ),
        (
            {"Gpus": [{"Name": "A100", "Count": 8, "MemoryInfo": {"SizeInMiB": 40960}}]},
            Gpu("A100-40GB", 8, 40.0),
        ),
        (
            {"Gpus": [{"Name": "A10G", "Count": 4, "MemoryInfo": {"SizeInMiB": 22888}}]},
            Gpu("A10G", 4, 22.35),
        ),
        ({"Gpus": [{"Name": "V100", "Count": 1}]}, Gpu("V100", 1, None)),
        ({}, None),
    ],
)
def test_gpu_from_gpu_info(info: dict[str, Any], expected: Gpu | None) -> None:
    assert gpu_from_info(info) == expected


def test_metrics_maths() -> None:
    assert metric_period(24) == 3600
    assert metric_period(1) == 300
    assert metric_period(0.1) == 60
    assert metric_period(24 * 30) == 3600
    assert percentile([5, 1, 3, 2, 4], 0.95) == 5
    assert percentile(list(range(1, 101)), 0.95) == 95
    assert summarize([], 24) == Utilization()
    assert summarize([0, 0, 1, 3], 12) == Utilization(gpu_avg=1.0, gpu_p95=3, window_hours=12)


def test_small_helpers() -> None:
    assert workload_of(" Training ") is Workload.TRAINING
    assert workload_of("batch") is Workload.UNKNOWN
    assert workload_of(None) is Workload.UNKNOWN
    assert bucket_name("s3://data/x/y") == "data" and bucket_name(" data ") == "data"
    assert bucket_uri("data") == "s3://data" and bucket_uri("S3://Data/x") == "S3://Data/x"
    assert error_code(ValueError("x")) == "ValueError"
    collector = AwsCollector(AwsSettings())
    collector._secrets.add("hunter2-secret")
    text = collector.redact("key AKIAABCDEFGHIJKLMNOP and hunter2-secret in a message")
    assert text == "key [redacted] and [redacted] in a message"
