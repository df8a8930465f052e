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
GPU_MACHINE = r"(?i)^(spot preemptible )?(a2|a3|a4|a4x|g2|g4) (instance )?(core|ram)"
GCP_GPU_COMMITMENT = r"(?i)^commitment.*\b(gpu|nvidia|a2|a3|a4|a4x|g2|g4)\b"
GCP_GPU = r"(?i)nvidia (?:tesla )?([a-z]*[0-9]+[a-z]*(?: 80gb)?)"
_USAGE_KIND = r"([A-Za-z]+):[^:]+$"

# The columns of the aggregate, in order; `model.BilledGroup` has one field for each.
GROUP_COLUMNS = (
    "cloud", "currency", "in_period", "kind", "reason", "account", "region", "instance_type",
    "gpu_model", "gpus", "gcp_gpu", "capacity", "service", "usage_kind", "resource_id",
    "reservation_id",
)  # fmt: skip
SUM_COLUMNS = (
    "effective", "billed", "quantity", "gpu_hours", "corrections", "rows", "first_charge",
    "last_charge",
)  # fmt: skip


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Source:
    """One cloud's rows as a relation (`FROM` text) and its columns' types, upper-case."""

    def __init__(self, cloud: str, relation: str, columns: Mapping[str, str]) -> None:
        self.cloud = cloud
        self.relation = relation
        self.columns = dict(columns)

    def missing(self) -> list[str]:
        return [name for name in REQUIRED if name not in self.columns]


class _Columns:
    """Column expressions of one source, NULL where the source lacks the column."""

    def __init__(self, source: Source, dialect: str) -> None:
        self.types = source.columns
        self.dialect = dialect

    def has(self, name: str) -> bool:
        return name in self.types

    def raw(self, name: str) -> str:
        return quote(name) if self.has(name) else "NULL"

    def text(self, name: str) -> str:
        if not self.has(name):
            return "CAST(NULL AS VARCHAR)"
        return f"NULLIF(TRIM(CAST({quote(name)} AS VARCHAR)), '')"

    def money(self, name: str) -> str:
        kind = self.types.get(name)
        if kind is None:
            return f"CAST(NULL AS {MONEY})"
        if kind.startswith(("DECIMAL", "DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "HUGEINT")):
            return f"CAST({quote(name)} AS {MONEY})"
        return f"CAST({self.text(name)} AS {MONEY})"

    def time(self, name: str) -> str:
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
    "BillingCurrency", "ChargeCategory", "ChargeClass", "PricingCategory", "SubAccountId",
    "RegionId", "ResourceId", "CapacityReservationId", "CommitmentDiscountId",
    "CapacityReservationStatus", "CommitmentDiscountStatus", "ServiceName",
    "ServiceProviderName", "ProviderName", "x_UsageType", "SkuMeter", "SkuPriceDetails",
    "x_SkuMeterCategory", "x_SkuDetails", "Tags", "x_Labels", "ChargeDescription",
)  # fmt: skip
_SUMMED = ("EffectiveCost", "BilledCost", "ConsumedQuantity")


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
        and (name != "ChargeDescription" or source.cloud == "gcp")
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
        # the daily series (billing/daily.py): alike rows of one UTC day only
        *([f"CAST({start} AS DATE) AS charge_day"] if by_day else []),
        *sums,
        f"MIN({start}) AS {quote('ChargePeriodStart')}",
        f"MAX({c.time('ChargePeriodEnd')}) AS {quote('ChargePeriodEnd')}",
        "COUNT(*) AS row_count",
    ]
    groups = ", ".join(str(i) for i in range(1, len(keys) + len(tags) + 2 + by_day))
    relation = f"(SELECT {', '.join(select)} FROM {source.relation} GROUP BY {groups})"
    columns = {name: source.columns[name] for name in keys}
    columns.update(dict.fromkeys(tags, "VARCHAR"))
    columns.update({name: "DECIMAL(38,10)" for name in _SUMMED if name in source.columns})
    columns.update(
        ChargePeriodStart="TIMESTAMP WITH TIME ZONE",
        ChargePeriodEnd="TIMESTAMP WITH TIME ZONE",
        period_flag="INTEGER",
        row_count="BIGINT",
    )
    return Source(source.cloud, relation, columns)


