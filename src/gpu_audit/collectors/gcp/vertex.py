"""Vertex AI reads for the GCP collector: every location of a project, over an AuthorizedSession.

The REST API is used through the session the Monitoring and Storage reads use; the official
client (google-cloud-aiplatform) imports far more than this needs. Calls per project:
`locations.list` (one page for ~40 locations; skipped when `vertex_locations` names them),
then per location `customJobs.list` and `hyperparameterTuningJobs.list` (filtered server-side
on JOB_STATE_RUNNING), `endpoints.list` and `persistentResources.list`, 100 a page: with N of
each kind in L locations, L × (4 + 4 × ceil(N / 100) - 4) + 1 calls, 4 × L + 1 when idle.
A location that cannot be read is a coverage gap; the others go on. Utilization: two
`timeSeries.list` calls per project with GPU resources (endpoints' accelerator duty cycle,
custom jobs' accelerator utilization), both 0-1 fractions read as percentages.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import Any

from gpu_audit.collectors.gcp.connect import DEFAULT_MONITORING, Apis, Endpoint
from gpu_audit.collectors.gcp.instances import workload_of
from gpu_audit.collectors.gcp.rest import RestError, fetch_utilization, get_json
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.gcp.vertex_map import VertexMapper
from gpu_audit.collectors.gcp.vertex_runs import finished_runs
from gpu_audit.collectors.options import period_start
from gpu_audit.core.resource import Resource, Utilization
from gpu_audit.core.results import CoverageGap
from gpu_audit.core.runs import Sweep

REGIONAL = "https://{location}-aiplatform.googleapis.com"
GLOBAL = "https://aiplatform.googleapis.com"
PAGE_SIZE = "100"
RUNNING = 'state="JOB_STATE_RUNNING"'
# Cloud Monitoring metrics (values 0-1) by the collection in a resource's name:
# metric type, monitored resource type, the resource label holding the collection's id.
METRICS = {
    "endpoints": (
        "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle",
        "aiplatform.googleapis.com/Endpoint",
        "endpoint_id",
    ),
    "customJobs": ("ml.googleapis.com/training/accelerator/utilization", "cloudml_job", "job_id"),
}


def _base(api: Endpoint, location: str | None) -> str:
    return api.base(REGIONAL.format(location=location) if location else GLOBAL)


def _list(session: Any, url: str, key: str, timeout: float, **params: str) -> list[Any]:
    """Every item under `key` of a paged Vertex list call."""
    items: list[Any] = []
    query = {"pageSize": PAGE_SIZE, **params}
    seen: set[str] = set()
    while True:
        body = get_json(session, url, query, timeout)
        items.extend(body.get(key) or ())
        token = body.get("nextPageToken")
        if not token or token in seen:
            return items
        seen.add(token)
        query = {**query, "pageToken": str(token)}


class VertexScan:
    """One project's Vertex AI GPU capacity, its locations read on a small thread pool."""

    def __init__(
        self,
        settings: GcpSettings,
        apis: Apis,
        project: str,
        sessions: Callable[[Endpoint], Any],
        now: datetime,
    ) -> None:
        self.gcp = settings
        self.api = apis.vertex
        self.project = project
        self.sessions = lambda: sessions(apis.vertex)
        self.monitoring = lambda: sessions(apis.monitoring)
        self.monitoring_base = apis.monitoring.base(DEFAULT_MONITORING)
        self.now = now
        self.since = period_start(settings.since, now)
        self.mapper = VertexMapper(project)

    def run(self) -> list[Resource | CoverageGap | Sweep]:
        """The project's Vertex AI GPU resources, sweeps and gaps across its locations (the
        configured ones, else every one it lists), read in parallel."""
        locations = list(self.gcp.vertex_locations)
        if not locations:
            try:
                with self.sessions() as session:
                    url = f"{_base(self.api, None)}/v1/projects/{self.project}/locations"
                    listed = _list(session, url, "locations", self.gcp.timeout)
            except RestError as exc:
                return [self._gap(None, exc)]
            locations = sorted(str(loc["locationId"]) for loc in listed if loc.get("locationId"))
        workers = max(1, min(self.gcp.concurrency, len(locations) or 1))
        with ThreadPoolExecutor(workers, thread_name_prefix="vertex") as pool:
            results = list(pool.map(self._location, locations))
        found: list[Resource | CoverageGap] = []
        sweeps: list[Sweep] = []
        for item in (item for result in results for item in result):
            if isinstance(item, Sweep):
                sweeps.append(item)
            else:
                found.append(item)
        if any(isinstance(item, Resource) for item in found):
            found = self._measured(found)
        return [*found, *sweeps]

    def _measured(self, found: list[Resource | CoverageGap]) -> list[Resource | CoverageGap]:
        """Accelerator duty cycle (0-1) per endpoint and per custom job, as a percentage."""
        usage: dict[tuple[str, str], Utilization] = {}
        note = None
        try:
            with self.monitoring() as session:
                for kind, (metric, resource_type, label) in METRICS.items():
                    measured = fetch_utilization(
                        session,
                        self.monitoring_base,
                        self.project,
                        metric,
                        self.gcp.window_hours,
                        self.now,
                        self.gcp.timeout,
                        resource_type=resource_type,
                        id_label=label,
                        scale=100.0,
                    )
                    usage.update({(kind, key): value for key, value in measured.items()})
        except RestError as exc:
            note = f"utilization unavailable: monitoring timeSeries.list: {exc}"
        out: list[Resource | CoverageGap] = []
        for item in found:
            if isinstance(item, Resource):
                parts = item.id.split("/")  # projects/P/locations/L/<kind>/<id>[/…]
                known = usage.get((parts[4], parts[5])) if len(parts) > 5 else None
                if known is not None:
                    item = replace(item, utilization=known)
                elif note:
                    item = replace(item, source=replace(item.source, note=note))
            out.append(item)
        return out

    def _gap(self, location: str | None, exc: RestError) -> CoverageGap:
        text = str(exc)
        error = text.split(":", 1)[0] or "RestError"  # `HTTP 403`, `ConnectionError`
        scope = f"project {self.project} vertex" + (f" location {location}" if location else "")
        return CoverageGap(
            provider="gcp",
            scope=scope,
            error=error,
            message=f"vertex: {text}",
            account=self.project,
            region=location,
        )

    def _location(self, location: str) -> list[Resource | CoverageGap | Sweep]:
        parent = f"{_base(self.api, location)}/v1/projects/{self.project}/locations/{location}"
        timeout = self.gcp.timeout
        mapper = self.mapper
        found: list[Resource | Sweep | None] = []
        try:
            with self.sessions() as session:
                for job in _list(
                    session, f"{parent}/customJobs", "customJobs", timeout, filter=RUNNING
                ):
                    found.append(mapper.custom_job(job, location))
                for job in _list(
                    session,
                    f"{parent}/hyperparameterTuningJobs",
                    "hyperparameterTuningJobs",
                    timeout,
                    filter=RUNNING,
                ):
                    found.append(mapper.tuning_job(job, location))
                for endpoint in _list(session, f"{parent}/endpoints", "endpoints", timeout):
                    found.extend(mapper.endpoint(endpoint, location))
                for resource in _list(
                    session, f"{parent}/persistentResources", "persistentResources", timeout
                ):
                    if resource.get("state", "RUNNING") not in ("RUNNING", "UPDATING"):
                        continue
                    labels = resource.get("labels") or {}
                    workload = workload_of(labels.get(self.gcp.workload_label))
                    found.extend(mapper.persistent_resource(resource, location, workload))

                def lister(collection: str, key: str, filter: str) -> list[Any]:
                    url = f"{parent}/{collection}"
                    return _list(session, url, key, timeout, filter=filter)

                found.extend(finished_runs(lister, self.project, location, self.since, self.now))
        except RestError as exc:
            return [self._gap(location, exc)]
        return [item for item in found if item is not None]
