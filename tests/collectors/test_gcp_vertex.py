"""Vertex AI in the GCP scan: the real AuthorizedSession against the loopback REST fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from gcp_server import FakeGcp, serve

from gpu_audit.cli.main import main
from gpu_audit.collectors.gcp.collector import GcpCollector
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.core.resource import Capacity, Kind, Resource, State, Workload
from gpu_audit.core.results import CoverageGap

PROJECT = "ml-vertex"
ENVS = (
    "GPU_AUDIT_GCE_ENDPOINT",
    "GPU_AUDIT_GCP_MONITORING_ENDPOINT",
    "GPU_AUDIT_GCS_ENDPOINT",
    "GPU_AUDIT_VERTEX_ENDPOINT",
)
PARENT = f"projects/{PROJECT}/locations"


def _pool(machine: str, accelerator: str | None = None, count: int = 0, replicas: int = 1) -> Any:
    spec: dict[str, Any] = {"machineType": machine}
    if accelerator:
        spec |= {"acceleratorType": accelerator, "acceleratorCount": count}
    return {"machineSpec": spec, "replicaCount": str(replicas)}


def _job(
    location: str,
    number: int,
    name: str,
    pools: list[Any],
    state: str = "JOB_STATE_RUNNING",
    **spec: Any,
) -> dict[str, Any]:
    return {
        "name": f"{PARENT}/{location}/customJobs/{number}",
        "displayName": name,
        "state": state,
        "createTime": "2026-11-20T01:00:00Z",
        "startTime": "2026-11-20T01:05:00.123456Z",
        "labels": {"team": "nlp"},
        "jobSpec": {"workerPoolSpecs": pools, **spec},
    }


def _series(
    metric: str, resource: str, label: str, key: str, values: list[float]
) -> dict[str, Any]:
    return {
        "metric": {"type": metric},
        "resource": {"type": resource, "labels": {label: key}},
        "points": [{"value": {"doubleValue": v}} for v in values],
    }


def scenario() -> FakeGcp:
    central = "us-central1"
    fake = FakeGcp()
    fake.vertex[PROJECT] = {
        central: {
            "customJobs": [
                _job(
                    central,
                    1,
                    "bert-spot",
                    [
                        _pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1, replicas=1),
                        _pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1, replicas=3),
                    ],
                    scheduling={"strategy": "SPOT", "timeout": "86400s"},
                ),
                _job(central, 2, "n1-t4", [_pool("n1-standard-8", "NVIDIA_TESLA_T4", 2)]),
                _job(central, 3, "cpu-etl", [_pool("n1-standard-8")]),
                _job(central, 4, "finished", [_pool("g2-standard-4")], "JOB_STATE_SUCCEEDED"),
                _job(central, 5, "on-pool", [_pool("g2-standard-4")], persistentResourceId="p1"),
            ],
            "hyperparameterTuningJobs": [
                {
                    "name": f"{PARENT}/{central}/hyperparameterTuningJobs/9",
                    "displayName": "sweep",
                    "state": "JOB_STATE_RUNNING",
                    "maxTrialCount": 500,
                    "parallelTrialCount": 4,
                    "studySpec": {"algorithm": "RANDOM_SEARCH"},
                    "trialJobSpec": {"workerPoolSpecs": [_pool("g2-standard-8")]},
                    "createTime": "2026-11-21T00:00:00Z",
                }
            ],
        },
        "europe-west4": {
            "endpoints": [
                {
                    "name": f"{PARENT}/europe-west4/endpoints/77",
                    "displayName": "chat",
                    "labels": {"owner": "ana"},
                    "createTime": "2026-10-01T00:00:00Z",
                    "deployedModels": [
                        {
                            "id": "1",
                            "dedicatedResources": {
                                "machineSpec": {
                                    "machineType": "g2-standard-12",
                                    "acceleratorType": "NVIDIA_L4",
                                    "acceleratorCount": 1,
                                },
                                "minReplicaCount": 2,
                                "maxReplicaCount": 5,
                            },
                        },
                        {"id": "2", "automaticResources": {"minReplicaCount": 1}},
                    ],
                },
                {
                    "name": f"{PARENT}/europe-west4/endpoints/78",
                    "displayName": "cpu-api",
                    "deployedModels": [
                        {
                            "id": "3",
                            "dedicatedResources": {
                                "machineSpec": {"machineType": "n1-standard-4"},
                                "minReplicaCount": 1,
                            },
                        }
                    ],
                },
            ],
            "persistentResources": [
                {
                    "name": f"{PARENT}/europe-west4/persistentResources/p1",
                    "displayName": "shared-pool",
                    "state": "RUNNING",
                    "labels": {"workload": "training"},
                    "resourcePools": [{"id": "gpus", **_pool("a3-highgpu-8g", replicas=2)}],
                }
            ],
        },
        "asia-east1": {"customJobs": []},
        "us-east4": {
            "customJobs": [
                _job("us-east4", n, f"l4-{n}", [_pool("g2-standard-4")]) for n in range(3)
            ]
        },
    }
    fake.series[PROJECT] = [
        _series(
            "ml.googleapis.com/training/accelerator/utilization",
            "cloudml_job",
            "job_id",
            "1",
            [0.9, 0.8, 0.7],
        ),
        _series(
            "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle",
            "aiplatform.googleapis.com/Endpoint",
            "endpoint_id",
            "77",
            [0.02, 0.05, 0.01],
        ),
    ]
    fake.vertex_forbidden.add((PROJECT, "asia-east1"))
    fake.vertex_unavailable[(PROJECT, "us-east4")] = 1
    return fake


@pytest.fixture
def fake() -> FakeGcp:
    return scenario()


@pytest.fixture
def endpoint(fake: FakeGcp, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with serve(fake) as url:
        for env in ENVS:
            monkeypatch.setenv(env, url)
        yield url


def collect(**gcp: Any) -> tuple[dict[str, Resource], list[CoverageGap]]:
    settings = GcpSettings(projects=(PROJECT,), timeout=5.0, services=("vertex",), **gcp)
    items = list(GcpCollector(settings).collect())
    return (
        {r.id: r for r in items if isinstance(r, Resource)},
        [g for g in items if isinstance(g, CoverageGap)],
    )


def test_every_running_gpu_resource_in_every_location(fake: FakeGcp, endpoint: str) -> None:
    resources, gaps = collect()
    assert [(g.scope, g.error, g.region) for g in gaps] == [
        (f"project {PROJECT} vertex location asia-east1", "HTTP 403", "asia-east1")
    ]
    names = {r.name for r in resources.values()}
    assert names == {"bert-spot", "n1-t4", "sweep", "chat", "shared-pool", "l4-0", "l4-1", "l4-2"}
    assert {r.service for r in resources.values()} == {"vertex"}

    bert = resources[f"{PARENT}/us-central1/customJobs/1"]
    assert (bert.kind, bert.state, bert.workload) == (Kind.JOB, State.RUNNING, Workload.TRAINING)
    assert (bert.instance_type, bert.gpu.model, bert.gpu.count) == ("a2-highgpu-1g", "A100-40GB", 4)
    assert bert.capacity is Capacity.SPOT
    assert bert.limits.max_runtime_hours == 24
    assert bert.tags == {"team": "nlp"}
    assert (bert.account, bert.region) == (PROJECT, "us-central1")
    assert bert.launched_at is not None and bert.launched_at.minute == 5
    # Vertex's accelerator metrics are fractions: read as percentages.
    assert (bert.utilization.gpu_avg, bert.utilization.gpu_p95) == (80, 90)

    t4 = resources[f"{PARENT}/us-central1/customJobs/2"]
    assert (t4.gpu.model, t4.gpu.count, t4.capacity) == ("T4", 2, Capacity.ON_DEMAND)
    assert t4.limits.max_runtime_hours is None  # no timeout: missing

    sweep = resources[f"{PARENT}/us-central1/hyperparameterTuningJobs/9"]
    assert (sweep.gpu.model, sweep.gpu.count) == ("L4", 4)  # one L4 × 4 parallel trials
    assert (sweep.hpo.max_trials, sweep.hpo.early_stopping) == (500, False)

    chat = resources[f"{PARENT}/europe-west4/endpoints/77"]
    assert (chat.kind, chat.workload, chat.gpu.model, chat.gpu.count) == (
        Kind.INSTANCE,
        Workload.INFERENCE,
        "L4",
        2,
    )
    assert (chat.utilization.gpu_p95, chat.utilization.window_hours) == (5, 24)
    assert t4.utilization.gpu_p95 is None  # no series: missing, not zero
    pool = resources[f"{PARENT}/europe-west4/persistentResources/p1"]
    assert (pool.gpu.model, pool.gpu.count, pool.workload) == ("H100", 16, Workload.TRAINING)
    # us-east4 answered 503 once (retried), then three jobs over two pages.
    east = [r for r in fake.requests if r.path.endswith("us-east4/customJobs")]
    running = [r for r in east if r.query["filter"] == ['state="JOB_STATE_RUNNING"']]
    assert len(running) == 3
    assert [r.query["filter"][0][:12] for r in east if r not in running] == ["update_time>"]


def test_only_reads_and_the_call_count(fake: FakeGcp, endpoint: str) -> None:
    collect()
    vertex = [r for r in fake.requests if r.path.startswith("/v1/")]
    assert {r.method for r in vertex} == {"GET"}
    # 1 locations.list; 4 lists in each of 3 readable locations, a second page of custom jobs
    # in us-central1 and us-east4, the retried 503; asia-east1 stops at its first 403. Then
    # the period's tuning jobs and custom jobs (`--since`) in each readable location: no job
    # here has an `updateTime`, so one empty page each.
    assert len(vertex) == 1 + 4 * 3 + 2 + 1 + 1 + 2 * 3


def test_named_locations_skip_the_listing(fake: FakeGcp, endpoint: str) -> None:
    resources, gaps = collect(vertex_locations=("europe-west4",))
    assert gaps == [] and {r.name for r in resources.values()} == {"chat", "shared-pool"}
    assert not any(r.path.endswith("/locations") for r in fake.requests)


def test_cli_exits_3_and_prices_at_vertex_rates(endpoint: str, tmp_path: Any) -> None:
    args = ["scan", "--provider", "gcp", "--project", PROJECT, "--service", "vertex"]
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    found = {r["id"]: r for r in report["resources"]}
    chat = found[f"{PARENT}/europe-west4/endpoints/77"]
    # two g2-standard-12 replicas at Vertex's rate (Compute Engine's × 1.15)
    assert chat["price"]["on_demand_hourly_usd"] == pytest.approx(2 * 1.0509 * 1.15, abs=0.01)
    fired = {(f["rule_id"], report["resources"][f["resource"]]["id"]) for f in report["findings"]}
    assert ("idle-gpu", f"{PARENT}/europe-west4/endpoints/77") in fired
    assert ("hpo-trial-cap", f"{PARENT}/us-central1/hyperparameterTuningJobs/9") in fired
    assert ("spot-for-training", f"{PARENT}/us-central1/customJobs/2") in fired
    assert ("spot-for-training", f"{PARENT}/us-central1/customJobs/1") not in fired
