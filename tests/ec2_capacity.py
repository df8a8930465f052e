"""EC2 capacity reservations on loopback: moto lacks `DescribeCapacityReservations` (its EC2
answers 500 "not implemented") and never states an instance's `capacityReservationId`,
`instanceLifecycle` of `capacity-block` or `platformDetails`. This proxy sits in front of the
session's moto server: it answers `DescribeCapacityReservations` itself, in EC2's XML (paged by
`MaxResults`/`NextToken`, a 403 `UnauthorizedOperation` for a denied region), adds the instance
elements a test sets to moto's `DescribeInstances` answer, and relays everything else. Resetting
moto (`/moto-api/reset`) empties its store too.
"""

from __future__ import annotations

import http.client
import re
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/")
_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


class CapacityProxy:
    """Holds the reservations per region and the extra elements per instance id."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.reservations: dict[str, list[dict[str, Any]]] = {}
        self.instance_fields: dict[str, dict[str, str]] = {}
        self.denied: set[str] = set()  # regions whose DescribeCapacityReservations is a 403
        self.unimplemented: set[str] = set()  # regions answered as moto does: an HTML 500
        self.pages: list[tuple[str, str | None]] = []  # (region, NextToken asked) per call
        self.page_size = 1000  # a page holds at most this many, whatever MaxResults asks
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def reset(self) -> None:
        self.reservations.clear()
        self.instance_fields.clear()
        self.denied.clear()
        self.unimplemented.clear()
        self.pages.clear()
        self.page_size = 1000

    def reserve(self, region: str, **fields: Any) -> None:
        """A reservation in EC2's own element names (`capacityReservationId`, …)."""
        self.reservations.setdefault(region, []).append(fields)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, region: str, query: dict[str, list[str]]) -> tuple[int, bytes]:
        token = (query.get("NextToken") or [None])[0]
        self.pages.append((region, token))
        if region in self.denied:
            return 403, _error("UnauthorizedOperation", "You are not authorized to perform: "
                               "ec2:DescribeCapacityReservations")  # fmt: skip
        if region in self.unimplemented:
            return 500, b"<!doctype html>\n<title>500 Internal Server Error</title>\n"
        size = min(self.page_size, int((query.get("MaxResults") or ["1000"])[0]))
        start = int(token or 0)
        items = self.reservations.get(region, [])
        page = items[start : start + size]
        following = start + size if start + size < len(items) else None
        body = "".join(f"<item>{_elements(item)}</item>" for item in page)
        more = f"<nextToken>{following}</nextToken>" if following is not None else ""
        xml = (
            f'<DescribeCapacityReservationsResponse xmlns="{_NS}"><requestId>gpu-audit-test'
            f"</requestId><capacityReservationSet>{body}</capacityReservationSet>{more}"
            "</DescribeCapacityReservationsResponse>"
        )
        return 200, xml.encode()

    def instances(self, payload: bytes) -> bytes:
        text = payload.decode()
        for instance, extra in self.instance_fields.items():
            added = _elements(extra)
            text = text.replace(
                f"<instanceId>{instance}</instanceId>",
                f"<instanceId>{instance}</instanceId>{added}",
            )
        return text.encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.startswith("/moto-api/reset"):
                    proxy.reset()
                scope = _SCOPE.search(self.headers.get("Authorization", ""))
                query = parse_qs(body.decode(errors="replace")) if scope else {}
                action = (query.get("Action") or [""])[0]
                if scope and scope.group(2) == "ec2" and action == "DescribeCapacityReservations":
                    status, payload = proxy.answer(scope.group(1), query)
                    self._send(status, payload, [("Content-Type", "text/xml")])
                    return
                upstream = http.client.HTTPConnection(
                    proxy.upstream.hostname or "127.0.0.1", proxy.upstream.port, timeout=120
                )
                upstream.request(self.command, self.path, body=body, headers=dict(self.headers))
                answer = upstream.getresponse()
                payload = answer.read()
                if action == "DescribeInstances" and proxy.instance_fields:
                    payload = proxy.instances(payload)
                kept = [
                    (name, value)
                    for name, value in answer.getheaders()
                    if name.lower() not in ("content-length", "transfer-encoding", "connection")
                ]
                upstream.close()
                self._send(answer.status, payload, kept)

            def _send(self, status: int, payload: bytes, headers: list[tuple[str, str]]) -> None:
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _relay

        return Handler


def _elements(fields: dict[str, Any]) -> str:
    out = []
    for name, value in fields.items():
        if isinstance(value, datetime):
            value = value.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        if isinstance(value, dict):  # tags
            items = "".join(
                f"<item><key>{escape(k)}</key><value>{escape(v)}</value></item>"
                for k, v in value.items()
            )
            out.append(f"<{name}>{items}</{name}>")
        else:
            out.append(f"<{name}>{escape(str(value))}</{name}>")
    return "".join(out)


def _error(code: str, message: str) -> bytes:
    return (
        f"<Response><Errors><Error><Code>{code}</Code><Message>{escape(message)}</Message>"
        "</Error></Errors><RequestID>gpu-audit-test</RequestID></Response>"
    ).encode()
