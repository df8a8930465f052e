"""An ARM- and Resource Graph-shaped server on loopback, for the Azure collector tests.

It answers the read calls the collector makes, in the documented JSON shapes:
- `GET /subscriptions`: `{"value": [Subscription]}`.
- `GET /subscriptions/{s}/providers/Microsoft.Compute/virtualMachines?statusOnly=true`, and
  `.../virtualMachineScaleSets`, `.../Microsoft.MachineLearningServices/workspaces`,
  `GET .../workspaces/{w}/computes`: `{"value": [...], "nextLink": URL}`, `page_size` a page.
  VMs carry their power state in `properties.instanceView.statuses`, as `statusOnly=true` does.
- `POST /providers/Microsoft.ResourceGraph/resources`: `QueryResponse` (`objectArray`), paged by
  `$top` and `$skipToken`. It reads the little of KQL the collector writes: the table
  (`Resources` or `ResourceContainers`) and a `type =~ 'x'` or `type in~ ('x', 'y')` filter. Rows
  are the ARM objects as Resource Graph indexes them: `type` lower-cased, `subscriptionId` and
  `resourceGroup` added, the power state moved to `properties.extended.instanceView.powerState`,
  the resource group of the id lower-cased.

`SpotResources` (`spot`): the eviction-rate rows, filtered by `type =~`, `sku.name in~` and
`location in~`, whatever subscriptions are named (tenant-wide data).

Faults: `stall[route]` seconds of silence before an answer; `forbidden` subscriptions answer 403 `AuthorizationFailed` on ARM and are absent from
Resource Graph; `faults[route]` queues statuses (`429` carries `Retry-After`, `403` is
`AuthorizationFailed`) answered before the
real answer on that route (`graph`, `vms`, `scale_sets`, `workspaces`, `computes`,
`subscriptions`). Every request is recorded, so tests can check that only reads were made.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    body: dict[str, Any] | None = None
    authorization: str | None = None  # the Authorization header, if one was sent


@dataclass
class FakeAzure:
    """Subscriptions' resources as ARM returns them, workspaces' computes, and the faults."""

    resources: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by subscription
    computes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by workspace id
    forbidden: set[str] = field(default_factory=set)
    faults: dict[str, list[int]] = field(default_factory=dict)
    retry_after: str = "1"
    stall: dict[str, float] = field(default_factory=dict)  # route → seconds before answering
    page_size: int = 2
    # capacity reservation groups by subscription (ARM objects), and each group's reservations
    # by the group's lower-cased id; `reservations_forbidden` subscriptions answer 403 on them
    reservation_groups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    capacity_reservations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    reservations_forbidden: set[str] = field(default_factory=set)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # `SpotResources` rows (eviction rates) as Resource Graph returns them: tenant-wide data,
    # answered whatever subscriptions the query names
    spot: list[dict[str, Any]] = field(default_factory=list)

    def fault(self, route: str) -> int | None:
        with self.lock:
            queued = self.faults.get(route) or []
            return queued.pop(0) if queued else None


def graph_row(item: dict[str, Any]) -> dict[str, Any]:
    """An ARM object as Resource Graph returns it."""
    row = copy.deepcopy(item)
    parts = str(row["id"]).split("/")
    parts[4] = parts[4].lower()  # /subscriptions/S/resourceGroups/G/...: G as indexed
    row["id"] = "/".join(parts)
    row["type"] = str(row["type"]).lower()
    row["subscriptionId"] = parts[2]
    row["resourceGroup"] = parts[4]
    row["tenantId"] = "72f988bf-0000-0000-0000-000000000000"
    props = row.get("properties") or {}
    view = props.pop("instanceView", None)
    if view is not None:
        codes = [s["code"] for s in view.get("statuses", []) if s["code"].startswith("PowerState/")]
        if codes:
            props["extended"] = {
                "instanceView": {"powerState": {"code": codes[0], "level": "Info"}}
            }
    return row


_TABLE = re.compile(r"^\s*(\w+)")
_IN = re.compile(r"type\s+in~\s*\(([^)]*)\)", re.IGNORECASE)
_EQ = re.compile(r"type\s+=~\s*'([^']*)'", re.IGNORECASE)


def _types(query: str) -> set[str] | None:
    found = _IN.search(query)
    if found:
        return {t.strip().strip("'").lower() for t in found.group(1).split(",")}
    single = _EQ.search(query)
    return {single.group(1).lower()} if single else None


_SKUS = re.compile(r"sku\.name\s+in~\s*\(([^)]*)\)", re.IGNORECASE)
_LOCATIONS = re.compile(r"location\s+in~\s*\(([^)]*)\)", re.IGNORECASE)


def _spot_wanted(row: dict[str, Any], query: str) -> bool:
    """The `sku.name in~ (...)` and `location in~ (...)` filters of a SpotResources query."""
    for pattern, value in (
        (_SKUS, (row.get("sku") or {}).get("name")),
        (_LOCATIONS, row.get("location")),
    ):
        found = pattern.search(query)
        if found:
            names = {t.strip().strip("'").lower() for t in found.group(1).split(",")}
            if str(value).lower() not in names:
                return False
    return True


def _public(reservation: dict[str, Any]) -> dict[str, Any]:
    """A capacity reservation as ARM lists it (the test's `allocated` is the instance view's)."""
    return {k: v for k, v in reservation.items() if k != "allocated"}


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-ms-request-id", "gpu-audit-test")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _faulted(self, route: str) -> bool:
        wait = self.server.fake.stall.get(route)
        if wait:
            time.sleep(wait)  # bounded: a test sets a few seconds at most
        status = self.server.fake.fault(route)
        if status is None:
            return False
        if status == 429:
            self._send(
                429,
                _error("TooManyRequests", "Too many requests; retry later."),
                {"Retry-After": self.server.fake.retry_after},
            )
        elif status == 403:
            message = (
                "The client 'gpu-audit' with object id '00000000-0000-0000-0000-000000000001' "
                "does not have authorization to perform action "
                "'Microsoft.ResourceGraph/resources/read' over scope "
                "'/providers/Microsoft.ResourceGraph' or the scope is invalid."
            )
            self._send(403, _error("AuthorizationFailed", message))
        elif status == 401:
            message = (
                "The access token is from the wrong issuer 'https://sts.windows.net/72f988bf/'. "
                "It must match the tenant associated with this subscription."
            )
            self._send(401, _error("InvalidAuthenticationTokenTenant", message))
        else:
            self._send(status, _error("ServiceUnavailable", "The service is unavailable."))
        return True

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        path = unquote(split.path)
        query = parse_qs(split.query)
        fake = self.server.fake
        with fake.lock:
            fake.requests.append(
                Recorded("GET", path, query, None, self.headers.get("Authorization"))
            )
        parts = path.strip("/").split("/")
        lowered = [p.lower() for p in parts]
        if lowered == ["subscriptions"]:
            if not self._faulted("subscriptions"):
                self._subscriptions()
            return
        if len(parts) < 2 or lowered[0] != "subscriptions":
            self._send(404, _error("NotFound", f"no route for {path}"))
            return
        subscription = parts[1]
        tail = lowered[2:]
        routes = {
            ("providers", "microsoft.compute", "virtualmachines"): ("vms", "virtualmachines"),
            ("providers", "microsoft.compute", "virtualmachinescalesets"): (
                "scale_sets",
                "virtualmachinescalesets",
            ),
            ("providers", "microsoft.machinelearningservices", "workspaces"): (
                "workspaces",
                "workspaces",
            ),
        }
        if tuple(tail) in routes:
            route, kind = routes[tuple(tail)]
            action = f"{parts[3]}/{parts[4]}/read"
            if self._forbid(subscription, action) or self._faulted(route):
                return
            items = [
                i
                for i in fake.resources.get(subscription, [])
                if str(i["type"]).lower().endswith("/" + kind)
            ]
            self._page(items, query)
            return
        if tail == ["providers", "microsoft.compute", "capacityreservationgroups"] or (
            len(tail) >= 6
            and tail[0] == "resourcegroups"
            and tail[4] == "capacityreservationgroups"
        ):
            self._reservations(subscription, lowered, tail, query)
            return
        if len(tail) == 7 and tail[-1] == "computes" and tail[0] == "resourcegroups":
            action = "Microsoft.MachineLearningServices/workspaces/computes/read"
            if self._forbid(subscription, action) or self._faulted("computes"):
                return
            workspace = "/".join(["", *lowered[:-1]])
            self._page(fake.computes.get(workspace, []), query)
            return
        self._send(404, _error("NotFound", f"no route for {path}"))

    def _reservations(
        self, subscription: str, lowered: list[str], tail: list[str], query: Any
    ) -> None:
        """Groups listed, a group with `$expand=instanceView` (each reservation's allocated VMs,
        from its `virtualMachinesAllocated`), a group's reservations listed: ARM's shapes."""
        fake = self.server.fake
        if subscription in fake.reservations_forbidden:
            fake.forbidden.add(subscription)
            try:
                self._forbid(subscription, "Microsoft.Compute/capacityReservationGroups/read")
            finally:
                fake.forbidden.discard(subscription)
            return
        groups = fake.reservation_groups.get(subscription, [])
        if len(tail) == 3:
            self._page(groups, query)
            return
        group_id = "/" + "/".join(lowered[:8])
        held = fake.capacity_reservations.get(group_id, [])
        if len(tail) == 7 and tail[-1] == "capacityreservations":
            self._page([_public(r) for r in held], query)
            return
        found = [g for g in groups if str(g["id"]).lower() == group_id]
        if len(tail) != 6 or not found:
            self._send(404, _error("ResourceNotFound", f"no capacity reservation group {group_id}"))
            return
        group = copy.deepcopy(found[0])
        if query.get("$expand") == ["instanceView"]:
            group.setdefault("properties", {})["instanceView"] = {
                "capacityReservations": [
                    {
                        "name": r["name"],
                        "utilizationInfo": {
                            "currentCapacity": r["sku"]["capacity"],
                            "virtualMachinesAllocated": [
                                {"id": vm} for vm in r.get("allocated", [])
                            ],
                        },
                        "statuses": [{"code": "ProvisioningState/succeeded", "level": "Info"}],
                    }
                    for r in held
                ]
            }
        self._send(200, group)

    def _forbid(self, subscription: str, action: str) -> bool:
        if subscription not in self.server.fake.forbidden:
            return False
        message = (
            "The client 'gpu-audit@example.com' with object id '0000' does not have "
            f"authorization to perform action '{action}' over scope "
            f"'/subscriptions/{subscription}' or the scope is invalid."
        )
        self._send(403, _error("AuthorizationFailed", message))
        return True

    def _subscriptions(self) -> None:
        fake = self.server.fake
        value = [
            {
                "id": f"/subscriptions/{s}",
                "subscriptionId": s,
                "displayName": f"sub {s[-4:]}",
                "state": "Enabled",
                "tenantId": "72f988bf-0000-0000-0000-000000000000",
            }
            for s in sorted(fake.resources)
            if s not in fake.forbidden
        ]
        self._send(200, {"value": value})

    def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]]) -> None:
        start = int(query.get("$skiptoken", ["0"])[0])
        size = self.server.fake.page_size
        body: dict[str, Any] = {"value": items[start : start + size]}
        if start + size < len(items):
            kept = {k: v[0] for k, v in query.items() if k != "$skiptoken"}
            kept["$skiptoken"] = str(start + size)
            link = "&".join(f"{k}={v}" for k, v in kept.items())
            host, port = self.server.server_address[:2]
            body["nextLink"] = f"http://{host}:{port}{urlsplit(self.path).path}?{link}"
        self._send(200, body)

    def do_POST(self) -> None:
        split = urlsplit(self.path)
        path = unquote(split.path)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        fake = self.server.fake
        with fake.lock:
            fake.requests.append(
                Recorded(
                    "POST", path, parse_qs(split.query), body, self.headers.get("Authorization")
                )
            )
        if path.lower() != "/providers/microsoft.resourcegraph/resources":
            self._send(405, _error("MethodNotAllowed", "read-only fake"))
            return
        if self._faulted("graph"):
            return
        self._graph(body)

    def _graph(self, body: dict[str, Any]) -> None:
        fake = self.server.fake
        text = str(body.get("query", ""))
        table_match = _TABLE.match(text)
        table = table_match.group(1).lower() if table_match else ""
        wanted = [s for s in body.get("subscriptions") or [] if s not in fake.forbidden]
        wanted = [s for s in wanted if s in fake.resources]  # an unknown one is absent too
        if table == "resourcecontainers":
            rows: list[dict[str, Any]] = [
                {
                    "id": f"/subscriptions/{s}",
                    "name": s,
                    "type": "microsoft.resources/subscriptions",
                    "subscriptionId": s,
                    "properties": {"state": "Enabled"},
                }
                for s in wanted
            ]
        elif table == "resources":
            rows = [graph_row(i) for s in wanted for i in fake.resources[s]]
        elif table == "spotresources":
            rows = [copy.deepcopy(r) for r in fake.spot if _spot_wanted(r, text)]
        else:
            self._send(400, _error("BadRequest", f"unknown table in {text!r}"))
            return
        types = _types(text)
        if types is not None:
            rows = [r for r in rows if r["type"].lower() in types]
        rows.sort(key=lambda r: r["id"])
        options = body.get("options") or {}
        size = min(int(options.get("$top") or 1000), fake.page_size)
        start = int(options.get("$skipToken") or 0)
        page = rows[start : start + size]
        answer: dict[str, Any] = {
            "totalRecords": len(rows),
            "count": len(page),
            "data": page,
            "facets": [],
            "resultTruncated": "false",
        }
        if start + size < len(rows):
            answer["$skipToken"] = str(start + size)
        self._send(200, answer)

    def _method_not_allowed(self) -> None:
        with self.server.fake.lock:
            self.server.fake.requests.append(Recorded(self.command, self.path, {}))
        self._send(405, _error("MethodNotAllowed", "read-only fake"))

    do_PUT = do_PATCH = do_DELETE = _method_not_allowed


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeAzure) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up on a stalled answer is expected; anything else is reported."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serve(fake: FakeAzure) -> Iterator[str]:
    """The fake on a free loopback port: yields its base URL."""
    server = _Server(fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()
