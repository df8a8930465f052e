"""One loopback server answering as the AWS Price List Query API (awsJson1.1), EC2's
DescribeSpotPriceHistory (query protocol, XML), the Azure Retail Prices API and the Cloud Billing
Catalog (Compute Engine and Vertex AI services), for the refresh.

Answers are in the real shapes: GetProducts' `PriceList` is a list of JSON *strings*, paged by
`NextToken`; spot history is `spotPriceHistorySet` paged by `nextToken`; Azure pages hold
`Items`, `Count` and `NextPageLink`. Filters are applied as the services apply them, unless
`loose` (then every product and item of the region comes back, as a trap for the client's own
checks). Faults: `throttle` (how many first calls per API answer ThrottlingException,
RequestLimitExceeded or HTTP 429), `fail` (APIs answering 500 from then on; `vertex`: the
Vertex AI service answers 403, as for a key whose project cannot read it), `lost_link`
(Azure pages whose NextPageLink is null although more follow), `empty_page` (an empty Azure page
with a link before that offset). Every request is recorded.
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
from urllib.parse import parse_qs, urlencode, urlsplit


@dataclass
class FakePrices:
    products: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # service → products
    spot: list[dict[str, str]] = field(default_factory=list)  # region, type, zone, price, time, os
    azure: list[dict[str, Any]] = field(default_factory=list)
    skus: list[dict[str, Any]] = field(default_factory=list)  # Cloud Billing Catalog, Compute
    vertex: list[dict[str, Any]] = field(default_factory=list)  # Cloud Billing Catalog, Vertex AI
    gcp_page: int = 3
    pricing_page: int = 2
    spot_page: int = 2
    azure_page: int = 100
    loose: bool = False
    throttle: dict[str, int] = field(default_factory=dict)  # pricing | ec2 | azure → count
    fail: set[str] = field(default_factory=set)
    lost_link: set[int] = field(default_factory=set)  # $skip offsets answered without a link
    empty_page: set[int] = field(default_factory=set)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    base: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, api: str) -> int:
        return sum(1 for name, _ in self.requests if name == api)


def _matches(attributes: dict[str, str], filters: list[dict[str, str]], loose: bool) -> bool:
    for f in filters:
        value = attributes.get(f["Field"])
        if loose and f["Field"] not in ("regionCode", "instanceType", "instanceName"):
            continue
        if f["Type"] == "ANY_OF":
            if value not in f["Value"].split(","):
                return False
        elif f["Type"] == "TERM_MATCH" and (value or "").lower() != f["Value"].lower():
            return False
    return True


class _Handler(BaseHTTPRequestHandler):
    fake: FakePrices

    def log_message(self, *args: Any) -> None:
        pass

    def _send(
        self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _throttled(self, api: str) -> bool:
        with self.fake._lock:
            left = self.fake.throttle.get(api, 0)
            if left:
                self.fake.throttle[api] = left - 1
            return bool(left)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        target = self.headers.get("X-Amz-Target", "")
        if target:
            self._pricing(target, json.loads(body or b"{}"))
        else:
            self._ec2({k: v[0] for k, v in parse_qs(body.decode()).items()})

    def _pricing(self, target: str, request: dict[str, Any]) -> None:
        fake = self.fake
        fake.requests.append(("pricing", {"target": target, **request}))
        if "pricing" in fake.fail:
            self._send(
                500,
                b'{"__type":"InternalErrorException","Message":"boom"}',
                "application/x-amz-json-1.1",
            )
            return
        if self._throttled("pricing"):
            self._send(
                400,
                b'{"__type":"ThrottlingException","Message":"Rate exceeded"}',
                "application/x-amz-json-1.1",
            )
            return
        assert target == "AWSPriceListService.GetProducts"
        found = [
            p
            for p in fake.products.get(request["ServiceCode"], [])
            if _matches(p["product"]["attributes"], request.get("Filters", []), fake.loose)
        ]
        start = int(request.get("NextToken") or 0)
        size = min(fake.pricing_page, int(request.get("MaxResults", 100)))
        answer: dict[str, Any] = {
            "FormatVersion": "aws_v1",
            "PriceList": [json.dumps(p) for p in found[start : start + size]],
        }
        if start + size < len(found):
            answer["NextToken"] = str(start + size)
        self._send(200, json.dumps(answer).encode(), "application/x-amz-json-1.1")

    def _ec2(self, form: dict[str, str]) -> None:
        fake = self.fake
        fake.requests.append(("ec2", form))
        if "ec2" in fake.fail:
            self._send(500, _ec2_error("InternalError", "boom"), "text/xml")
            return
        if self._throttled("ec2"):
            self._send(
                503, _ec2_error("RequestLimitExceeded", "Request limit exceeded."), "text/xml"
            )
            return
        assert form["Action"] == "DescribeSpotPriceHistory"
        types = {v for k, v in form.items() if k.startswith("InstanceType.")}
        products = {v for k, v in form.items() if k.startswith("ProductDescription.")}
        region = self.headers.get("Authorization", "").split("/")[2]  # the signed region
        found = [
            p
            for p in fake.spot
            if p["region"] == region and p["type"] in types and p["os"] in products
        ]
        start = int(form.get("NextToken") or 0)
        page = found[start : start + fake.spot_page]
        items = "".join(
            f"<item><instanceType>{p['type']}</instanceType>"
            f"<productDescription>{p['os']}</productDescription>"
            f"<spotPrice>{p['price']}</spotPrice><timestamp>{p['time']}</timestamp>"
            f"<availabilityZone>{p['zone']}</availabilityZone></item>"
            for p in page
        )
        token = (
            f"<nextToken>{start + len(page)}</nextToken>" if start + len(page) < len(found) else ""
        )
        xml = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<DescribeSpotPriceHistoryResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
            f"<requestId>r-{start}</requestId><spotPriceHistorySet>{items}</spotPriceHistorySet>"
            f"{token}</DescribeSpotPriceHistoryResponse>"
        )
        self._send(200, xml.encode(), "text/xml;charset=UTF-8")

    def do_GET(self) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path.startswith("/v1/services/"):
            self._billing(parts.path, query)
            return
        fake.requests.append(("azure", query))
        if parts.path != "/api/retail/prices":
            self._send(404, b"{}", "application/json")
            return
        if "azure" in fake.fail:
            self._send(500, b'{"Error": "boom"}', "application/json")
            return
        if self._throttled("azure"):
            self._send(429, b"{}", "application/json", {"Retry-After": "0"})
            return
        text = query.get("$filter", "")
        region = re.search(r"armRegionName eq '([^']*)'", text)
        skus = set(re.findall(r"armSkuName eq '([^']*)'", text))
        found = [
            item
            for item in fake.azure
            if (region is None or item["armRegionName"] == region.group(1))
            and (fake.loose or not skus or item["armSkuName"] in skus)
            and (
                fake.loose
                or "priceType eq 'Consumption'" not in text
                or item["type"] == "Consumption"
            )
        ]
        skip = int(query.get("$skip", 0))
        if skip in fake.empty_page and "again" not in query:
            link = f"{fake.base}/api/retail/prices?{urlencode({**query, 'again': '1'})}"
            self._send(
                200,
                json.dumps({"Items": [], "Count": 0, "NextPageLink": link}).encode(),
                "application/json",
            )
            return
        page = found[skip : skip + fake.azure_page]
        more = skip + len(page) < len(found)
        link = None
        if more and skip not in fake.lost_link:
            rest = {k: v for k, v in query.items() if k != "again"}
            link = f"{fake.base}/api/retail/prices?{urlencode({**rest, '$skip': skip + len(page)})}"
        answer = {
            "BillingCurrency": "USD",
            "CustomerEntityId": "Default",
            "CustomerEntityType": "Retail",
            "Items": page,
            "NextPageLink": link,
            "Count": len(page),
        }
        self._send(200, json.dumps(answer).encode(), "application/json")

    def _billing(self, path: str, query: dict[str, str]) -> None:
        """Cloud Billing Catalog `services/{id}/skus`, paged by pageSize and pageToken."""
        fake = self.fake
        fake.requests.append(("gcp", {"path": path, **query}))
        if "gcp" in fake.fail:
            self._send(500, b'{"error": {"code": 500}}', "application/json")
            return
        if self._throttled("gcp"):
            self._send(
                429,
                b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}',
                "application/json",
                {"Retry-After": "0"},
            )
            return
        if "vertex" in fake.fail and "C7E2-9256-1C43" in path:
            self._send(403, b'{"error": {"code": 403}}', "application/json")
            return
        services = {"6F81-5844-456A": fake.skus, "C7E2-9256-1C43": fake.vertex}
        listed = services.get(path.removeprefix("/v1/services/").removesuffix("/skus"))
        if listed is None or not path.endswith("/skus"):
            self._send(404, b'{"error": {"code": 404}}', "application/json")
            return
        start = int(query.get("pageToken") or 0)
        size = min(fake.gcp_page, int(query.get("pageSize", 5000)))
        page = listed[start : start + size]
        more = start + size < len(listed)
        answer = {"skus": page, "nextPageToken": str(start + size) if more else ""}
        self._send(200, json.dumps(answer).encode(), "application/json")


def _ec2_error(code: str, message: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>{code}</Code>'
        f"<Message>{message}</Message></Error></Errors><RequestID>x</RequestID></Response>"
    ).encode()


@contextmanager
def serve(fake: FakePrices) -> Iterator[str]:
    handler = type("Handler", (_Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    fake.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake.base
    finally:
        server.shutdown()
        server.server_close()
