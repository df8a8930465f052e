"""Vertex AI reads for the GCP collector: every location of a project, over an AuthorizedSession.

The REST API is used through the session the Monitoring and Storage reads use; the official
client (google-cloud-aiplatform) imports far more than this needs. Calls per project:
`locations.list` (one page for ~40 locations; skipped when `vertex_locations` names them),
then per location `customJobs.list` and `hyperparameterTuningJobs.list` (filtered server-side
on JOB_STATE_RUNNING), `endpoints.list` and `persistentResources.list`, 100 a page: with N of
each kind in L locations, L × (4 + 4 × ceil(N / 100) - 4) + 1 calls, 4 × L + 1 when idle.
A location that cannot be read is a coverage gap; the others go on.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gpu_audit.collectors.gcp.connect import Endpoint
from gpu_audit.collectors.gcp.instances import workload_of
from gpu_audit.collectors.gcp.rest import RestError, get_json
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.gcp.vertex_map import VertexMapper
from gpu_audit.model import CoverageGap, Resource

REGIONAL = "https://{location}-aiplatform.googleapis.com"
GLOBAL = "https://aiplatform.googleapis.com"
PAGE_SIZE = "100"
RUNNING = 'state="JOB_STATE_RUNNING"'
Sessions = Callable[[], Any]  # a new AuthorizedSession (one per thread)


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

    def __init__(self, settings: GcpSettings, api: Endpoint, project: str, sessions: Sessions):
        self.gcp = settings
        self.api = api
        self.project = project
        self.sessions = sessions
        self.mapper = VertexMapper(project)

    def run(self) -> list[Resource | CoverageGap]:
        locations = list(self.gcp.vertex_locations)
        if not locations:
            try:
                with self.sessions() as session:
                    url = f"{_base(self.api, None)}/v1/projects/{self.project}/locations"
                    found = _list(session, url, "locations", self.gcp.timeout)
            except RestError as exc:
                return [self._gap(None, exc)]
            locations = sorted(str(loc["locationId"]) for loc in found if loc.get("locationId"))
        workers = max(1, min(self.gcp.concurrency, len(locations) or 1))
        with ThreadPoolExecutor(workers, thread_name_prefix="vertex") as pool:
            results = list(pool.map(self._location, locations))
        return [item for result in results for item in result]

    def _gap(self, location: str | None, exc: RestError) -> CoverageGap:
        text = str(exc)
        error = text.split(":", 1)[0] or "RestError"  # `HTTP 403`, `ConnectionError`
        scope = f"project {self.project} vertex" + (f" location {location}" if location else "")
        return CoverageGap("gcp", scope, error, f"vertex: {text}", self.project, location)

    def _location(self, location: str) -> list[Resource | CoverageGap]:
        parent = f"{_base(self.api, location)}/v1/projects/{self.project}/locations/{location}"
        timeout = self.gcp.timeout
        mapper = self.mapper
        found: list[Resource | None] = []
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
        except RestError as exc:
            return [self._gap(location, exc)]
        return [item for item in found if item is not None]
