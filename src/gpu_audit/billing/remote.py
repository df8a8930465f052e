"""The billing query where the bill already lives: Athena (the AWS FOCUS table) and BigQuery
(GCP's FOCUS export). The one query definition is rendered in the engine's dialect by SQLGlot;
only the aggregate rows come back, read page by page and typed as DuckDB would type them. The
query is the daily one (`aggregate(..., by_day=True)`: each group's UTC day last), so a remote
engine's bill has its forecast and rises as DuckDB's has (billing/daily.py).

Least privilege (docs/billing.md): Athena `athena:StartQueryExecution`, `GetQueryExecution`,
`GetQueryResults`, Glue `GetTable`/`GetPartitions` on the FOCUS table, S3 read on its data and
write on the workgroup's result location; BigQuery `roles/bigquery.jobUser` on the project that
runs the job and `roles/bigquery.dataViewer` on the FOCUS dataset.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import quote

from gpu_audit.billing.daily import DayGroup
from gpu_audit.billing.duck import group
from gpu_audit.billing.period import Period
from gpu_audit.billing.query import GROUP_COLUMNS, SUM_COLUMNS, Source, aggregate, render
from gpu_audit.core.endpoint import endpoint
from gpu_audit.errors import CollectorError, ConfigError

ENGINES = {"athena": "aws", "bigquery": "gcp"}  # engine → the cloud whose FOCUS table it holds
BIGQUERY_ENDPOINT_ENV = "GPU_AUDIT_BIGQUERY_ENDPOINT"
BIGQUERY_SCOPE = "https://www.googleapis.com/auth/bigquery.readonly"
_TEXT = "VARCHAR"
# The tables' columns as each cloud documents them (FOCUS 1.2 names; types as the engine holds
# them). Athena: the AWS Data Exports FOCUS 1.2 table with AWS columns (Glue crawler types);
# BigQuery: the FOCUS usage cost export table.
# FOCUS columns both tables hold as text, and what each adds (Athena: AWS's usage type and tags
# as a map; BigQuery: FOCUS 1.3's provider name, tags as JSON and GCP's labels).
_SHARED_TEXT = (
    "BillingCurrency",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "PricingCategory",
    "SubAccountId",
    "RegionId",
    "ResourceId",
    "CapacityReservationId",
    "CapacityReservationStatus",
    "CommitmentDiscountId",
    "CommitmentDiscountStatus",
    "ServiceName",
    "SkuPriceDetails",
    "ConsumedUnit",
    "ServiceCategory",
)
_MONEY = dict.fromkeys(
    ("BilledCost", "EffectiveCost", "ConsumedQuantity", "ListCost"), "DECIMAL(38,10)"
)
SCHEMAS: dict[str, dict[str, str]] = {
    "athena": {
        **dict.fromkeys((*_SHARED_TEXT, "ProviderName", "SkuMeter", "x_UsageType"), _TEXT),
        **_MONEY,
        **dict.fromkeys(
            ("ChargePeriodStart", "ChargePeriodEnd", "BillingPeriodStart"), "TIMESTAMP"
        ),
        "Tags": "MAP(VARCHAR, VARCHAR)",
    },
    "bigquery": {
        **dict.fromkeys((*_SHARED_TEXT, "ServiceProviderName", "Tags"), _TEXT),
        **_MONEY,
        **dict.fromkeys(
            ("ChargePeriodStart", "ChargePeriodEnd", "BillingPeriodStart"),
            "TIMESTAMP WITH TIME ZONE",
        ),
        "x_Labels": "STRUCT(Key VARCHAR, Value VARCHAR)[]",
    },
}


def table_reference(table: str) -> str:
    """`db.table` or `project.dataset.table`, each part quoted (in DuckDB's dialect: SQLGlot
    renders the engine's own quoting)."""
    parts = [part.strip().strip('`"') for part in table.split(".")]
    if not all(parts) or len(parts) > 3:
        raise ConfigError(f"--table: expected db.table or project.dataset.table, got {table!r}")
    return ".".join('"' + part.replace('"', '""') + '"' for part in parts)


def remote_sql(
    engine: str,
    table: str,
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Sequence[tuple[str, str, str, int]],
) -> str:
    """The billing query for `engine` over `table`, grouped by day too (the day last)."""
    if engine not in ENGINES:
        raise ConfigError(f"--engine: one of duckdb, {', '.join(ENGINES)}")
    source = Source(ENGINES[engine], table_reference(table), SCHEMAS[engine])
    sql = aggregate([source], period, tag_keys, gpu_types, dialect=engine, by_day=True)
    return render(sql, engine)


def typed_row(values: Sequence[str | None], tag_keys: Sequence[str]) -> tuple[Any, ...]:
    """An aggregate row as text (both engines answer in strings) typed as DuckDB returns it;
    an answer of another shape is one CollectorError, never a traceback."""
    width = len(GROUP_COLUMNS) + len(tag_keys) + len(SUM_COLUMNS) + 1  # keys, tags, sums, day
    if len(values) != width:
        raise CollectorError(
            f"billing query: an answer row has {len(values)} columns where the query has {width}"
        )
    try:
        return tuple(_typed(index, value, len(tag_keys)) for index, value in enumerate(values))
    except (ValueError, InvalidOperation):
        raise CollectorError(
            f"billing query: a value of the answer is not of its column's type: {values!r:.200}"
        ) from None


# Any: an SDK's untyped objects (boto3, google-auth)
def _typed(index: int, value: str | None, tags: int) -> Any:
    if value is None or value == "":
        return None
    tags_end = len(GROUP_COLUMNS) + tags
    if index == tags_end + len(SUM_COLUMNS):  # the day (`YYYY-MM-DD`; BigQuery's DATE too)
        return date.fromisoformat(value.strip()[:10])
    if index < len(GROUP_COLUMNS):
        name = GROUP_COLUMNS[index]
    elif index >= tags_end:
        name = SUM_COLUMNS[index - tags_end]
    else:
        return value  # a tag's value
    if name in ("in_period", "commitment_unused"):
        return value.lower() == "true"
    if name in ("gpus", "rows", "over_list_rows", "negative_rows"):
        return int(float(value))
    if name in ("first_charge", "last_charge"):
        return _time(value)
    if index >= tags_end:  # the money and quantity sums
        return Decimal(value)
    return value


def _time(value: str) -> datetime:
    text = value.strip().replace(" UTC", "+00:00").replace("Z", "+00:00")
    try:  # BigQuery answers a TIMESTAMP as seconds since the epoch (`1.7513856E9`)
        return datetime.fromtimestamp(float(text), tz=UTC)
    except ValueError:
        pass
    parsed = datetime.fromisoformat(text.replace(" ", "T", 1))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def day_group(values: Sequence[str | None], tag_keys: Sequence[str]) -> DayGroup:
    """An answer row as the daily group DuckDB's daily read gives (billing/daily.py)."""

    row = typed_row(values, tag_keys)
    return DayGroup(row[-1], group(row[:-1], tag_keys))


def run_athena(
    sql: str,
    tag_keys: Sequence[str],
    workgroup: str | None,
    output: str | None,
    timeout_s: float = 900.0,
) -> list[DayGroup]:
    """StartQueryExecution, wait for it, read GetQueryResults page by page."""
    import boto3  # keeps boto3 off start-up
    from botocore.exceptions import BotoCoreError, ClientError  # keeps botocore off start-up

    session = boto3.session.Session()
    if not session.region_name:  # boto3 would raise NoRegionError (or build `athena..` from "")
        raise ConfigError(
            "athena: no AWS region: set AWS_REGION (or region in ~/.aws/config) to the "
            "region of the Athena table"
        )
    client = session.client("athena")
    start: dict[str, Any] = {"QueryString": sql}
    if workgroup:
        start["WorkGroup"] = workgroup
    if output:
        start["ResultConfiguration"] = {"OutputLocation": output}
    try:
        query_id = client.start_query_execution(**start)["QueryExecutionId"]
        deadline = time.monotonic() + timeout_s
        while True:
            status = client.get_query_execution(QueryExecutionId=query_id)["QueryExecution"]
            state = status["Status"]["State"]
            if state == "SUCCEEDED":
                break
            if state in ("FAILED", "CANCELLED"):
                reason = status["Status"].get("StateChangeReason", state)
                raise CollectorError(f"athena: query {query_id} {state.lower()}: {reason}")
            if time.monotonic() > deadline:
                raise CollectorError(
                    f"athena: query {query_id} still {state} after {timeout_s:g} s"
                )
            time.sleep(0.5)
        rows: list[DayGroup] = []
        header = True
        for page in client.get_paginator("get_query_results").paginate(QueryExecutionId=query_id):
            for row in page["ResultSet"]["Rows"]:
                if header:  # Athena's first row of the first page is the column names
                    header = False
                    continue
                cells = [cell.get("VarCharValue") for cell in row["Data"]]
                rows.append(day_group(cells, tag_keys))
        return rows
    except (ClientError, BotoCoreError) as exc:
        raise CollectorError(f"athena: {str(exc).splitlines()[0]}") from None


def run_bigquery(
    sql: str, tag_keys: Sequence[str], project: str, timeout_s: float = 900.0
) -> list[DayGroup]:
    """jobs.query, then jobs.getQueryResults page by page, through an authorized session
    (`GPU_AUDIT_BIGQUERY_ENDPOINT` on loopback: anonymous, for tests)."""
    from google.auth.transport.requests import AuthorizedSession  # keeps google off start-up

    api = endpoint(BIGQUERY_ENDPOINT_ENV)
    base = api.base("https://bigquery.googleapis.com")
    credentials = _anonymous() if api.anonymous else _default_credentials()
    with AuthorizedSession(credentials) as session:
        return _pages(session, base, project, sql, tag_keys, timeout_s)


def _pages(
    session: Any, base: str, project: str, sql: str, tag_keys: Sequence[str], timeout_s: float
) -> list[DayGroup]:
    url = f"{base}/bigquery/v2/projects/{quote(project, safe='')}/queries"
    body = {"query": sql, "useLegacySql": False, "timeoutMs": 10000, "maxResults": 10000}
    answer = _send(session.post, url, json=body)
    job = answer.get("jobReference", {})
    deadline = time.monotonic() + timeout_s
    rows: list[DayGroup] = []
    while True:
        token = None
        if answer.get("jobComplete"):
            for row in answer.get("rows") or []:
                found = row.get("f") if isinstance(row, dict) else None
                cells = [c.get("v") if isinstance(c, dict) else None for c in found or []]
                rows.append(day_group(cells, tag_keys))
            token = answer.get("pageToken")
            if not token:
                return rows
        elif time.monotonic() > deadline:
            raise CollectorError(f"bigquery: job {job.get('jobId')} not done after {timeout_s:g} s")
        params: dict[str, Any] = {"maxResults": 10000, "timeoutMs": 10000}
        if token:
            params["pageToken"] = token
        if job.get("location"):
            params["location"] = job["location"]
        page = f"{url}/{quote(str(job.get('jobId')), safe='')}"
        answer = _send(session.get, page, params=params)


def _anonymous() -> Any:  # Any: an SDK's untyped objects (boto3, google-auth)
    from google.auth.credentials import AnonymousCredentials  # keeps google off start-up

    return AnonymousCredentials()


def _default_credentials() -> Any:  # Any: an SDK's untyped objects (boto3, google-auth)
    import google.auth  # keeps google off start-up
    from google.auth.exceptions import GoogleAuthError  # keeps google off start-up

    try:
        credentials, _ = google.auth.default(scopes=[BIGQUERY_SCOPE])
    except GoogleAuthError as exc:
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CollectorError(
            f"bigquery: no Application Default Credentials: {cause[:300]}"
        ) from None
    return credentials


def _send(method: Any, url: str, **options: Any) -> dict[str, Any]:
    import requests  # keeps requests off start-up

    try:
        return _answer(method(url, timeout=60, **options))
    except requests.RequestException as exc:
        raise CollectorError(
            f"bigquery: {type(exc).__name__}: cannot reach {url.split('?')[0]}"
        ) from None


def _answer(response: Any) -> dict[str, Any]:
    if response.status_code != 200:
        try:
            message = response.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = response.reason
        raise CollectorError(f"bigquery: HTTP {response.status_code}: {str(message)[:200]}")
    try:
        body = response.json()
    except ValueError:
        raise CollectorError("bigquery: the answer is not JSON") from None
    if not isinstance(body, dict):
        raise CollectorError("bigquery: the answer is not a JSON object")
    return body
