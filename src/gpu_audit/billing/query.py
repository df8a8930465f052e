"""The one billing query: each source's columns normalised, GPU rows classified, then summed.

It is written once, in DuckDB's dialect, and rendered for the other engines by SQLGlot
(`render`): DuckDB runs it on files, Athena on the AWS FOCUS table, BigQuery on the GCP FOCUS
table, and only aggregates come back. Which rows are GPUs is decided from each row's own SKU
columns, never from its resource id:
- `SkuPriceDetails.InstanceType` / `GpuCount` where present;
- AWS: the instance type in the usage type (`x_UsageType`, FOCUS 1.0; `SkuMeter`, 1.2):
  `USE1-BoxUsage:p5.48xlarge`, `SpotUsage:…`, `UnusedBox:…`, `Train:ml.p4d.24xlarge`;
- Azure: the VM size in `x_SkuDetails.ServiceType` on `x_SkuMeterCategory` `Virtual Machines`;
- GCP: the SKU description (`ChargeDescription`): a GPU SKU (`Nvidia Tesla A100 GPU running in
  Americas`, quantity in GPU-hours) or the core/RAM SKU of a GPU machine family (spend only).
Instance types become GPUs through the catalog, joined in as a small table. Money is summed as
DECIMAL(38,10), exactly; each group is rounded once, in Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpu_audit.billing.columns import (
    GCP_GPU,
    GCP_GPU_COMMITMENT,
    GPU_MACHINE,
    TEAM_TAG,
    USAGE_KIND,
    timestamp,
)
from gpu_audit.billing.columns import GROUP_COLUMNS as GROUP_COLUMNS
from gpu_audit.billing.columns import MONEY as MONEY
from gpu_audit.billing.columns import REQUIRED as REQUIRED
from gpu_audit.billing.columns import SUM_COLUMNS as SUM_COLUMNS
from gpu_audit.billing.columns import Source as Source
from gpu_audit.billing.columns import literal as literal
from gpu_audit.billing.columns import quote as quote
from gpu_audit.billing.period import Period
from gpu_audit.billing.rows import COUNTED, normalised
from gpu_audit.billing.rows import summed_first as summed_first


def _catalog_table(gpu_types: Iterable[tuple[str, str, str, int]]) -> str:
    """The catalog's GPU instance types as a table: one VALUES list (BigQuery: `UNNEST` of
    structs). ~150 `SELECT … UNION ALL` arms made DuckDB bind and plan longer: EXPLAIN of one
    day's query 122-125 ms against 68-110 ms, where reading the file takes ~45 ms."""
    rows = [
        f"({literal(cloud)}, {literal(key)}, {literal(model)}, {int(count)})"
        for cloud, key, model, count in gpu_types
    ]
    if not rows:
        return "SELECT NULL AS cloud, NULL AS type_key, NULL AS model, 0 AS gpus"
    return f"SELECT * FROM (VALUES {', '.join(rows)}) AS types (cloud, type_key, model, gpus)"


