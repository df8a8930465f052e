"""A GCE-, Monitoring- and Storage-shaped REST server on loopback, for the GCP collector tests.

It answers the three read calls the collector makes, in the documented JSON shapes:
- `GET /compute/v1/projects/{p}/aggregated/instances`: `compute#instanceAggregatedList`, paged
  by `maxResults` (capped at `page_size`) over instances, so one zone can span several pages;
  scopes with nothing on a page carry the `NO_RESULTS_ON_PAGE` warning, as the real API does.
- `GET /v3/projects/{p}/timeSeries`: `ListTimeSeriesResponse`, `series_page_size` series a page.
- `GET /storage/v1/b/{bucket}`: a `storage#bucket` resource.
- `GET /v1/projects` (`GPU_AUDIT_RESOURCE_MANAGER_ENDPOINT`): Resource Manager `projects.list`,
  `projects_page_size` projects a page with `nextPageToken`.
- Vertex AI (`GPU_AUDIT_VERTEX_ENDPOINT`): `GET /v1/projects/{p}/locations` and
  `GET /v1/projects/{p}/locations/{l}/{customJobs|hyperparameterTuningJobs|endpoints|
  persistentResources}`, `vertex_page_size` items a page, honouring `filter=state="..."` and
  `filter=update_time>"..."` (items without `updateTime` never match);
  faults per (project, location): `vertex_forbidden`, `vertex_unavailable` (503s before success).

- `POST /compute/v1/projects/{p}/regions/{r}/advice/capacity` (`advice`): a
  `CapacityAdviceResponse` per (region, machine type) of a Spot request, 400 for a type the
  region lacks, 403 per project (`advice_forbidden`), `advice_throttled` 429s first.

Faults are injected per project (`forbidden`, `missing`, `unavailable` = how many 503s come
before success, `monitoring_forbidden`, `monitoring_unavailable`) and per bucket (`forbidden_buckets`). Every request is
recorded, so tests can check that only reads were made.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

API = "https://www.googleapis.com/compute/v1"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]


@dataclass
class FakeGcp:
    """The fake clouds' state: instances by project, series by project, buckets by name."""

    instances: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    series: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    buckets: dict[str, dict[str, Any]] = field(default_factory=dict)
    page_size: int = 2
    series_page_size: int = 2
    forbidden: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    unavailable: dict[str, int] = field(default_factory=dict)
    forbidden_buckets: set[str] = field(default_factory=set)
    monitoring_forbidden: set[str] = field(default_factory=set)
    unreachable_zones: dict[str, set[str]] = field(default_factory=dict)
    monitoring_unavailable: dict[str, int] = field(default_factory=dict)
    # project → location → collection (`customJobs`, …) → items
    vertex: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = field(default_factory=dict)
    vertex_page_size: int = 2
    vertex_forbidden: set[tuple[str, str]] = field(default_factory=set)
    vertex_unavailable: dict[tuple[str, str], int] = field(default_factory=dict)
    # Resource Manager `projects.list` (v1): the projects the credential can see, paged.
    projects: list[dict[str, Any]] = field(default_factory=list)
    projects_page_size: int = 2
    projects_forbidden: bool = False
    # `reservations.aggregatedList` and `futureReservations.aggregatedList`: items by project
    # (each with its `zone` URL), `reservations_page_size` a page; a 403 per project.
    reservations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    future_reservations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    reservations_page_size: int = 2
    reservations_forbidden: set[str] = field(default_factory=set)
    # `advice.capacity` (POST .../regions/{r}/advice/capacity): the answer by (region, machine
    # type) for a Spot request; a pair not here is answered 400 (not offered in the region);
    # `advice_forbidden` projects answer 403; `advice_throttled` 429s come before any answer
    advice: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    advice_forbidden: set[str] = field(default_factory=set)
    advice_throttled: int = 0
    advice_bodies: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def pages_served(self, project: str) -> int:
        prefix = f"/compute/v1/projects/{project}/aggregated/instances"
        return sum(1 for r in self.requests if r.path == prefix)


def _error(code: int, message: str, reason: str, status: str) -> dict[str, Any]:
    """The JSON error body Google APIs return (both the legacy `errors` list and `status`)."""
    return {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
            "status": status,
        }
    }


