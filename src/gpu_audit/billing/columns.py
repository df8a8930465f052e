"""The billing query's vocabulary: the FOCUS columns it requires, the patterns that name a GPU
in a row's SKU columns, the group and sum columns it returns, SQL quoting, and each source's
column expressions (NULL where a source lacks the column). billing/query.py builds the query
from them; billing/rows.py normalises each source's rows with them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

REQUIRED = ("BilledCost", "EffectiveCost", "ChargePeriodStart", "ChargeCategory", "BillingCurrency")
MONEY = "DECIMAL(38, 10)"
# GCP core/RAM SKUs of GPU machine families, wherever the description names them (Compute
# Engine `A2 Instance Core running in Americas`, Vertex AI `Custom Training: A2 Instance Ram …`)
GPU_MACHINE = r"(?i)\b(a2|a3|a4|a4x|g2|g4)( ultra| mega| high| edge)? (instance )?(core|ram)\b"
GCP_GPU_COMMITMENT = r"(?i)^commitment.*\b(gpu|nvidia|a2|a3|a4|a4x|g2|g4)\b"
GCP_GPU = r"(?i)nvidia (?:tesla )?([a-z]*[0-9]+[a-z]*(?: 80gb)?)"
USAGE_KIND = r"([A-Za-z]+):[^:]+$"
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


class Columns:
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


def timestamp(moment: datetime) -> str:
    """`moment` (UTC) as a SQL TIMESTAMPTZ literal, to the second."""
    return f"CAST({literal(moment.strftime('%Y-%m-%d %H:%M:%S+00'))} AS TIMESTAMPTZ)"
