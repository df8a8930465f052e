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

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from gpu_audit.billing.period import Period

REQUIRED = ("BilledCost", "EffectiveCost", "ChargePeriodStart", "ChargeCategory", "BillingCurrency")
MONEY = "DECIMAL(38, 10)"
# GCP core/RAM SKUs of GPU machine families, wherever the description names them (Compute
# Engine `A2 Instance Core running in Americas`, Vertex AI `Custom Training: A2 Instance Ram …`)
GPU_MACHINE = r"(?i)\b(a2|a3|a4|a4x|g2|g4)( ultra| mega| high| edge)? (instance )?(core|ram)\b"
GCP_GPU_COMMITMENT = r"(?i)^commitment.*\b(gpu|nvidia|a2|a3|a4|a4x|g2|g4)\b"
GCP_GPU = r"(?i)nvidia (?:tesla )?([a-z]*[0-9]+[a-z]*(?: 80gb)?)"
_USAGE_KIND = r"([A-Za-z]+):[^:]+$"
# An instance type in an AWS description of instance hours (FOCUS 1.0 has no usage type):
# `$1.624 per On Demand Linux g5.4xlarge Instance Hour`, SageMaker `ml.p4d.24xlarge`; a row
# of the same instance that is not hours (its volumes, its transfer) names no instance type
AWS_DESCRIBED = (
    r"(?i)\b((?:ml\.)?[a-z][a-z0-9-]*\."
    r"(?:[0-9]*xlarge|large|medium|small|micro|nano|metal[a-z0-9-]*))\b"
)
HOURLY = r"(?i)\bhours?\b"
# Data transfer: FOCUS ServiceCategory `Networking`, AWS usage types `…DataTransfer…`,
# `…-Out-Bytes`, or a description that says so (GCP `Network Inter Zone Egress`)
TRANSFER_USAGE = r"DataTransfer|-(In|Out)-Bytes|Regional-Bytes"
TRANSFER = r"(?i)data transfer|egress|\binter[- ]?(region|zone)\b"
# An OCI shape in the description: `BM.GPU.H100.8`, `VM.GPU.A10.1`, `BM.GPU4.8`
OCI_SHAPE = r"(?i)\b((?:bm|vm)\.gpu[0-9]*\.[a-z0-9-]+(?:\.[0-9]+)?)\b"
# The tag whose values make a transfer row the GPU teams' (`team-transfer`), where read
TEAM_TAG = "team"
# The provider a row names → the cloud its columns are read as (FOCUS `ProviderName`, 1.3
# `ServiceProviderName`); a provider named otherwise is kept as written, lower-cased.
# a table: one cloud's names a line, as ruff format would not keep it
# fmt: off
PROVIDERS = (
    ("amazon", "aws"), ("aws", "aws"), ("microsoft", "azure"), ("azure", "azure"),
    ("google", "gcp"), ("gcp", "gcp"), ("oracle", "oci"), ("oci", "oci"),
)
# fmt: on

# The columns of the aggregate, in order; `model.BilledGroup` has one field for each.
GROUP_COLUMNS = (
    "cloud",
    "currency",
    "in_period",
    "kind",
    "reason",
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
    # the charge month (rows in the period), the invoice (BillingPeriodStart, every row), the
    # commitment discount and capacity reservation apart, and whether the commitment went unused
    "month",
    "billing_period",
    "commitment_id",
    "capacity_id",
    "commitment_unused",
)
SUM_COLUMNS = (
    "effective",
    "billed",
    "quantity",
    "gpu_hours",
    "corrections",
    "rows",
    "first_charge",
    "last_charge",
    "list",
    "over_list_rows",
    "negative_rows",
)


def quote(name: str) -> str:
    """`name` as a double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """`text` as a single-quoted SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


class Source:
    """One cloud's rows as a relation (`FROM` text) and its columns' types, upper-case."""

    def __init__(self, cloud: str, relation: str, columns: Mapping[str, str]) -> None:
        self.cloud = cloud
        self.relation = relation
        self.columns = dict(columns)

    def missing(self) -> list[str]:
        """The FOCUS columns the query requires that this source lacks, in REQUIRED's order."""
        return [name for name in REQUIRED if name not in self.columns]


