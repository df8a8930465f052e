"""`catalog refresh --provider gcp --interruptions --project P`: Compute Engine capacity advice
for Spot VMs (`POST compute/v1/projects/P/regions/R/advice/capacity`, a read: it creates
nothing), one call per catalog GPU machine type and region, through google-cloud-compute's own
AdviceClient (REST) with Application Default Credentials (anonymous only on a loopback
`GPU_AUDIT_GCE_ENDPOINT`); throttled and 5xx answers are retried a bounded number of times.
Converted as catalog/capacity_advice.py says, written atomically with the other providers' rows
of OUTPUT kept. A type the region does not offer (400, 404) has no row; any other failure is one
line and OUTPUT is left as it was."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog.capacity_advice import SOURCE, advice_row
from gpu_audit.catalog.interruptions import read_rates, write_rows
from gpu_audit.catalog.lookup import instance_types, regional_prices
from gpu_audit.collectors.gcp.connect import EXTRA_HINT, GCE_ENDPOINT_ENV, _default_credentials
from gpu_audit.core.endpoint import endpoint
from gpu_audit.core.redact import redact_urls
from gpu_audit.errors import CollectorError, ConfigError

ATTEMPTS = 4  # one call and three retries of a 429 or 5xx
TIMEOUT = 30.0


def pairs(regions: tuple[str, ...]) -> list[tuple[str, str]]:
    """(machine type, region): the catalog's GCP GPU types in `regions`, or in the regions the
    catalog prices each of them in."""
    found: list[tuple[str, str]] = []
    for spec in instance_types():
        if spec.cloud != "gcp":
            continue
        where = regions or tuple(q.region for q in regional_prices(spec.instance_type))
        found.extend((spec.instance_type, region) for region in where)
    return sorted(set(found), key=lambda p: (p[1], p[0]))


def _request(compute_v1: Any, kind: str) -> Any:  # Any: the gcp extra's request, untyped
    return compute_v1.CapacityAdviceRequest(
        size=1,
        instance_properties={"scheduling": {"provisioning_model": "SPOT"}},
        instance_flexibility_policy={
            "instance_selections": {"gpu-audit": {"machine_types": [kind]}}
        },
        distribution_policy={"target_shape": "ANY_SINGLE_ZONE"},
    )


def _retry() -> Any:  # a google.api_core Retry (the gcp extra, untyped)
    from google.api_core import exceptions  # the gcp extra, imported when refreshing
    from google.api_core.retry import Retry  # the gcp extra

    left = [ATTEMPTS - 1]
    transient = (
        exceptions.TooManyRequests,
        exceptions.ServiceUnavailable,
        exceptions.InternalServerError,
        exceptions.BadGateway,
    )

    def predicate(exc: Exception) -> bool:
        if not isinstance(exc, transient) or left[0] <= 0:
            return False
        left[0] -= 1
        return True

    return Retry(predicate=predicate, initial=0.1, maximum=1.0, multiplier=2.0, timeout=TIMEOUT)


def refresh_advice(
    project: str | None, regions: tuple[str, ...], output: str, now: datetime | None = None
) -> tuple[int, int, int]:
    """(rows written, calls, pairs with no advice): GCP rows, every other provider's kept."""
    if not project:
        raise ConfigError(
            "catalog refresh --provider gcp --interruptions: --project is required (capacity "
            "advice is asked of a project)"
        )
    from google.api_core import exceptions  # the gcp extra, imported when refreshing
    from google.api_core.client_options import ClientOptions  # the gcp extra

    try:
        from google.cloud import compute_v1  # the gcp extra
    except ImportError as exc:  # pragma: no cover - the gcp extra is a test dependency
        raise CollectorError(f"gcp: {EXTRA_HINT}") from exc
    day = (now or datetime.now(UTC)).date().isoformat()
    old = read_rates(output) if os.path.exists(output) else None  # a bad file: refuse first
    gce = endpoint(GCE_ENDPOINT_ENV)
    if gce.anonymous:
        from google.auth.credentials import AnonymousCredentials  # the gcp extra

        credentials: Any = AnonymousCredentials()
    else:
        credentials = _default_credentials()
    rows: list[dict[str, Any]] = []
    calls = missing = 0
    with compute_v1.AdviceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=gce.url) if gce.url else None,
        credentials=credentials,
    ) as client:
        for kind, region in pairs(regions):
            calls += 1
            try:
                answer = client.capacity(
                    project=project,
                    region=region,
                    capacity_advice_request_resource=_request(compute_v1, kind),
                    retry=_retry(),
                    timeout=TIMEOUT,
                )
            except (exceptions.BadRequest, exceptions.NotFound):
                missing += 1  # not offered there: no row, not evaluated
                continue
            except exceptions.GoogleAPICallError as exc:
                text = (getattr(exc, "message", "") or str(exc)).strip()
                message = redact_urls(text.splitlines()[0][:300]) if text else ""
                raise CollectorError(
                    f"gcp: advice.capacity {kind} in {region}: {exc.code or type(exc).__name__}"
                    f" {message}; {output} left as it was"
                ) from exc
            try:
                row = advice_row(
                    type(answer).to_dict(answer, preserving_proto_field_name=False),
                    kind,
                    region,
                    day,
                )
            except ConfigError as exc:
                raise CollectorError(f"{exc}; {output} left as it was") from exc
            if row is None:
                missing += 1
            else:
                rows.append(row)
    if not rows:
        raise CollectorError(
            f"gcp: capacity advice gave no Spot uptime for a GPU type in project {project}; "
            f"{output} left as it was"
        )
    url = f"POST compute/v1/projects/{project}/regions/{{region}}/advice/capacity (SPOT)"
    try:
        write_rows(output, old, "gcp", SOURCE, url, rows, day)
    except ConfigError as exc:
        raise CollectorError(f"{exc}; {output} left as it was") from exc
    return len(rows), calls, missing
