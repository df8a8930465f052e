"""The AWS collector against a moto server on loopback, through boto3's real HTTP stack."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gpu_audit.catalog import instance_spec
from gpu_audit.collectors.aws.collector import AwsCollector
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.collectors.interface import Progress
from gpu_audit.core.resource import Capacity, Resource, State, Workload
from gpu_audit.core.results import CoverageGap
from gpu_audit.errors import CollectorError

Fleet = Any  # conftest.Fleet; conftest modules are not imported by name
ACCESS_KEY = "AKIAGPUAUDITTEST0001"  # conftest.ACCESS_KEY
REGIONS = ("eu-west-1", "us-east-1", "us-west-2")
READS = ("Describe", "List", "Get")


def settings(**aws: Any) -> AwsSettings:
    return replace(AwsSettings(regions=REGIONS, max_attempts=2), **aws)


def scan(
    config: AwsSettings, hooks: tuple[tuple[str, Any], ...] = ()
) -> tuple[dict[str, Resource], list[CoverageGap], AwsCollector, list[Progress]]:
    ticks: list[Progress] = []
    collector = AwsCollector(config, ticks.append, event_hooks=hooks)
    items = list(collector.collect())
    resources = {i.id: i for i in items if isinstance(i, Resource)}
    assert len(resources) == len([i for i in items if isinstance(i, Resource)])
    gaps = [i for i in items if isinstance(i, CoverageGap)]
    return resources, gaps, collector, ticks


def build_fleet(fleet: Fleet) -> dict[str, str]:
    """A small fleet over three regions; returns role → instance id."""
    fleet.bucket("train-data-eu", "eu-central-1")
    fleet.bucket("train-data-us", "us-east-1")
    (trainer,) = fleet.launch(
        "us-east-1",
        "p4d.24xlarge",
        tags={
            "Name": "llm-pretrain",
            "workload": "Training",
            "owner": "ml-platform",
            "data-bucket": "s3://train-data-eu/shards, train-data-us",
        },
    )
    (server,) = fleet.launch(
        "us-east-1",
        "g5.xlarge",
        spot=True,
        tags={"workload": "inference", "data-bucket": "no-such-bucket"},
    )
    (plain,) = fleet.launch("us-east-1", "t3.micro", tags={"workload": "training"})
    (legacy,) = fleet.launch("eu-west-1", "p3.2xlarge", stopped=True)
    (notebook,) = fleet.launch("us-west-2", "g6.xlarge", tags={"workload": "jupyter"})
    fleet.utilization("us-east-1", trainer, [80, 90, 85, 95, 70, 88])
    fleet.utilization("us-east-1", server, [0, 1, 0, 2, 0, 0])
    return {
        "trainer": trainer,
        "server": server,
        "plain": plain,
        "legacy": legacy,
        "notebook": notebook,
    }


def test_maps_every_gpu_instance_across_regions(aws_fleet: Fleet) -> None:
    ids = build_fleet(aws_fleet)
    before = datetime.now(UTC) - timedelta(minutes=5)
    resources, gaps, collector, ticks = scan(settings())

    assert gaps == []
    assert set(resources) == {ids["trainer"], ids["server"], ids["legacy"], ids["notebook"]}

    trainer = resources[ids["trainer"]]
    assert (trainer.provider, trainer.account, trainer.region) == (
        "aws",
        "123456789012",
        "us-east-1",
    )
    assert trainer.zone and trainer.zone.startswith("us-east-1")
    assert trainer.name == "llm-pretrain"
    assert trainer.state is State.RUNNING
    assert trainer.capacity is Capacity.ON_DEMAND
    assert trainer.workload is Workload.TRAINING
    assert (trainer.gpu.model, trainer.gpu.count) == ("A100-40GB", 8)
    assert trainer.tags["owner"] == "ml-platform"
    assert trainer.launched_at is not None and trainer.launched_at.tzinfo is not None
    assert trainer.launched_at >= before and trainer.launched_at.utcoffset() == timedelta(0)
    assert trainer.utilization.gpu_avg == pytest.approx(84.67, abs=0.01)
    assert trainer.utilization.gpu_p95 == 95
    assert trainer.utilization.window_hours == 24
    assert trainer.data.uris == ("s3://train-data-eu/shards", "s3://train-data-us")
    assert trainer.data.regions == ("eu-central-1", "us-east-1")
    assert trainer.source.note is None
    assert trainer.location == f"aws/123456789012/us-east-1/{ids['trainer']}"

    server = resources[ids["server"]]
    assert server.capacity is Capacity.SPOT
    assert server.workload is Workload.INFERENCE
    assert (server.gpu.model, server.gpu.count) == ("A10G", 1)
    assert server.utilization.gpu_avg == pytest.approx(0.5)
    assert server.utilization.gpu_p95 == 2
    assert server.data.uris == ("s3://no-such-bucket",)
    assert server.data.regions is None  # missing, with the reason in the note
    assert server.source.note and "no-such-bucket (NoSuchBucket)" in server.source.note

    # A type moto's catalogue lacks: no tags, stopped, no metrics — every field says "missing".
    legacy = resources[ids["legacy"]]
    assert (legacy.region, legacy.instance_type) == ("eu-west-1", "p3.2xlarge")
    assert legacy.state is State.STOPPED
    assert legacy.capacity is Capacity.ON_DEMAND
    assert legacy.name is None and legacy.tags == {}
    assert legacy.workload is Workload.UNKNOWN
    assert legacy.utilization.gpu_avg is None and legacy.utilization.gpu_p95 is None
    assert legacy.data.uris is None and legacy.data.regions is None
    spec = instance_spec("p3.2xlarge")
    if spec is not None:
        assert (legacy.gpu.model, legacy.gpu.count) == (spec.gpu_model, spec.gpu_count)
    else:  # neither catalog nor moto knows it: reported as GPU capacity with the spec missing
        assert legacy.gpu.model is None and legacy.gpu.count is None
        assert legacy.source.note and "GPU spec unknown for p3.2xlarge" in legacy.source.note

    # An unrecognised workload tag is "unknown"; the GPU comes from the catalog or GpuInfo.
    notebook = resources[ids["notebook"]]
    assert notebook.workload is Workload.UNKNOWN
    assert (notebook.gpu.model, notebook.gpu.count) == ("L4", 1)
    assert notebook.gpu.memory_gib is not None and 22 <= notebook.gpu.memory_gib <= 24

    assert collector.scope().accounts == ("123456789012",)
    assert collector.scope().regions == REGIONS
    assert ticks[-1] == Progress(done=3, total=3, found=4)


def test_only_describe_list_get_calls(aws_fleet: Fleet) -> None:
    build_fleet(aws_fleet)
    calls: list[str] = []

    def record(model: Any, **_: Any) -> None:
        calls.append(f"{model.service_model.service_name}:{model.name}")

    resources, gaps, _, _ = scan(settings(), hooks=(("before-call", record),))
    assert len(resources) == 4 and gaps == []
    operations = {c.split(":")[1] for c in calls}
    assert {"DescribeInstances", "GetMetricData", "GetBucketLocation"} <= operations
    assert {"Search", "ListNotebookInstances", "ListClusters"} <= operations  # SageMaker too
    # SageMaker's Search is a read (sagemaker:Search); everything else is Describe/List/Get.
    read_only = [op for op in operations if op == "Search" or op.startswith(READS)]
    assert sorted(read_only) == sorted(operations), operations


def test_every_enabled_region_when_none_given(aws_fleet: Fleet) -> None:
    (one,) = aws_fleet.launch("ap-southeast-2", "g4dn.xlarge")
    # EC2 only: SageMaker in ~30 regions of moto would triple this test's time for no new fact.
    resources, gaps, collector, ticks = scan(settings(regions=(), services=("ec2",)))
    assert gaps == []
    assert resources[one].region == "ap-southeast-2"
    assert len(collector.scope().regions) > 10
    assert ticks[-1].done == ticks[-1].total == len(collector.scope().regions)


def test_metrics_are_batched_500_queries_per_call(aws_fleet: Fleet) -> None:
    ids = aws_fleet.launch("us-east-1", "g4dn.xlarge", count=510)
    aws_fleet.utilization("us-east-1", ids[-1], [3, 4])
    calls: list[int] = []

    def record(model: Any, params: dict[str, Any], **_: Any) -> None:
        if model.name == "GetMetricData":
            calls.append(len(params["MetricDataQueries"]))

    resources, gaps, _, _ = scan(
        settings(regions=("us-east-1",)), hooks=(("before-parameter-build", record),)
    )
    assert gaps == [] and len(resources) == 510
    assert sorted(calls) == [10, 500]
    assert resources[ids[-1]].utilization.gpu_avg == 3.5
    assert resources[ids[0]].utilization.gpu_avg is None


def test_accounts_from_a_role_template(aws_fleet: Fleet) -> None:
    template = "arn:aws:iam::{account}:role/gpu-audit"
    first = aws_fleet.assume(template.format(account="111111111111"))
    second = aws_fleet.assume(template.format(account="222222222222"))
    (a,) = first.launch("us-east-1", "g5.xlarge")
    (b,) = second.launch("eu-west-1", "p4d.24xlarge", spot=True)
    calls: list[str] = []

    def record(model: Any, **_: Any) -> None:
        calls.append(model.name)

    resources, gaps, collector, _ = scan(
        settings(role_arns=(template,), accounts=("111111111111", "222222222222")),
        hooks=(("before-call", record),),
    )
    assert gaps == []
    assert resources[a].account == "111111111111"
    assert (resources[b].account, resources[b].capacity) == ("222222222222", Capacity.SPOT)
    assert collector.scope().accounts == ("111111111111", "222222222222")
    # sts:AssumeRole is the one call that is not Describe/List/Get; it changes nothing.
    assert {c for c in calls if not c.startswith(READS)} == {"AssumeRole", "Search"}


def test_accounts_from_organizations(aws_fleet: Fleet) -> None:
    org = aws_fleet.client("organizations", "us-east-1")
    org.create_organization(FeatureSet="ALL")
    status = org.create_account(AccountName="research", Email="research@example.com")
    member = status["CreateAccountStatus"]["AccountId"]
    builder = aws_fleet.assume(f"arn:aws:iam::{member}:role/audit")
    (one,) = builder.launch("us-east-1", "g5.xlarge")
    resources, gaps, collector, _ = scan(settings(organization_role="audit"))
    assert gaps == []
    assert resources[one].account == member
    assert member in collector.scope().accounts
    assert "123456789012" in collector.scope().accounts  # the management account is scanned too


def test_no_credentials_is_a_collector_error(
    aws_fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    with pytest.raises(CollectorError, match="no credentials"):
        list(AwsCollector(settings()).collect())


def test_missing_profile_is_an_account_gap(aws_fleet: Fleet) -> None:
    resources, gaps, _, _ = scan(settings(profiles=("nowhere",)))
    assert resources == {}
    assert [(g.scope, g.error) for g in gaps] == [("account", "ProfileNotFound")]
    assert ACCESS_KEY not in gaps[0].message


SCAN_PROBE = """
import atexit, json, sys
atexit.register(lambda: print("MODULES=" + json.dumps(sorted(sys.modules)), file=sys.stderr))
from gpu_audit.cli.main import main
sys.argv = ["gpu-audit", "scan", "--provider", "aws", "--region", "us-east-1", "--format", "json"]
main()
"""


def test_a_cloud_scan_imports_no_job_parser_nor_the_inventory_reader(aws_fleet: Any) -> None:
    """Start-up is part of every scan's wall time: what reads job files or inventories stays out."""
    (instance,) = aws_fleet.launch("us-east-1", "g5.xlarge", tags={"workload": "training"})
    run = subprocess.run(
        [sys.executable, "-c", SCAN_PROBE], capture_output=True, text=True, timeout=120
    )
    assert run.returncode in (0, 1), run.stderr
    assert instance in {r["id"] for r in json.loads(run.stdout)["resources"]}
    line = next(ln for ln in run.stderr.splitlines() if ln.startswith("MODULES="))
    modules = json.loads(line[len("MODULES=") :])
    assert "gpu_audit.collectors.aws.scan" in modules  # the probe really scanned
    loaded = [m for m in modules if m.split(".")[:2] in (["gpu_audit", "jobs"],)]
    loaded += [m for m in modules if m == "gpu_audit.collectors.inventory"]
    assert not loaded, f"gpu-audit scan --provider aws imported {loaded}"
