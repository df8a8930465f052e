"""Each source's rows as the one query reads them: summed first by the raw columns the query
reads (the fast path, DuckDB) and normalised into the query's columns (every engine)."""

from __future__ import annotations

from collections.abc import Sequence

from gpu_audit.billing.columns import (
    AWS_DESCRIBED,
    HOURLY,
    OCI_SHAPE,
    PROVIDERS,
    TRANSFER,
    TRANSFER_USAGE,
    Columns,
    Source,
    literal,
    quote,
    timestamp,
)
from gpu_audit.billing.period import Period

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
COUNTED = {
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
    c = Columns(source, "duckdb")
    keys = [
        name
        for name in _KEYED
        if name in source.columns
        and name not in ("Tags", "x_Labels")  # summed by the tags' values (a map hashes slowly)
    ]
    tags = {f"tag:{key}": _tag(c, source.cloud, key) for key in tag_keys}
    start = c.time("ChargePeriodStart")
    first, last = timestamp(period.start), timestamp(period.end)
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
        *(f"SUM({_check(c, name)}) AS {name}" for name in COUNTED),
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


def _check(c: Columns, name: str) -> str:
    """1 where a row fails a per-row check (`COUNTED`), else 0."""
    test = COUNTED[name].format(
        effective=c.number("EffectiveCost"),
        list=c.number("ListCost"),
        quantity=c.number("ConsumedQuantity"),
    )
    return f"CASE WHEN {test} THEN 1 ELSE 0 END"


def _tag(c: Columns, cloud: str, key: str) -> str:
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


def row_cloud(c: Columns, layout: str) -> str:
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
    c = Columns(source, dialect)
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
        *(f"{c.raw(name) if c.has(name) else _check(c, name)} AS {name}" for name in COUNTED),
        f"{c.raw('period_flag')} AS period_flag",
        f"{c.raw('row_count') if c.has('row_count') else '1'} AS row_count",
        *tags,
    ]
    return f"SELECT {', '.join(columns)} FROM {source.relation}"
