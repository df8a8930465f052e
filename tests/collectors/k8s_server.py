"""A Kubernetes-API-shaped server and a Prometheus-shaped server on loopback, for the collector.

The API server answers `GET /api/v1/nodes`, `GET /api/v1/pods` and `GET /apis/batch/v1/jobs` as
a real one does (a cluster's `jobs_forbidden` answers the last with RBAC's 403): `NodeList`,
`PodList` and `JobList` pages cut by `limit` (and by its own `max_page`, as servers may), a `continue`
token in `metadata`, and `fieldSelector=status.phase!=X` honoured. The bearer token picks the
cluster; `forbidden` tokens get the 403 `Status` RBAC returns, and `unavailable[token]` counts
503s served before success. Every request is recorded, so tests can check only reads were made.

The Prometheus server evaluates the few PromQL shapes the collector sends over stored per-GPU
samples: `avg|max by (labels) (avg_over_time(M[w]) | quantile_over_time(q, M{l!=""}[w]))`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    token: str


@dataclass
class FakeCluster:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    jobs: list[dict[str, Any]] = field(default_factory=list)  # batch/v1 Jobs
    jobs_forbidden: bool = False  # RBAC grants nodes and pods only: `jobs` answers 403


@dataclass
class FakeKube:
    clusters: dict[str, FakeCluster] = field(default_factory=dict)  # bearer token → cluster
    forbidden: set[str] = field(default_factory=set)
    garbled: set[str] = field(default_factory=set)  # tokens answered 200 with an HTML page
    unavailable: dict[str, int] = field(default_factory=dict)
    max_page: int = 2
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def pages(self, token: str, resource: str) -> int:
        return sum(1 for r in self.requests if r.token == token and r.path == f"/api/v1/{resource}")


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _phase_filter(selector: str) -> set[str]:
    excluded = set()
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("!=")
        if key.strip() != "status.phase" or not value:
            raise ValueError(term)
        excluded.add(value.strip())
    return excluded


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: Any


class _Base(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def send_json(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self) -> None:
        self.send_json(405, _status(405, "MethodNotAllowed", "read-only fake"))

    do_POST = do_PUT = do_PATCH = do_DELETE = _refuse


class _KubeHandler(_Base):
    def do_GET(self) -> None:
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        token = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        fake: FakeKube = self.server.fake
        with fake.lock:
            fake.requests.append(Recorded("GET", split.path, query, token))
            left = fake.unavailable.get(token, 0)
            if left:
                fake.unavailable[token] = left - 1
        if left:
            self.send_json(503, _status(503, "ServiceUnavailable", "the server is busy"))
            return
        resource = split.path.removeprefix("/api/v1/").removeprefix("/apis/batch/v1/")
        if token in fake.garbled:  # a captive portal or proxy answering for the API server
            data = b"<html><body>Sign in to continue</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if token in fake.forbidden:
            message = (
                f'{resource} is forbidden: User "system:serviceaccount:audit:reader" cannot '
                f'list resource "{resource}" in API group "" at the cluster scope'
            )
            self.send_json(403, _status(403, "Forbidden", message))
            return
        cluster = fake.clusters.get(token)
        if cluster is None:
            self.send_json(401, _status(401, "Unauthorized", "Unauthorized"))
            return
        batch = split.path == "/apis/batch/v1/jobs"
        if resource not in ("nodes", "pods") and not batch:
            self.send_json(404, _status(404, "NotFound", f"no route for {split.path}"))
            return
        if batch and cluster.jobs_forbidden:
            message = (
                'jobs.batch is forbidden: User "system:serviceaccount:audit:reader" cannot list '
                'resource "jobs" in API group "batch" at the cluster scope'
            )
            self.send_json(403, _status(403, "Forbidden", message))
            return
        items = cluster.jobs if batch else cluster.nodes if resource == "nodes" else cluster.pods
        try:
            excluded = _phase_filter(query.get("fieldSelector", [""])[0])
        except ValueError as exc:
            self.send_json(400, _status(400, "BadRequest", f"unsupported field selector {exc}"))
            return
        items = [i for i in items if i.get("status", {}).get("phase") not in excluded]
        start = int(query.get("continue", ["0"])[0] or 0)
        limit = int(query.get("limit", ["0"])[0] or 0) or len(items)
        size = min(limit, fake.max_page)
        page = items[start : start + size]
        following = start + size if start + size < len(items) else None
        kind = "JobList" if batch else "NodeList" if resource == "nodes" else "PodList"
        metadata: dict[str, Any] = {"resourceVersion": "4711"}
        if following is not None:
            metadata["continue"] = str(following)
            metadata["remainingItemCount"] = len(items) - following
        version = "batch/v1" if batch else "v1"
        self.send_json(
            200, {"kind": kind, "apiVersion": version, "metadata": metadata, "items": page}
        )


_QUERY = re.compile(
    r"^(?P<agg>avg|max) by \((?P<by>[^)]*)\) \((?P<fn>avg_over_time|quantile_over_time)\("
    r"(?:(?P<q>[0-9.]+), )?(?P<metric>[A-Za-z_:][A-Za-z0-9_:]*)"
    r"(?:\{(?P<label>[A-Za-z_]+)!=\"\"\})?\[(?P<window>\d+)m\]\)\)$"
)


@dataclass
class FakePrometheus:
    series: list[tuple[dict[str, str], list[float]]] = field(default_factory=list)  # per GPU
    queries: list[str] = field(default_factory=list)
    failing: int = 0  # 503s before answering
    lock: threading.Lock = field(default_factory=threading.Lock)


def _quantile(q: float, values: list[float]) -> float:
    ordered = sorted(values)
    rank = q * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def evaluate(fake: FakePrometheus, promql: str) -> list[dict[str, Any]]:
    match = _QUERY.match(promql)
    if match is None:
        raise ValueError(f"unsupported query: {promql}")
    by = [b.strip() for b in match["by"].split(",")]
    groups: dict[tuple[str, ...], list[float]] = {}
    for labels, samples in fake.series:
        if labels.get("__name__") != match["metric"] or not samples:
            continue
        if match["label"] and not labels.get(match["label"]):
            continue
        if match["fn"] == "avg_over_time":
            per_gpu = sum(samples) / len(samples)
        else:
            per_gpu = _quantile(float(match["q"]), samples)
        groups.setdefault(tuple(labels.get(b, "") for b in by), []).append(per_gpu)
    out = []
    for key, values in groups.items():
        value = sum(values) / len(values) if match["agg"] == "avg" else max(values)
        metric = {b: v for b, v in zip(by, key, strict=True) if v}
        out.append({"metric": metric, "value": [1732000000.0, repr(value)]})
    return out


class _PromHandler(_Base):
    def do_GET(self) -> None:
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        fake: FakePrometheus = self.server.fake
        promql = query.get("query", [""])[0]
        with fake.lock:
            fake.queries.append(promql)
            failing = fake.failing
            fake.failing = max(0, failing - 1)
        if failing:
            self.send_json(503, {"status": "error", "error": "busy"})
            return
        if split.path != "/api/v1/query":
            self.send_json(404, {"status": "error", "error": "not found"})
            return
        try:
            result = evaluate(fake, promql)
        except ValueError as exc:
            self.send_json(400, {"status": "error", "errorType": "bad_data", "error": str(exc)})
            return
        data = {"resultType": "vector", "result": result}
        self.send_json(200, {"status": "success", "data": data})


@contextmanager
def _serve(handler: type[_Base], fake: Any) -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), handler)
    server.fake = fake
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def serve_kube(fake: FakeKube) -> Any:
    return _serve(_KubeHandler, fake)


def serve_prometheus(fake: FakePrometheus) -> Any:
    return _serve(_PromHandler, fake)