def aggregate(
    sources: Sequence[Source],
    period: Period,
    tag_keys: Sequence[str],
    gpu_types: Iterable[tuple[str, str, str, int]],
    dialect: str = "duckdb",
    by_day: bool = False,
) -> str:
    """The query, in DuckDB's dialect (with the source adapters written for `dialect`);
    `by_day` adds the UTC day of each group's charges as a last column (billing/daily.py)."""
    union = " UNION ALL ".join(f"({normalised(s, tag_keys, dialect)})" for s in sources)
    start, end = timestamp(period.start), timestamp(period.end)
    gpus = "COALESCE(f.gpus_stated, g.gpus)"
    gcp_gpu = (
        "CASE WHEN f.cloud = 'gcp' THEN "
        f"NULLIF(regexp_extract(f.description, {literal(GCP_GPU)}, 1), '') END"
    )
    machine = (
        "(f.cloud = 'gcp' AND (regexp_matches(COALESCE(f.description, ''), "
        f"{literal(GPU_MACHINE)}) "
        "OR (f.unused AND regexp_matches(COALESCE(f.description, ''), "
        f"{literal(GCP_GPU_COMMITMENT)}))))"
    )
    tags = [quote("tag:" + key) for key in tag_keys]
    detail = "r.in_period AND r.kind <> 'other'"
    keyed = [
        "r.cloud",
        "r.currency",
        "r.in_period",
        "r.kind",
        "CASE WHEN r.kind = 'other' OR NOT r.in_period THEN r.reason END",
        *(
            f"CASE WHEN {detail} THEN r.{name} END"
            for name in (
                "account",
                "region",
                "instance_type",
                "gpu_model",
                "gpus",
                "gcp_gpu",
                "capacity",
                "service",
                "usage_kind",
                "resource_id",
                "reservation_id",
            )
        ),
        "CASE WHEN r.in_period THEN strftime(r.charge_start, '%Y-%m') END",
        "strftime(r.billing_period_start, '%Y-%m-%d')",
        *(
            f"CASE WHEN {detail} THEN r.{name} END"
            for name in (
                "commitment_id",
                "capacity_id",
                "commitment_unused",
            )
        ),
        *(f"CASE WHEN {detail} THEN r.{tag} END" for tag in tags),
    ]
    names = [*GROUP_COLUMNS, *(f"tag:{key}" for key in tag_keys)]
    select = [f"{expr} AS {quote(name)}" for expr, name in zip(keyed, names, strict=True)]
    sums = [
        "SUM(r.effective) AS effective",
        "SUM(r.billed) AS billed",
        "SUM(r.quantity) AS quantity",
        "SUM(r.gpu_hours) AS gpu_hours",
        "SUM(CASE WHEN upper(COALESCE(r.charge_class, '')) = 'CORRECTION' THEN r.effective END) "
        "AS corrections",
        "SUM(r.row_count) AS row_count",
        "MIN(r.charge_start) AS first_charge",
        "MAX(COALESCE(r.charge_end, r.charge_start)) AS last_charge",
        "SUM(r.list) AS list",
        *(f"SUM(r.{name}) AS {name}" for name in COUNTED),
    ]
    positions = [str(i) for i in range(1, len(select) + 1)]
    if by_day:  # also by the UTC day of the charge's start (GPU rows in the period; else NULL)
        sums.append(f"CASE WHEN {detail} THEN CAST(r.charge_start AS DATE) END AS charge_day")
        positions.append(str(len(select) + len(sums)))
    teams_cte, team_arm, team_join = _team_transfer(tag_keys)
    return f"""
WITH focus AS ({union}),
catalog AS ({_catalog_table(gpu_types)}),
typed AS (
  SELECT f.*, {gpus} AS gpus, g.model AS gpu_model, {gcp_gpu} AS gcp_gpu, {machine} AS gpu_machine,
    COALESCE(CASE WHEN f.period_flag IS NOT NULL THEN f.period_flag = 0
      ELSE f.charge_start >= {start} AND f.charge_start < {end} END, false) AS in_period
  FROM focus AS f
  LEFT JOIN catalog AS g
    ON g.cloud = f.cloud AND g.type_key = lower(regexp_replace(f.instance_type, '^ml\\.', ''))
),
k AS (
  SELECT t.*,
    CASE
      WHEN upper(COALESCE(t.charge_category, '')) <> 'USAGE' THEN 'other'
      WHEN t.unused AND (t.gpus > 0 OR t.gcp_gpu IS NOT NULL OR t.gpu_machine) THEN 'unused'
      WHEN t.gpus > 0 OR t.gcp_gpu IS NOT NULL THEN 'gpu'
      WHEN t.gpu_machine THEN 'gpu-machine'
      ELSE 'other'
    END AS base_kind,
    CASE
      WHEN upper(COALESCE(t.charge_category, '')) <> 'USAGE'
        THEN COALESCE(t.charge_category, 'no ChargeCategory')
      WHEN t.unused THEN 'unused commitment, not a GPU'
      ELSE 'usage, not a GPU'
    END AS reason,
    CASE
      WHEN t.unused THEN 'reserved'
      WHEN upper(COALESCE(t.pricing_category, '')) = 'DYNAMIC'
        OR COALESCE(t.usage_type, '') LIKE '%SpotUsage%' THEN 'spot'
      WHEN upper(COALESCE(t.pricing_category, '')) = 'COMMITTED' THEN 'committed'
      WHEN upper(COALESCE(t.pricing_category, '')) = 'STANDARD' THEN 'on-demand'
      ELSE 'unknown'
    END AS capacity,
    NULLIF(regexp_extract(COALESCE(t.usage_type, ''), {literal(USAGE_KIND)}, 1), '') AS usage_kind,
    CASE
      WHEN t.unused THEN CAST(0 AS {MONEY})
      WHEN t.gcp_gpu IS NOT NULL THEN COALESCE(t.quantity, 0)
      WHEN t.cloud = 'oci' AND upper(COALESCE(t.unit, '')) LIKE 'GPU%' THEN COALESCE(t.quantity, 0)
      WHEN t.gpus > 0 THEN COALESCE(t.quantity, 0) * t.gpus
      ELSE CAST(0 AS {MONEY})
    END AS gpu_hours
  FROM typed AS t
),
gpu_ids AS (
  SELECT DISTINCT lower(resource_id) AS gpu_id FROM k
  WHERE in_period AND base_kind IN ('gpu', 'gpu-machine') AND resource_id IS NOT NULL
),
{teams_cte}r AS (
  SELECT k.*,
    CASE
      WHEN k.base_kind = 'other' AND k.in_period AND k.transfer
        AND upper(COALESCE(k.charge_category, '')) = 'USAGE' AND g.gpu_id IS NOT NULL
        THEN 'transfer'{team_arm}
      ELSE k.base_kind
    END AS kind
  FROM k LEFT JOIN gpu_ids AS g ON g.gpu_id = lower(k.resource_id){team_join}
)
SELECT {", ".join(select)}, {", ".join(sums)}
FROM r
GROUP BY {", ".join(positions)}
"""