class _Columns:
    """Column expressions of one source, NULL where the source lacks the column."""

    def __init__(self, source: Source, dialect: str) -> None:
        self.types = source.columns
        self.dialect = dialect

    def has(self, name: str) -> bool:
        """True when the source has the column `name`."""
        return name in self.types

    def raw(self, name: str) -> str:
        """The quoted column, or SQL `NULL` when the source lacks it."""
        return quote(name) if self.has(name) else "NULL"

    def text(self, name: str) -> str:
        """A text cell, null where empty or written `NULL` (as FOCUS 1.0 samples write it)."""
        if not self.has(name):
            return "CAST(NULL AS VARCHAR)"
        return f"NULLIF(NULLIF(TRIM(CAST({quote(name)} AS VARCHAR)), ''), 'NULL')"

    def money(self, name: str) -> str:
        """The column as the query's money type (text parsed; `NULL` of that type when absent)."""
        kind = self.types.get(name)
        if kind is None:
            return f"CAST(NULL AS {MONEY})"
        if kind.startswith(("DECIMAL", "DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "HUGEINT")):
            return f"CAST({quote(name)} AS {MONEY})"
        return f"CAST({self.text(name)} AS {MONEY})"

    def number(self, name: str) -> str:
        """A number to compare: a numeric column as it is (no cast per row), text as money."""
        kind = self.types.get(name, "")
        if kind.startswith(("DECIMAL", "DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "HUGEINT")):
            return quote(name)
        return self.money(name)

    def time(self, name: str) -> str:
        """The column as a TIMESTAMPTZ (text parsed; a typed `NULL` when absent)."""
        kind = self.types.get(name)
        if kind is None:
            return "CAST(NULL AS TIMESTAMPTZ)"
        if kind.startswith("TIMESTAMP"):
            return f"CAST({quote(name)} AS TIMESTAMPTZ)"
        return f"CAST({self.text(name)} AS TIMESTAMPTZ)"

    def key(self, name: str, key: str) -> str:
        """A key of a key-value column: a JSON string (FOCUS's KeyValueFormat) or a map."""
        kind = self.types.get(name)
        if kind is None:
            return "CAST(NULL AS VARCHAR)"
        if kind.startswith("MAP"):
            if self.dialect == "athena":
                return f"element_at({quote(name)}, {literal(key)})"
            return f"{quote(name)}[{literal(key)}]"
        path = literal('$."' + key.replace('"', '\\"') + '"')
        return f"NULLIF(TRIM(json_extract_string({self.text(name)}, {path})), '')"

    def label(self, key: str) -> str:
        """GCP labels: `x_Labels`, a list of {Key, Value}."""
        kind = self.types.get("x_Labels", "")
        if not kind.upper().endswith("[]") and not kind.upper().startswith(
            ("LIST", "ARRAY", "STRUCT")
        ):
            return "CAST(NULL AS VARCHAR)"
        return (
            f"(SELECT l.Value FROM UNNEST({quote('x_Labels')}) AS u(l) "
            f"WHERE l.Key = {literal(key)} LIMIT 1)"
        )


# The raw columns the normalisation reads (money and times aside): rows alike in all of them are
# alike in every column of the query, so they may be summed before it (`summed_first`).
_KEYED = (
    "BillingCurrency",
    "ChargeCategory",
    "ChargeClass",
    "PricingCategory",
    "SubAccountId",
    "RegionId",
    "ResourceId",
    "CapacityReservationId",
    "CommitmentDiscountId",
    "CapacityReservationStatus",
    "CommitmentDiscountStatus",
    "ServiceName",
    "ServiceProviderName",
    "ProviderName",
    "x_UsageType",
    "SkuMeter",
    "SkuPriceDetails",
    "x_SkuMeterCategory",
    "x_SkuDetails",
    "Tags",
    "x_Labels",
    "ChargeDescription",
    "ConsumedUnit",
    "BillingPeriodStart",
    "ServiceCategory",
)
_SUMMED = ("EffectiveCost", "BilledCost", "ConsumedQuantity", "ListCost")
# per-row checks counted before rows are summed (data quality: rows, not groups)
_COUNTED = {
    "over_list_rows": "{list} IS NOT NULL AND {effective} > {list}",
    "negative_rows": "{quantity} < 0",
}


def summed_first(
    source: Source, period: Period, tag_keys: Sequence[str], by_day: bool = False
) -> Source:
    """The fast path (DuckDB): the files' rows summed by the raw columns the query reads and by
    where their charge falls (before, in, after the period), so the per-row work (trimming,
    JSON, regular expressions, the catalog join, twenty group keys) runs once per distinct
    combination instead of once per row. `aggregate` over it answers what `aggregate` over
    `source` does (tests/billing/test_engines.py compares the two); ~3x less CPU on ten
    million rows (benchmarks/README.md)."""
    c = _Columns(source, "duckdb")
    keys = [
        name
        for name in _KEYED
        if name in source.columns
        and name not in ("Tags", "x_Labels")  # summed by the tags' values (a map hashes slowly)
    ]
    tags = {f"tag:{key}": _tag(c, source.cloud, key) for key in tag_keys}
    start = c.time("ChargePeriodStart")
    first, last = _timestamp(period.start), _timestamp(period.end)
    flag = (
        f"CASE WHEN {start} >= {first} AND {start} < {last} THEN 0 "
        f"WHEN {start} < {first} THEN -1 WHEN {start} >= {last} THEN 1 END"
    )
    sums = [f"SUM({c.money(name)}) AS {quote(name)}" for name in _SUMMED if name in source.columns]
    select = [
        *(quote(name) for name in keys),
        *(f"{expr} AS {quote(name)}" for name, expr in tags.items()),
        f"{flag} AS period_flag",
        f"date_trunc('month', {start}) AS charge_month",  # a key only: months kept apart
        # the daily series (billing/daily.py): alike rows of one UTC day only
        *([f"CAST({start} AS DATE) AS charge_day"] if by_day else []),
        *sums,
        *(f"SUM({_check(c, name)}) AS {name}" for name in _COUNTED),
        f"MIN({start}) AS {quote('ChargePeriodStart')}",
        f"MAX({c.time('ChargePeriodEnd')}) AS {quote('ChargePeriodEnd')}",
        "COUNT(*) AS row_count",
    ]
    groups = ", ".join(str(i) for i in range(1, len(keys) + len(tags) + 3 + by_day))
    relation = f"(SELECT {', '.join(select)} FROM {source.relation} GROUP BY {groups})"
    columns = {name: source.columns[name] for name in keys}
    columns.update(dict.fromkeys(tags, "VARCHAR"))
    columns.update({name: "DECIMAL(38,10)" for name in _SUMMED if name in source.columns})
    columns.update(
        ChargePeriodStart="TIMESTAMP WITH TIME ZONE",
        ChargePeriodEnd="TIMESTAMP WITH TIME ZONE",
        period_flag="INTEGER",
        charge_month="TIMESTAMP WITH TIME ZONE",
        row_count="BIGINT",
        over_list_rows="BIGINT",
        negative_rows="BIGINT",
    )
    return Source(source.cloud, relation, columns)


def _check(c: _Columns, name: str) -> str:
    """1 where a row fails a per-row check (`_COUNTED`), else 0."""
    test = _COUNTED[name].format(
        effective=c.number("EffectiveCost"),
        list=c.number("ListCost"),
        quantity=c.number("ConsumedQuantity"),
    )
    return f"CASE WHEN {test} THEN 1 ELSE 0 END"


def _tag(c: _Columns, cloud: str, key: str) -> str:
    """A tag's value: AWS `Tags` (a map; `user:` for user-defined keys), Azure `Tags` (JSON),
    GCP `x_Labels` (a list of Key/Value) before `Tags`; a plain FOCUS file's, any of these;
    already read when summed first."""
    if c.has(f"tag:{key}"):
        return quote(f"tag:{key}")
    forms = (
        [c.key("Tags", f"user:{key}"), c.key("Tags", key)]
        if cloud in ("aws", "focus")
        else [c.key("Tags", key)]
    )
    if cloud in ("gcp", "focus"):
        forms.insert(0, c.label(key))
    return f"NULLIF(TRIM(CAST(COALESCE({', '.join(forms)}) AS VARCHAR)), '')"


def row_cloud(c: _Columns, layout: str) -> str:
    """Each row's cloud from its own provider (`ServiceProviderName`, FOCUS 1.3, before
    `ProviderName`); the layout's cloud only where a row names no provider it knows."""
    provider = f"lower(COALESCE({c.text('ServiceProviderName')}, {c.text('ProviderName')}))"
    arms = " ".join(
        f"WHEN {provider} LIKE {literal('%' + word + '%')} THEN {literal(cloud)}"
        for word, cloud in PROVIDERS
    )
    fallback = f"COALESCE({provider}, 'unknown')" if layout == "focus" else literal(layout)
    return f"CASE {arms} ELSE {fallback} END"


def normalised(source: Source, tag_keys: Sequence[str], dialect: str = "duckdb") -> str:
    """One SELECT of a source's rows in the query's own columns."""
    c = _Columns(source, dialect)
    cloud = row_cloud(c, source.cloud)
    description = c.text("ChargeDescription")
    usage_type = (
        f"CASE WHEN {cloud} = 'aws' THEN COALESCE({c.text('x_UsageType')}, {c.text('SkuMeter')}) "
        "END"
    )
    stated_type = c.key("SkuPriceDetails", "InstanceType")
    vm = (
        f"CASE WHEN {cloud} = 'azure' AND lower({c.text('x_SkuMeterCategory')}) = "
        f"'virtual machines' THEN {c.key('x_SkuDetails', 'ServiceType')} END"
    )
    described = (
        f"CASE WHEN {cloud} = 'aws' AND regexp_matches({description}, {literal(HOURLY)}) "
        f"THEN NULLIF(regexp_extract({description}, {literal(AWS_DESCRIBED)}, 1), '') "
        f"WHEN {cloud} = 'oci' THEN NULLIF(regexp_extract({description}, "
        f"{literal(OCI_SHAPE)}, 1), '') END"
    )
    # in order: SkuPriceDetails, the usage type, the Azure VM size, then the description
    itype = (
        f"COALESCE({stated_type}, NULLIF(regexp_extract({usage_type}, ':([^:]+)$', 1), ''), "
        f"{vm}, {described})"
    )
    provider = f"COALESCE({c.text('ServiceProviderName')}, {c.text('ProviderName')})"
    tags = [f"{_tag(c, source.cloud, key)} AS {quote('tag:' + key)}" for key in tag_keys]
    unused = (
        f"(upper(COALESCE({c.text('CapacityReservationStatus')}, '')) = 'UNUSED' "
        f"OR upper(COALESCE({c.text('CommitmentDiscountStatus')}, '')) = 'UNUSED' "
        f"OR COALESCE({usage_type}, '') LIKE '%UnusedBox%')"
    )
    transfer = (
        f"(upper(COALESCE({c.text('ServiceCategory')}, '')) = 'NETWORKING' "
        f"OR regexp_matches(COALESCE({usage_type}, ''), {literal(TRANSFER_USAGE)}) "
        f"OR regexp_matches(COALESCE({description}, ''), {literal(TRANSFER)}))"
    )
    columns = [
        f"{cloud} AS cloud",
        f"{provider} AS provider_name",
        f"COALESCE({c.text('BillingCurrency')}, 'unknown') AS currency",
        f"{c.time('ChargePeriodStart')} AS charge_start",
        f"{c.time('ChargePeriodEnd')} AS charge_end",
        f"{c.text('ChargeCategory')} AS charge_category",
        f"{c.text('ChargeClass')} AS charge_class",
        f"{c.text('PricingCategory')} AS pricing_category",
        f"{c.text('SubAccountId')} AS account",
        f"{c.text('RegionId')} AS region",
        f"{c.text('ResourceId')} AS resource_id",
        f"COALESCE({c.text('CapacityReservationId')}, {c.text('CommitmentDiscountId')}) "
        "AS reservation_id",
        f"{c.text('ServiceName')} AS service",
        f"{description} AS description",
        f"{c.text('ConsumedUnit')} AS unit",
        f"{usage_type} AS usage_type",
        f"{itype} AS instance_type",
        f"TRY_CAST({c.key('SkuPriceDetails', 'GpuCount')} AS INTEGER) AS gpus_stated",
        f"{unused} AS unused",
        f"{transfer} AS transfer",
        f"{c.money('EffectiveCost')} AS effective",
        f"{c.money('BilledCost')} AS billed",
        f"{c.money('ConsumedQuantity')} AS quantity",
        f"{c.money('ListCost')} AS list",
        f"{c.time('BillingPeriodStart')} AS billing_period_start",
        f"{c.text('CommitmentDiscountId')} AS commitment_id",
        f"{c.text('CapacityReservationId')} AS capacity_id",
        f"upper(COALESCE({c.text('CommitmentDiscountStatus')}, '')) = 'UNUSED' "
        "AS commitment_unused",
        *(f"{c.raw(name) if c.has(name) else _check(c, name)} AS {name}" for name in _COUNTED),
        f"{c.raw('period_flag')} AS period_flag",
        f"{c.raw('row_count') if c.has('row_count') else '1'} AS row_count",
        *tags,
    ]
    return f"SELECT {', '.join(columns)} FROM {source.relation}"


def _catalog_table(gpu_types: Iterable[tuple[str, str, str, int]]) -> str:
    rows = [
        f"SELECT {literal(cloud)} AS cloud, {literal(key)} AS type_key, "
        f"{literal(model)} AS model, {int(count)} AS gpus"
        for cloud, key, model, count in gpu_types
    ]
    return (
        " UNION ALL ".join(rows)
        or "SELECT NULL AS cloud, NULL AS type_key, NULL AS model, 0 AS gpus"
    )


def _timestamp(moment: datetime) -> str:
    return f"CAST({literal(moment.strftime('%Y-%m-%d %H:%M:%S+00'))} AS TIMESTAMPTZ)"


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
    start, end = _timestamp(period.start), _timestamp(period.end)
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
        *(f"SUM(r.{name}) AS {name}" for name in _COUNTED),
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
    NULLIF(regexp_extract(COALESCE(t.usage_type, ''), {literal(_USAGE_KIND)}, 1), '') AS usage_kind,
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