def _zone_of(instance: dict[str, Any]) -> str:
    return str(instance["zone"]).rsplit("/", 1)[-1]


def aggregated_page(
    project: str,
    instances: list[dict[str, Any]],
    start: int,
    size: int,
    unreachable: Collection[str] = (),
) -> dict[str, Any]:
    """One page of `instances.aggregatedList`: instances [start, start+size) grouped by zone."""
    ordered = sorted(instances, key=lambda i: (_zone_of(i), str(i["name"])))
    zones = sorted({_zone_of(i) for i in ordered} | {"us-west1-b"})  # a zone with no VMs at all
    chunk = ordered[start : start + size]
    items: dict[str, Any] = {}
    for zone in zones:
        here = [i for i in chunk if _zone_of(i) == zone]
        scope = f"zones/{zone}"
        if zone in unreachable:
            items[scope] = {
                "warning": {
                    "code": "UNREACHABLE",
                    "message": f"Scope '{scope}' is unreachable: backend error.",
                    "data": [{"key": "scope", "value": scope}],
                }
            }
        elif here:
            items[scope] = {"instances": here}
        else:
            items[scope] = {
                "warning": {
                    "code": "NO_RESULTS_ON_PAGE",
                    "message": f"There are no results for scope '{scope}' on this page.",
                    "data": [{"key": "scope", "value": scope}],
                }
            }
    page: dict[str, Any] = {
        "kind": "compute#instanceAggregatedList",
        "id": f"projects/{project}/aggregated/instances",
        "items": items,
        "selfLink": f"{API}/projects/{project}/aggregated/instances",
    }
    if start + size < len(ordered):
        page["nextPageToken"] = f"token-{start + size}"
    return page


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        path = unquote(split.path)
        query = parse_qs(split.query)
        fake = self.server.fake
        with fake.lock:
            fake.requests.append(Recorded("GET", path, query))
        parts = path.strip("/").split("/")
        if parts[:3] == ["compute", "v1", "projects"] and parts[4:] == ["aggregated", "instances"]:
            self._instances(parts[3], query)
        elif parts[:3] == ["compute", "v1", "projects"] and parts[4:] in (
            ["aggregated", "reservations"],
            ["aggregated", "futureReservations"],
        ):
            self._reservations(parts[3], parts[5], query)
        elif parts[:2] == ["v3", "projects"] and parts[3:] == ["timeSeries"]:
            self._series(parts[2], query)
        elif parts[:3] == ["storage", "v1", "b"] and len(parts) == 4:
            self._bucket(parts[3])
        elif parts == ["v1", "projects"]:
            self._projects(query)
        elif parts[:2] == ["v1", "projects"] and parts[3:] == ["locations"]:
            found = sorted(fake.vertex.get(parts[2], {}))
            locations = [
                {"name": f"projects/{parts[2]}/locations/{at}", "locationId": at} for at in found
            ]
            self._send(200, {"locations": locations} if locations else {})
        elif parts[:2] == ["v1", "projects"] and parts[3] == "locations" and len(parts) == 6:
            self._vertex(parts[2], parts[4], parts[5], query)
        else:
            self._send(404, _error(404, f"no route for {path}", "notFound", "NOT_FOUND"))

    def _projects(self, query: dict[str, list[str]]) -> None:
        fake = self.server.fake
        if fake.projects_forbidden:
            message = "The caller does not have permission"
            self._send(403, _error(403, message, "forbidden", "PERMISSION_DENIED"))
            return
        start = int(query.get("pageToken", ["0"])[0])
        end = start + fake.projects_page_size
        body: dict[str, Any] = {"projects": fake.projects[start:end]}
        if end < len(fake.projects):
            body["nextPageToken"] = str(end)
        self._send(200, body)

    def _method_not_allowed(self) -> None:
        fake = self.server.fake
        with fake.lock:
            fake.requests.append(Recorded(self.command, self.path, {}))
        self._send(405, _error(405, "read-only fake", "methodNotAllowed", "METHOD_NOT_ALLOWED"))

    do_PUT = do_PATCH = do_DELETE = _method_not_allowed

    def do_POST(self) -> None:
        """`advice.capacity` only (a read that creates nothing); any other POST is refused."""
        path = unquote(urlsplit(self.path).path)
        parts = path.strip("/").split("/")
        if not (
            len(parts) == 8
            and parts[:3] == ["compute", "v1", "projects"]
            and parts[4] == "regions"
            and parts[6:] == ["advice", "capacity"]
        ):
            self._method_not_allowed()
            return
        fake = self.server.fake
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with fake.lock:
            fake.requests.append(Recorded("POST", path, {}))
            fake.advice_bodies.append(body)
            throttled = fake.advice_throttled > 0
            if throttled:
                fake.advice_throttled -= 1
        project, region = parts[3], parts[5]
        if throttled:
            message = (
                "Quota exceeded for quota metric 'Queries' of service 'compute.googleapis.com'"
            )
            self._send(429, _error(429, message, "rateLimitExceeded", "RESOURCE_EXHAUSTED"))
            return
        if project in fake.advice_forbidden:
            message = "The caller does not have permission"
            self._send(403, _error(403, message, "forbidden", "PERMISSION_DENIED"))
            return
        scheduling = (body.get("instanceProperties") or {}).get("scheduling") or {}
        selections = (body.get("instanceFlexibilityPolicy") or {}).get("instanceSelections") or {}
        kinds = [k for s in selections.values() for k in s.get("machineTypes") or ()]
        if scheduling.get("provisioningModel") != "SPOT" or len(kinds) != 1:
            message = (
                "Invalid value for field 'resource.instanceProperties': expected one SPOT type"
            )
            self._send(400, _error(400, message, "invalid", "INVALID_ARGUMENT"))
            return
        answer = fake.advice.get((region, kinds[0]))
        if answer is None:
            message = f"Machine type '{kinds[0]}' is not available in region '{region}'."
            self._send(400, _error(400, message, "invalid", "INVALID_ARGUMENT"))
            return
        self._send(200, answer)

    def _instances(self, project: str, query: dict[str, list[str]]) -> None:
        fake = self.server.fake
        if project in fake.forbidden:
            message = f"Required 'compute.instances.list' permission for 'projects/{project}'"
            self._send(403, _error(403, message, "forbidden", "PERMISSION_DENIED"))
            return
        if project in fake.missing or project not in fake.instances:
            message = f"The resource 'projects/{project}' was not found"
            self._send(404, _error(404, message, "notFound", "NOT_FOUND"))
            return
        with fake.lock:
            left = fake.unavailable.get(project, 0)
            if left:
                fake.unavailable[project] = left - 1
        if left:
            self._send(
                503,
                _error(503, "The service is currently unavailable.", "backendError", "UNAVAILABLE"),
            )
            return
        size = min(int(query.get("maxResults", ["500"])[0]), fake.page_size)
        token = query.get("pageToken", ["token-0"])[0]
        start = int(token.removeprefix("token-"))
        unreachable = fake.unreachable_zones.get(project, set())
        page = aggregated_page(project, fake.instances[project], start, size, unreachable)
        self._send(200, page)

    def _reservations(self, project: str, collection: str, query: dict[str, list[str]]) -> None:
        """`reservations.aggregatedList` (`compute#reservationAggregatedList`) or the future
        reservations' list, paged like the instances' (an empty zone says NO_RESULTS_ON_PAGE)."""
        fake = self.server.fake
        if project in fake.reservations_forbidden:
            permission = "compute." + collection + ".list"
            message = f"Required '{permission}' permission for 'projects/{project}'"
            self._send(403, _error(403, message, "forbidden", "PERMISSION_DENIED"))
            return
        held = fake.reservations if collection == "reservations" else fake.future_reservations
        items = sorted(held.get(project, []), key=lambda i: (_zone_of(i), str(i["name"])))
        size = min(int(query.get("maxResults", ["500"])[0]), fake.reservations_page_size)
        start = int(query.get("pageToken", ["0"])[0])
        chunk = items[start : start + size]
        scoped: dict[str, Any] = {}
        for zone in sorted({_zone_of(i) for i in items} | {"us-west1-b"}):
            here = [i for i in chunk if _zone_of(i) == zone]
            scoped[f"zones/{zone}"] = (
                {collection: here}
                if here
                else {"warning": {"code": "NO_RESULTS_ON_PAGE", "message": "no results"}}
            )
        kind = (
            "compute#reservationAggregatedList"
            if collection == "reservations"
            else "compute#futureReservationsAggregatedListResponse"
        )
        body: dict[str, Any] = {
            "kind": kind,
            "id": f"projects/{project}/aggregated/{collection}",
            "items": scoped,
        }
        if start + size < len(items):
            body["nextPageToken"] = str(start + size)
        self._send(200, body)

    def _series(self, project: str, query: dict[str, list[str]]) -> None:
        fake = self.server.fake
        if project in fake.monitoring_forbidden:
            message = (
                "Permission monitoring.timeSeries.list denied (or the resource may not exist)."
            )
            self._send(403, _error(403, message, "forbidden", "PERMISSION_DENIED"))
            return
        with fake.lock:
            left = fake.monitoring_unavailable.get(project, 0)
            if left:
                fake.monitoring_unavailable[project] = left - 1
        if left:
            body = _error(
                503, "The service is currently unavailable.", "backendError", "UNAVAILABLE"
            )
            self._send(503, body)
            return
        required = ("filter", "interval.startTime", "interval.endTime")
        if any(key not in query for key in required):
            self._send(
                400,
                _error(400, "filter and interval are required", "badRequest", "INVALID_ARGUMENT"),
            )
            return
        wanted = query["filter"][0]
        series = [s for s in fake.series.get(project, []) if f'"{s["metric"]["type"]}"' in wanted]
        start = int(query.get("pageToken", ["0"])[0])
        chunk = series[start : start + fake.series_page_size]
        body: dict[str, Any] = {"timeSeries": chunk, "unit": "%"} if chunk else {}
        if start + fake.series_page_size < len(series):
            body["nextPageToken"] = str(start + fake.series_page_size)
        self._send(200, body)

    def _vertex(self, project: str, location: str, collection: str, query: Any) -> None:
        fake = self.server.fake
        if (project, location) in fake.vertex_forbidden:
            message = f"Permission 'aiplatform.{collection}.list' denied on resource"
            self._send(403, _error(403, message, "forbidden", "PERMISSION_DENIED"))
            return
        with fake.lock:
            left = fake.vertex_unavailable.get((project, location), 0)
            if left:
                fake.vertex_unavailable[(project, location)] = left - 1
        if left:
            self._send(503, _error(503, "unavailable", "backendError", "UNAVAILABLE"))
            return
        items = fake.vertex.get(project, {}).get(location, {}).get(collection, [])
        wanted = query.get("filter", [""])[0]
        if wanted.startswith("update_time>"):  # the API's RFC 3339 times compare as text
            after = wanted.split(">", 1)[1].strip('"')
            items = [i for i in items if i.get("updateTime", "") > after]
        elif wanted:
            state = wanted.split("=", 1)[1].strip('"')
            items = [i for i in items if i.get("state") == state]
        size = min(int(query.get("pageSize", ["100"])[0]), fake.vertex_page_size)
        start = int(query.get("pageToken", ["0"])[0])
        body: dict[str, Any] = {collection: items[start : start + size]} if items else {}
        if start + size < len(items):
            body["nextPageToken"] = str(start + size)
        self._send(200, body)

    def _bucket(self, name: str) -> None:
        fake = self.server.fake
        if name in fake.forbidden_buckets:
            message = "caller does not have storage.buckets.get access to the bucket."
            self._send(403, _error(403, message, "forbidden", "PERMISSION_DENIED"))
            return
        bucket = fake.buckets.get(name)
        if bucket is None:
            self._send(
                404, _error(404, "The specified bucket does not exist.", "notFound", "NOT_FOUND")
            )
            return
        self._send(200, bucket)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeGcp) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake


@contextmanager
def serve(fake: FakeGcp) -> Iterator[str]:
    """Run the fake on an ephemeral loopback port; yields its `http://127.0.0.1:PORT` endpoint."""
    server = _Server(fake)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-gcp", daemon=True
    )
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