def _team_transfer(tag_keys: Sequence[str]) -> tuple[str, str, str]:
    """The parts of the query that mark `team-transfer`: data-transfer usage rows in the period
    on no GPU resource's ResourceId whose team tag (`TEAM_TAG`, where the report reads it) has a
    value some GPU usage row of the same cloud carries. A row on a GPU resource's id is
    `transfer` first, so no row is counted in both."""
    if TEAM_TAG not in tag_keys:
        return "", "", ""
    team = quote("tag:" + TEAM_TAG)
    cte = (
        "gpu_teams AS (\n"
        f"  SELECT DISTINCT cloud AS team_cloud, {team} AS team FROM k\n"
        f"  WHERE in_period AND base_kind IN ('gpu', 'gpu-machine') AND {team} IS NOT NULL\n"
        "),\n"
    )
    arm = (
        "\n      WHEN k.base_kind = 'other' AND k.in_period AND k.transfer\n"
        "        AND upper(COALESCE(k.charge_category, '')) = 'USAGE' AND t.team IS NOT NULL\n"
        "        THEN 'team-transfer'"
    )
    join = f"\n  LEFT JOIN gpu_teams AS t ON t.team_cloud = k.cloud AND t.team = k.{team}"
    return cte, arm, join


def render(sql: str, dialect: str) -> str:
    """The query in another engine's dialect (`athena`, `bigquery`), by SQLGlot."""
    if dialect == "duckdb":
        return sql
    import sqlglot  # keeps sqlglot off start-up

    return sqlglot.transpile(sql, read="duckdb", write=dialect, pretty=True)[0]