def _tag(c: _Columns, cloud: str, key: str) -> str:
    """A tag's value: AWS `Tags` (a map; `user:` for user-defined keys), Azure `Tags` (JSON),
    GCP `x_Labels` (a list of Key/Value) before `Tags`; already read when summed first."""
    if c.has(f"tag:{key}"):
        return quote(f"tag:{key}")
    forms = (
        [c.key("Tags", f"user:{key}"), c.key("Tags", key)]
        if cloud == "aws"
        else [c.key("Tags", key)]
    )
    if cloud == "gcp":
        forms.insert(0, c.label(key))
    return f"NULLIF(TRIM(CAST(COALESCE({', '.join(forms)}) AS VARCHAR)), '')"


def normalised(source: Source, tag_keys: Sequence[str], dialect: str = "duckdb") -> str:
    """One SELECT of a source's rows in the query's own columns."""
    c = _Columns(source, dialect)
    cloud = source.cloud
    usage_type = (
        f"COALESCE({c.text('x_UsageType')}, {c.text('SkuMeter')})"
        if cloud == "aws"
        else "CAST(NULL AS VARCHAR)"
    )
    stated_type = c.key("SkuPriceDetails", "InstanceType")
    if cloud == "aws":
        itype = f"COALESCE({stated_type}, NULLIF(regexp_extract({usage_type}, ':([^:]+)$', 1), ''))"
    elif cloud == "azure":
        vm = (
            f"CASE WHEN lower({c.text('x_SkuMeterCategory')}) = 'virtual machines' "
            f"THEN {c.key('x_SkuDetails', 'ServiceType')} END"
        )
        itype = f"COALESCE({stated_type}, {vm})"
    else:
        itype = stated_type
    provider = f"COALESCE({c.text('ServiceProviderName')}, {c.text('ProviderName')})"
    tags = [f"{_tag(c, cloud, key)} AS {quote('tag:' + key)}" for key in tag_keys]
    unused = (
        f"(upper(COALESCE({c.text('CapacityReservationStatus')}, '')) = 'UNUSED' "
        f"OR upper(COALESCE({c.text('CommitmentDiscountStatus')}, '')) = 'UNUSED' "
        f"OR COALESCE({usage_type}, '') LIKE '%UnusedBox%')"
    )
    columns = [
        f"{literal(cloud)} AS cloud",
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
        f"{c.text('ChargeDescription')} AS description",
        f"{usage_type} AS usage_type",
        f"{itype} AS instance_type",
        f"TRY_CAST({c.key('SkuPriceDetails', 'GpuCount')} AS INTEGER) AS gpus_stated",
        f"{unused} AS unused",
        f"{c.money('EffectiveCost')} AS effective",
        f"{c.money('BilledCost')} AS billed",
        f"{c.money('ConsumedQuantity')} AS quantity",
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
        "r.cloud", "r.currency", "r.in_period", "r.kind",
        "CASE WHEN r.kind = 'other' OR NOT r.in_period THEN r.reason END",
        *(f"CASE WHEN {detail} THEN r.{name} END" for name in (
            "account", "region", "instance_type", "gpu_model", "gpus", "gcp_gpu", "capacity",
            "service", "usage_kind", "resource_id", "reservation_id",
        )),
        *(f"CASE WHEN {detail} THEN r.{tag} END" for tag in tags),
    ]  # fmt: skip
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
    ]
    positions = [str(i) for i in range(1, len(select) + 1)]
    if by_day:  # also by the UTC day of the charge's start (GPU rows in the period; else NULL)
        sums.append(f"CASE WHEN {detail} THEN CAST(r.charge_start AS DATE) END AS charge_day")
        positions.append(str(len(select) + len(sums)))
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
r AS (
  SELECT t.*,
    CASE
      WHEN upper(COALESCE(t.charge_category, '')) <> 'USAGE' THEN 'other'
      WHEN t.unused AND (t.gpus > 0 OR t.gcp_gpu IS NOT NULL OR t.gpu_machine) THEN 'unused'
      WHEN t.gpus > 0 OR t.gcp_gpu IS NOT NULL THEN 'gpu'
      WHEN t.gpu_machine THEN 'gpu-machine'
      ELSE 'other'
    END AS kind,
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
      WHEN t.gpus > 0 THEN COALESCE(t.quantity, 0) * t.gpus
      ELSE CAST(0 AS {MONEY})
    END AS gpu_hours
  FROM typed AS t
)
SELECT {", ".join(select)}, {", ".join(sums)}
FROM r
GROUP BY {", ".join(positions)}
"""


def render(sql: str, dialect: str) -> str:
    """The query in another engine's dialect (`athena`, `bigquery`), by SQLGlot."""
    if dialect == "duckdb":
        return sql
    import sqlglot

    return sqlglot.transpile(sql, read="duckdb", write=dialect, pretty=True)[0]
