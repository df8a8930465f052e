"""Cloud Monitoring and Cloud Storage reads for the GCP collector, over an AuthorizedSession.

google-cloud-monitoring has no REST transport and brings gRPC, so its two calls are plain JSON GETs:
`projects.timeSeries.list` (GPU utilization) and `buckets.get` (bucket locations).
"""

from __future__ import annotations

import math
import re
import threading
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from gpu_audit.core.resource import Utilization

# Retried statuses on these GETs (the collector mounts urllib3 retries for them; see `session`).
TRANSIENT_STATUSES = (429, 500, 502, 503, 504)
ALIGNMENT_SECONDS = 300  # utilization is averaged per 5 minutes per GPU before avg/p95 are taken

# Multi-regions hold data in the regions of their geography, so compute there is co-located.
# Names are as Compute Engine spells regions.
MULTI_REGIONS: Mapping[str, tuple[str, ...]] = {
    "US": (
        "us-central1",
        "us-east1",
        "us-east4",
        "us-east5",
        "us-south1",
        "us-west1",
        "us-west2",
        "us-west3",
        "us-west4",
    ),
    "EU": (
        "europe-central2",
        "europe-north1",
        "europe-north2",
        "europe-southwest1",
        "europe-west1",
        "europe-west3",
        "europe-west4",
        "europe-west8",
        "europe-west9",
        "europe-west10",
        "europe-west12",
    ),
    "ASIA": (
        "asia-east1",
        "asia-east2",
        "asia-northeast1",
        "asia-northeast2",
        "asia-northeast3",
        "asia-south1",
        "asia-south2",
        "asia-southeast1",
        "asia-southeast2",
    ),
}

# Predefined dual-regions. Configurable dual-regions name theirs in customPlacementConfig.
DUAL_REGIONS: Mapping[str, tuple[str, ...]] = {
    "ASIA1": ("asia-northeast1", "asia-northeast2"),
    "EUR4": ("europe-north1", "europe-west4"),
    "EUR5": ("europe-west1", "europe-west2"),
    "EUR7": ("europe-west2", "europe-west3"),
    "EUR8": ("europe-west3", "europe-west6"),
    "NAM4": ("us-central1", "us-east1"),
}


class RestError(Exception):
    """A Monitoring or Storage read that failed after its retries; the message names the call."""


def get_json(session: Any, url: str, params: Mapping[str, str], timeout: float) -> dict[str, Any]:
    """GET a JSON resource; any failure (status or connection) becomes a one-line `RestError`."""
    import requests  # keeps requests off start-up

    try:
        response = session.get(url, params=params, timeout=timeout)
    except requests.exceptions.RequestException as exc:
        raise RestError(f"{type(exc).__name__}: {_first_line(str(exc))}") from exc
    if response.status_code != 200:
        raise RestError(f"HTTP {response.status_code}: {_error_message(response)}")
    try:
        body = response.json()
    except ValueError as exc:
        raise RestError(f"not JSON: {_first_line(response.text)}") from exc
    if not isinstance(body, dict):
        raise RestError("unexpected response: not a JSON object")
    return body


def _error_message(response: Any) -> str:
    try:
        error = response.json().get("error", {})
        return _first_line(str(error.get("message") or response.reason))
    except (ValueError, AttributeError):
        return _first_line(str(response.reason or response.text))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else "no detail"


