"""Inventory through Azure Resource Graph: whole rows filtered by type, up to 1,000 subscriptions
a query, paged with `$skipToken`.

Resource Graph leaves out, without an error, every subscription the credential cannot read, so
the subscriptions are asked for first (`ResourceContainers`): one named but not returned is a
coverage gap, never an empty result.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from gpu_audit.collectors.azure.connect import Arm
from gpu_audit.collectors.azure.errors import credential_failure, error_name, one_line
from gpu_audit.collectors.azure.mapping import TYPES
from gpu_audit.core.results import CoverageGap

MAX_SUBSCRIPTIONS = 1000  # per query, the service's limit
PAGE_ROWS = 1000  # rows per page, the service's maximum
SUBSCRIPTIONS_QUERY = "ResourceContainers | where type =~ 'microsoft.resources/subscriptions'"
RESOURCES_QUERY = (
    "Resources | where type in~ ({types}) | order by id asc"  # whole rows: no projection
)


def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), MAX_SUBSCRIPTIONS):
        yield list(items[start : start + MAX_SUBSCRIPTIONS])


def query(client: Any, subscriptions: list[str], text: str) -> list[dict[str, Any]]:
    """Every row of one query over these subscriptions, following `$skipToken`."""
    # keeps azure off start-up
    from azure.mgmt.resourcegraph.models import QueryRequest, QueryRequestOptions

    rows: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        options = QueryRequestOptions(top=PAGE_ROWS, skip_token=token, result_format="objectArray")
        answer = client.resources(
            QueryRequest(subscriptions=subscriptions, query=text, options=options)
        )
        rows.extend(row for row in answer.data or [] if isinstance(row, dict))
        token = answer.skip_token
        if not token:
            return rows


def graph_rows(
    arm: Arm, subscriptions: Sequence[str]
) -> tuple[list[dict[str, Any]], list[CoverageGap]]:
    """The rows of VMs, scale sets and workspaces in the readable subscriptions, and a gap for
    each subscription Resource Graph did not return (or could not be asked about)."""
    from azure.core.exceptions import AzureError  # keeps azure off start-up

    client = arm.graph()
    types = ", ".join(f"'{t}'" for t in TYPES)
    rows: list[dict[str, Any]] = []
    gaps: list[CoverageGap] = []
    for chunk in _chunks(subscriptions):
        try:
            seen = {
                str(row.get("subscriptionId", "")).lower()
                for row in query(client, chunk, SUBSCRIPTIONS_QUERY)
            }
            readable = [s for s in chunk if s.lower() in seen]
            if readable:
                rows.extend(query(client, readable, RESOURCES_QUERY.format(types=types)))
        except AzureError as exc:  # an HTTP error after retries, a timeout, a refused connection
            if credential_failure(exc):
                raise
            gaps.extend(_gap(s, error_name(exc), one_line(exc)) for s in chunk)
            continue
        gaps.extend(
            _gap(
                s,
                "NotReadable",
                "absent from Resource Graph results: the credential cannot read it, "
                "or it does not exist (grant Reader, or the role in docs/permissions.md)",
            )
            for s in chunk
            if s.lower() not in seen
        )
    return rows, gaps


def _gap(subscription: str, error: str, message: str) -> CoverageGap:
    return CoverageGap(
        provider="azure",
        scope=f"subscription {subscription}",
        error=error,
        message=message,
        account=subscription,
    )
