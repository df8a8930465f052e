"""The GCP collector, driving the real google-cloud-compute client against a GCE-shaped loopback server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from gcp_fixtures import (
    A2_VALUES,
    A3_IDLE,
    A3_SPIKE,
    FLAKY,
    FORBIDDEN,
    GONE,
    PROD,
    RESEARCH,
    scenario,
)
from gcp_server import FakeGcp, serve

from gpu_audit.collectors.gcp.collector import GcpCollector
from gpu_audit.collectors.gcp.connect import (
    GCE_ENDPOINT_ENV,
    GCS_ENDPOINT_ENV,
    MONITORING_ENDPOINT_ENV,
    VERTEX_ENDPOINT_ENV,
)
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.gcp.universe import RESOURCE_MANAGER_ENDPOINT_ENV
from gpu_audit.collectors.interface import Progress, ProviderUnavailable
from gpu_audit.core.resource import Capacity, Resource, State, Workload
from gpu_audit.core.results import CoverageGap
from gpu_audit.errors import CollectorError

ENDPOINT_ENVS = (GCE_ENDPOINT_ENV, MONITORING_ENDPOINT_ENV, GCS_ENDPOINT_ENV, VERTEX_ENDPOINT_ENV)


@pytest.fixture
def fake() -> FakeGcp:
    return scenario()


@pytest.fixture
def endpoint(fake: FakeGcp, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with serve(fake) as url:
        for env in ENDPOINT_ENVS:
            monkeypatch.setenv(env, url)
        yield url


def settings(*projects: str, **gcp: object) -> GcpSettings:
    return replace(GcpSettings(projects=projects, timeout=5.0), **gcp)  # type: ignore[arg-type]


def collect(*projects: str, **gcp: object) -> list[Resource | CoverageGap]:
    return list(GcpCollector(settings(*projects, **gcp)).collect())


def by_name(items: list[Resource | CoverageGap]) -> dict[str, Resource]:
    return {r.name or r.id: r for r in items if isinstance(r, Resource)}


@pytest.fixture
def prod(endpoint: str) -> dict[str, Resource]:
    return by_name(collect(PROD))


# --- enumeration ---------------------------------------------------------------------------------


def test_every_page_is_read_and_a_zone_on_several_pages_accumulates(
    fake: FakeGcp, endpoint: str
) -> None:
    items = collect(PROD)
    found = by_name(items)
    # us-central1-a holds three VMs; two per page spread it over two pages.
    assert {"serve-t4-1", "train-a2-spot", "train-a3-reserved"} <= set(found)
    assert set(found) == {
        "serve-t4-1",
        "train-a2-spot",
        "train-a3-reserved",
        "notebook-g2",
        "eval-a2-ultra",
        "serve-l4-locked",
    }
    assert fake.pages_served(PROD) == 4  # 7 VMs, 2 a page
    assert not [i for i in items if isinstance(i, CoverageGap)]


def test_vm_without_gpus_is_not_gpu_capacity(prod: dict[str, Resource]) -> None:
    assert "web-e2" not in prod


def test_identity_and_location(prod: dict[str, Resource]) -> None:
    t4 = prod["serve-t4-1"]
    assert t4.kind == "instance"
    assert t4.provider == "gcp"
    assert t4.id == f"projects/{PROD}/zones/us-central1-a/instances/serve-t4-1"
    assert (t4.account, t4.region, t4.zone) == (PROD, "us-central1", "us-central1-a")
    assert t4.instance_type == "n1-standard-8"
    assert prod["notebook-g2"].region == "europe-west4"


def test_t4_attached_to_n1(prod: dict[str, Resource]) -> None:
    gpu = prod["serve-t4-1"].gpu
    assert (gpu.model, gpu.count, gpu.memory_gib) == ("T4", 1, 16)


@pytest.mark.parametrize(
    ("name", "model", "count", "memory"),
    [
        ("train-a2-spot", "A100-40GB", 1, 40),  # listed in guestAccelerators
        ("eval-a2-ultra", "A100-80GB", 1, 80),  # listed in guestAccelerators
        ("train-a3-reserved", "H100", 8, 80),  # from the catalog: a3-highgpu-8g
        ("notebook-g2", "L4", 1, 24),  # from the catalog: g2-standard-4
    ],
)
def test_built_in_gpus(
    prod: dict[str, Resource], name: str, model: str, count: int, memory: float
) -> None:
    gpu = prod[name].gpu
    assert (gpu.model, gpu.count, gpu.memory_gib) == (model, count, memory)


@pytest.mark.parametrize(
    ("name", "capacity"),
    [
        ("serve-t4-1", Capacity.ON_DEMAND),  # provisioningModel STANDARD
        ("train-a2-spot", Capacity.SPOT),  # provisioningModel SPOT
        ("notebook-g2", Capacity.SPOT),  # legacy preemptible: true
        ("train-a3-reserved", Capacity.RESERVED),  # RESERVATION_BOUND
    ],
)
def test_capacity(prod: dict[str, Resource], name: str, capacity: Capacity) -> None:
    assert prod[name].capacity is capacity


@pytest.mark.parametrize(
    ("name", "state"),
    [
        ("serve-t4-1", State.RUNNING),
        ("notebook-g2", State.STOPPED),  # TERMINATED
        ("serve-l4-locked", State.STOPPED),  # SUSPENDED
        ("eval-a2-ultra", State.PENDING),  # STAGING
    ],
)
def test_state(prod: dict[str, Resource], name: str, state: State) -> None:
    assert prod[name].state is state


def test_labels_are_tags_and_name_the_workload(prod: dict[str, Resource]) -> None:
    t4 = prod["serve-t4-1"]
    assert dict(t4.tags) == {
        "workload": "inference",
        "team": "search",
        "data-bucket": "ml-datasets-us",
    }
    assert t4.workload is Workload.INFERENCE
    assert prod["train-a3-reserved"].workload is Workload.TRAINING  # label value "Training"
    assert prod["notebook-g2"].workload is Workload.NOTEBOOK
    assert prod["eval-a2-ultra"].workload is Workload.UNKNOWN  # no label
    assert prod["serve-l4-locked"].workload is Workload.UNKNOWN  # "batch-scoring"


def test_workload_label_is_configurable(endpoint: str) -> None:
    found = by_name(collect(PROD, workload_label="team"))
    assert found["serve-t4-1"].workload is Workload.UNKNOWN  # team=search


def test_launch_time_is_last_start_else_creation_in_utc(prod: dict[str, Resource]) -> None:
    assert prod["serve-t4-1"].launched_at == datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
    created = prod["train-a3-reserved"].launched_at  # never restarted: no lastStartTimestamp
    assert created == datetime(2025, 1, 10, 16, 30, 12, 345000, tzinfo=UTC)
    assert created is not None and created.utcoffset() is not None


# --- utilization -----------------------------------------------------------------------------------


def test_utilization_average_and_p95_per_instance(prod: dict[str, Resource]) -> None:
    t4 = prod["serve-t4-1"].utilization
    assert (t4.gpu_avg, t4.gpu_p95, t4.window_hours) == (55.0, 100.0, 24.0)
    a2 = prod["train-a2-spot"].utilization
    assert a2.gpu_avg == round(sum(A2_VALUES) / len(A2_VALUES), 2)
    assert a2.gpu_p95 == 99.0


def test_utilization_pools_every_gpu_of_an_instance(prod: dict[str, Resource]) -> None:
    # Eight series (one per GPU) on four pages; one short spike on GPU 0 of an idle box.
    samples = A3_SPIKE + A3_IDLE * 7
    a3 = prod["train-a3-reserved"].utilization
    assert a3.gpu_avg == round(sum(samples) / len(samples), 2)
    assert a3.gpu_p95 == 2.0


def test_no_series_means_utilization_missing(prod: dict[str, Resource]) -> None:
    missing = prod["notebook-g2"].utilization
    assert (missing.gpu_avg, missing.gpu_p95, missing.window_hours) == (None, None, None)


def test_monitoring_request_names_metric_and_window(fake: FakeGcp, endpoint: str) -> None:
    collect(PROD, window_hours=6.0, metric_type="custom.googleapis.com/dcgm/gpu_util")
    calls = [r for r in fake.requests if r.path.endswith("/timeSeries")]
    assert calls
    query = calls[0].query
    assert query["filter"] == [
        'metric.type = "custom.googleapis.com/dcgm/gpu_util" AND resource.type = "gce_instance"'
    ]
    start = datetime.fromisoformat(query["interval.startTime"][0])
    end = datetime.fromisoformat(query["interval.endTime"][0])
    assert (end - start).total_seconds() == 6 * 3600


def test_unreadable_monitoring_leaves_utilization_missing_with_a_note(
    fake: FakeGcp, endpoint: str
) -> None:
    fake.monitoring_forbidden.add(PROD)
    items = collect(PROD)
    t4 = by_name(items)["serve-t4-1"]
    assert t4.utilization.gpu_p95 is None
    assert t4.source.note is not None and "utilization unavailable" in t4.source.note
    assert "403" in t4.source.note
    assert not [i for i in items if isinstance(i, CoverageGap)]


# --- data location ---------------------------------------------------------------------------------


def test_multi_region_bucket_contains_its_regions(prod: dict[str, Resource]) -> None:
    data = prod["serve-t4-1"].data
    assert data.uris == ("gs://ml-datasets-us",)
    assert data.regions is not None
    assert "us-central1" in data.regions and "us-east4" in data.regions
    eu = prod["train-a2-spot"].data.regions
    assert eu is not None and "europe-west4" in eu and "us-central1" not in eu


def test_dual_region_buckets(prod: dict[str, Resource]) -> None:
    assert prod["train-a3-reserved"].data.regions == ("us-central1", "us-east1")  # NAM4
    assert prod["eval-a2-ultra"].data.regions == ("us-east1", "us-west1")  # configurable


def test_unreadable_bucket_leaves_regions_missing_with_a_note(prod: dict[str, Resource]) -> None:
    locked = prod["serve-l4-locked"]
    assert locked.data.uris == ("gs://locked-bucket",)
    assert locked.data.regions is None
    assert locked.source.note is not None and "bucket locked-bucket" in locked.source.note


def test_no_bucket_label_means_no_data(prod: dict[str, Resource]) -> None:
    data = prod["notebook-g2"].data
    assert (data.uris, data.regions) == (None, None)


def test_each_bucket_is_read_once_per_scan(fake: FakeGcp, endpoint: str) -> None:
    fake.instances[RESEARCH][1]["labels"] = {"data-bucket": "research-data"}
    collect(PROD, RESEARCH)
    reads = [r.path for r in fake.requests if r.path.startswith("/storage/")]
    assert reads.count("/storage/v1/b/research-data") == 1


# --- faults ----------------------------------------------------------------------------------------


def test_forbidden_and_missing_projects_are_gaps_and_others_complete(
    fake: FakeGcp, endpoint: str
) -> None:
    items = collect(PROD, FORBIDDEN, GONE, RESEARCH)
    gaps = {g.account: g for g in items if isinstance(g, CoverageGap)}
    assert set(gaps) == {FORBIDDEN, GONE}
    forbidden = gaps[FORBIDDEN]
    assert (forbidden.provider, forbidden.scope) == ("gcp", f"project {FORBIDDEN}")
    assert forbidden.error == "Forbidden (403)"
    assert "compute.instances.list" in forbidden.message
    assert gaps[GONE].error == "NotFound (404)"
    found = by_name(items)
    assert "serve-t4-1" in found and "v100-sweep" in found
    # 403/404 are answers, not hiccups: asked once each.
    assert fake.pages_served(FORBIDDEN) == 1
    assert fake.pages_served(GONE) == 1


def test_a_503_is_retried_and_succeeds(fake: FakeGcp, endpoint: str) -> None:
    items = collect(FLAKY)
    assert not [i for i in items if isinstance(i, CoverageGap)]
    t4 = by_name(items)["t4-ocr"]
    assert t4.gpu.model == "T4"
    assert t4.data.regions is not None and "asia-northeast1" in t4.data.regions
    assert fake.pages_served(FLAKY) == 2  # the 503, then the page


def test_a_project_that_stays_unavailable_is_a_gap_after_bounded_retries(
    fake: FakeGcp, endpoint: str
) -> None:
    fake.unavailable[FLAKY] = 1000
    items = collect(FLAKY, PROD, max_attempts=3)
    gaps = [i for i in items if isinstance(i, CoverageGap)]
    assert [g.account for g in gaps] == [FLAKY]
    assert gaps[0].error == "ServiceUnavailable (503)"
    assert fake.pages_served(FLAKY) == 3
    assert "serve-t4-1" in by_name(items)


@pytest.mark.server
def test_connection_refused_is_a_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(FakeGcp()) as url:
        pass  # the port is closed again: nothing listens there now
    for env in ENDPOINT_ENVS:
        monkeypatch.setenv(env, url)
    started = time.monotonic()
    items = collect(PROD, RESEARCH, max_attempts=2)
    assert time.monotonic() - started < 60  # refused at once, never waited on
    assert all(isinstance(i, CoverageGap) for i in items)
    # Compute Engine and Vertex AI both refused: a gap each, per project.
    gaps = sorted(g.account or "" for g in items if isinstance(g, CoverageGap))
    assert gaps == [RESEARCH, RESEARCH, PROD, PROD]
    assert all("ConnectionError" in g.error for g in items if isinstance(g, CoverageGap))


def test_only_reads_are_made(fake: FakeGcp, endpoint: str) -> None:
    collect(PROD, RESEARCH, FLAKY, FORBIDDEN)
    assert fake.requests
    assert {r.method for r in fake.requests} == {"GET"}


# --- collector contract ----------------------------------------------------------------------------


def test_progress_ticks_once_per_project(endpoint: str) -> None:
    ticks: list[Progress] = []
    collector = GcpCollector(settings(PROD, RESEARCH, FORBIDDEN, concurrency=2), ticks.append)
    found = sum(isinstance(i, Resource) for i in collector.collect())
    assert [t.phase for t in ticks[:2]] == ["reading credentials", "listing instances"]
    assert [t.done for t in ticks[2:]] == [1, 2, 3]
    assert {t.total for t in ticks} == {3}
    assert ticks[-1].found == found == 8


def test_scope_names_projects_and_regions_seen(endpoint: str) -> None:
    collector = GcpCollector(settings(PROD, RESEARCH))
    list(collector.collect())
    scope = collector.scope()
    assert scope.providers == ("gcp",)
    assert scope.accounts == (PROD, RESEARCH)
    assert scope.regions == ("europe-west4", "us-central1", "us-east1")


def test_without_projects_the_listed_active_projects_are_scanned(
    fake: FakeGcp, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RESOURCE_MANAGER_ENDPOINT_ENV, endpoint)
    fake.projects = [
        {"projectId": PROD, "lifecycleState": "ACTIVE"},
        {"projectId": "being-deleted", "lifecycleState": "DELETE_REQUESTED"},
        {"projectId": RESEARCH, "lifecycleState": "ACTIVE"},
    ]  # two pages of two
    collector = GcpCollector(GcpSettings(timeout=5.0))
    found = [i for i in collector.collect() if isinstance(i, Resource)]
    assert {r.account for r in found} == {PROD, RESEARCH}
    assert collector.work_items() == tuple(sorted((f"gcp:{PROD}", f"gcp:{RESEARCH}")))
    assert [r.query.get("pageToken") for r in fake.requests if r.path == "/v1/projects"] == [
        None,
        ["2"],
    ]


def test_a_refused_project_listing_is_one_provider_gap(
    fake: FakeGcp, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RESOURCE_MANAGER_ENDPOINT_ENV, endpoint)
    fake.projects_forbidden = True
    with pytest.raises(ProviderUnavailable, match="listing projects") as caught:
        list(GcpCollector(GcpSettings(timeout=5.0)).collect())
    assert caught.value.code == "ListProjectsFailed"
    assert "HTTP 403: The caller does not have permission" in str(caught.value)


def test_no_projects_listed_is_a_collector_error(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RESOURCE_MANAGER_ENDPOINT_ENV, endpoint)
    with pytest.raises(CollectorError, match="no projects"):
        list(GcpCollector(GcpSettings()).collect())


def test_missing_credentials_file_is_named_with_its_cause(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    for env in ENDPOINT_ENVS:
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv(GCE_ENDPOINT_ENV, "https://compute.example.com")  # not loopback: ADC needed
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", f"{tmp_path}/absent.json")
    with pytest.raises(ProviderUnavailable, match=r"absent\.json: cannot read it: No such file"):
        list(GcpCollector(settings(PROD)).collect())


def test_missing_extra_is_a_collector_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "google.cloud.compute_v1", None)
    with pytest.raises(CollectorError, match=r"pip install 'gpu-audit\[gcp\]'"):
        list(GcpCollector(settings(PROD)).collect())


def test_an_unreachable_zone_is_a_gap_and_the_rest_of_the_project_completes(
    fake: FakeGcp, endpoint: str
) -> None:
    fake.unreachable_zones[PROD] = {"europe-west4-a"}
    items = collect(PROD)
    gaps = [i for i in items if isinstance(i, CoverageGap)]
    assert [(g.scope, g.error, g.region) for g in gaps] == [
        (f"project {PROD} zone europe-west4-a", "UNREACHABLE", "europe-west4")
    ]
    found = by_name(items)
    assert "notebook-g2" not in found and "serve-t4-1" in found


def test_a_monitoring_503_is_retried(fake: FakeGcp, endpoint: str) -> None:
    fake.monitoring_unavailable[PROD] = 1
    t4 = by_name(collect(PROD))["serve-t4-1"]
    assert t4.utilization.gpu_p95 == 100.0
    assert t4.source.note is None
    # the 503, then 5 pages of 2 of the 10 series
    assert len([r for r in fake.requests if r.path.endswith("/timeSeries")]) == 6