def rfc3339(moment: datetime) -> str:
    """A UTC time as RFC 3339 to the second (`2026-12-04T03:00:00Z`)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def fetch_utilization(
    session: Any,
    base: str,
    project: str,
    metric_type: str,
    window_hours: float,
    now: datetime,
    timeout: float,
    resource_type: str = "gce_instance",
    id_label: str = "instance_id",
    scale: float = 1.0,
) -> dict[str, Utilization]:
    """GPU utilization per resource id (the `id_label` resource label) over the window; no
    series, no entry. `scale` turns a fraction (Vertex AI's 0-1 metrics) into a percentage."""
    url = f"{base}/v3/projects/{project}/timeSeries"
    params = {
        "filter": f'metric.type = "{metric_type}" AND resource.type = "{resource_type}"',
        "interval.startTime": rfc3339(now - timedelta(hours=window_hours)),
        "interval.endTime": rfc3339(now),
        "aggregation.alignmentPeriod": f"{ALIGNMENT_SECONDS}s",
        "aggregation.perSeriesAligner": "ALIGN_MEAN",
        "view": "FULL",
    }
    samples: dict[str, list[float]] = defaultdict(list)
    seen_tokens: set[str] = set()
    while True:
        body = get_json(session, url, params, timeout)
        for series in body.get("timeSeries") or ():
            instance_id = (series.get("resource") or {}).get("labels", {}).get(id_label)
            if not instance_id:
                continue
            for point in series.get("points") or ():
                value = _point_value(point.get("value") or {})
                if value is not None:
                    samples[str(instance_id)].append(min(100.0, value * scale))
        token = body.get("nextPageToken")
        if not token or token in seen_tokens:
            break
        seen_tokens.add(token)
        params = {**params, "pageToken": token}
    return {iid: _summarise(values, window_hours) for iid, values in samples.items() if values}


def _point_value(value: Mapping[str, Any]) -> float | None:
    # GAUGE DOUBLE for the Ops Agent metric; int64 arrives as a JSON string.
    for key in ("doubleValue", "int64Value"):
        if key in value:
            try:
                return float(value[key])
            except (TypeError, ValueError):
                return None
    return None


def _summarise(values: list[float], window_hours: float) -> Utilization:
    ordered = sorted(values)
    rank = max(math.ceil(0.95 * len(ordered)) - 1, 0)  # nearest-rank percentile
    return Utilization(
        gpu_avg=round(sum(ordered) / len(ordered), 2),
        gpu_p95=round(ordered[rank], 2),
        window_hours=window_hours,
    )


def bucket_refs(label: str) -> list[tuple[str, str]]:
    """(uri, bucket name) for each bucket in a label value: names or gs:// URIs, comma-separated."""
    refs: list[tuple[str, str]] = []
    for part in re.split(r"[,\s]+", label.strip()):
        name = part.removeprefix("gs://").split("/", 1)[0]
        if name:
            refs.append((part if part.startswith("gs://") else f"gs://{name}", name))
    return refs


def location_regions(bucket: Mapping[str, Any]) -> tuple[str, ...]:
    """The regions a bucket's data lives in, lower-case as Compute Engine names regions."""
    custom = (bucket.get("customPlacementConfig") or {}).get("dataLocations")
    if custom:
        return tuple(str(location).lower() for location in custom)
    location = str(bucket.get("location") or "").upper()
    if not location:
        raise RestError("bucket has no location")
    members = MULTI_REGIONS.get(location) or DUAL_REGIONS.get(location)
    return members if members else (location.lower(),)


class BucketLocations:
    """`buckets.get` look-ups, each bucket read once per scan (its failure too), across projects."""

    def __init__(self, base: str, timeout: float) -> None:
        self.base = base
        self.timeout = timeout
        self._known: dict[str, tuple[str, ...] | RestError] = {}
        self._lock = threading.Lock()

    def regions(self, session: Any, name: str) -> tuple[str, ...]:
        """The bucket's regions; raises `RestError` when it cannot be read."""
        with self._lock:
            known = self._known.get(name)
        if known is None:
            try:
                url = f"{self.base}/storage/v1/b/{name}"
                params = {"fields": "name,location,locationType,customPlacementConfig"}
                known = location_regions(get_json(session, url, params, self.timeout))
            except RestError as exc:
                known = exc
            with self._lock:
                self._known.setdefault(name, known)
        if isinstance(known, RestError):
            raise known
        return known
