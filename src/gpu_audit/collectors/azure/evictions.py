"""`catalog refresh --provider azure --interruptions`: Azure's spot eviction rates from Resource
Graph's `SpotResources` table (one read call, `Microsoft.ResourceGraph/resources/read`, paged by
`$skipToken`, at tenant scope), converted as catalog/evictions.py says, written atomically with
the other providers' rows of OUTPUT kept. Through the Azure SDK's own client (the collector's
endpoint, credential and bounded retry: a 429 is retried after its Retry-After)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog.evictions import SOURCE, TYPE, eviction_rows
from gpu_audit.catalog.interruptions import read_rates, write_rows
from gpu_audit.catalog.lookup import instance_types
from gpu_audit.collectors.azure.connect import Arm
from gpu_audit.collectors.azure.errors import error_name, one_line
from gpu_audit.collectors.azure.settings import AzureSettings
from gpu_audit.errors import CollectorError, ConfigError

PAGE_ROWS = 1000  # the service's maximum
MAX_PAGES = 500  # a bound on a paging loop a service could keep going
QUERY = (
    "SpotResources | where type =~ '{type}' | where sku.name in~ ({sizes}){regions} "
    "| order by id asc"
)


def _types() -> list[str]:
    return [spec.instance_type for spec in instance_types() if spec.cloud == "azure"]


def _quoted(names: list[str]) -> str:
    return ", ".join("'" + n.lower().replace("'", "") + "'" for n in names)


def query_text(types: list[str], regions: tuple[str, ...]) -> str:
    """The Resource Graph query for these VM sizes' eviction bands (every region when none is
    named); names are lower-cased and stripped of quotes before they are quoted."""
    where = f" | where location in~ ({_quoted(list(regions))})" if regions else ""
    return QUERY.format(type=TYPE, sizes=_quoted(types), regions=where)


def _rows(client: Any, text: str) -> tuple[list[Any], int]:
    """Every row of the query at tenant scope (no subscriptions named), and the pages read."""
    from azure.mgmt.resourcegraph.models import QueryRequest, QueryRequestOptions  # azure extra

    rows: list[Any] = []
    token: str | None = None
    for page in range(1, MAX_PAGES + 1):
        options = QueryRequestOptions(top=PAGE_ROWS, skip_token=token, result_format="objectArray")
        answer = client.resources(QueryRequest(query=text, options=options))
        data = answer.data
        if not isinstance(data, list):
            raise ConfigError("azure resource graph: SpotResources: expected data as a list")
        rows.extend(data)
        token = answer.skip_token
        if not token:
            return rows, page
    raise ConfigError(f"azure resource graph: SpotResources: more than {MAX_PAGES} pages")


def refresh_evictions(
    regions: tuple[str, ...], output: str, now: datetime | None = None
) -> tuple[int, int]:
    """(rows written, pages read): Azure rows from Resource Graph, every other provider's kept."""
    from azure.core.exceptions import AzureError  # the azure extra, imported when refreshing

    day = (now or datetime.now(UTC)).date().isoformat()
    old = read_rates(output) if os.path.exists(output) else None  # a bad file: refuse first
    arm = Arm.connect(AzureSettings())
    types = _types()
    text = query_text(types, regions)
    try:
        raw, pages = _rows(arm.graph(), text)
        rows = eviction_rows(raw, day, types, regions or None)
    except AzureError as exc:
        raise CollectorError(
            f"azure: resource graph SpotResources: {error_name(exc)}: {one_line(exc)}; "
            f"{output} left as it was"
        ) from exc
    except ConfigError as exc:
        raise CollectorError(f"{exc}; {output} left as it was") from exc
    if not rows:
        where = f" in {', '.join(regions)}" if regions else ""
        raise CollectorError(
            f"azure: resource graph has no eviction rate for a GPU size{where}; "
            f"{output} left as it was"
        )
    url = f"POST {arm.url}/providers/Microsoft.ResourceGraph/resources ({TYPE})"
    write_rows(output, old, "azure", SOURCE, url, rows, day)
    return len(rows), pages
