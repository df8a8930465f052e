"""GCP's FOCUS BigQuery table written to files with `EXPORT DATA ... FORMAT='PARQUET'`: folder `gcp/`.

No manifest: every `focus-NNNNNNNNNNNN.parquet` counts, and the files do not share one schema (a
reader unions by name): file 0 is FOCUS 1.2-named with DECIMAL costs and zoned timestamps; file 1
has no `x_Labels` and no `CapacityReservationStatus`, DOUBLE costs and TIMESTAMP without a zone (UTC);
file 2 uses FOCUS 1.3's `ServiceProviderName`/`HostProviderName` instead of `ProviderName`/
`PublisherName` and adds `x_ExportTime`. GPU SKU quantities are GPU-hours. Amounts, ids and names are
synthetic, and so are the Vertex AI training SKU text and the commitment's description.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.billing.periods import (
    Flavour,
    busy_hours,
    month_start,
    next_month,
    rate,
    six,
    slices,
    utc,
)
from tests.billing.truth import Row, written
from tests.billing.writers import write_parquet

PROJECT, REGION = "acme-ml-prod", "us-central1"
BILLING_ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
COMPUTE, VERTEX = "Compute Engine", "Vertex AI"
SELF_LINK = (
    f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/us-central1-a/instances/"
)
COMMITMENT = f"projects/{PROJECT}/regions/{REGION}/commitments/a2-gpu-1y"
VERTEX_JOB = f"projects/{PROJECT}/locations/{REGION}/customJobs/4821337740135628800"
CAPACITY = {"Standard": "on-demand", "Dynamic": "spot", "Committed": "committed"}


def _schema(file: int, demo: bool) -> list[tuple[str, str]]:
    """The columns the user's `EXPORT DATA ... AS SELECT` wrote (a subset of the FOCUS table's).
    File 0: FOCUS 1.2 names, DECIMAL, TIMESTAMPTZ. File 1: no labels or reservation status, DOUBLE,
    TIMESTAMP (UTC, no zone). File 2: FOCUS 1.3 provider names and an export time. The demo has
    files 0 and 1 only, its file 1 with file 2's traps as well."""
    money_type = "DOUBLE" if file == 1 else "DECIMAL(38,9)"
    ts = "TIMESTAMP" if file == 1 else "TIMESTAMPTZ"
    new_names = file == 2 or (demo and file == 1)
    provider = (
        ["ServiceProviderName", "HostProviderName"]
        if new_names
        else ["ProviderName", "PublisherName"]
    )
    cols: list[tuple[str, str]] = [
        ("BilledCost", money_type), ("EffectiveCost", money_type), ("ListCost", money_type),
        ("BillingCurrency", "VARCHAR"), ("BillingAccountId", "VARCHAR"),
        ("BillingPeriodStart", ts), ("BillingPeriodEnd", ts), ("ChargePeriodStart", ts),
        ("ChargePeriodEnd", ts), ("ChargeCategory", "VARCHAR"), ("ChargeClass", "VARCHAR"),
        ("ChargeDescription", "VARCHAR"), ("ConsumedQuantity", money_type), ("ConsumedUnit", "VARCHAR"),
        ("PricingCategory", "VARCHAR"), (provider[0], "VARCHAR"), (provider[1], "VARCHAR"),
        ("RegionId", "VARCHAR"), ("ResourceId", "VARCHAR"), ("ResourceName", "VARCHAR"),
        ("ServiceCategory", "VARCHAR"), ("ServiceName", "VARCHAR"), ("SkuId", "VARCHAR"),
        ("SubAccountId", "VARCHAR"), ("SubAccountName", "VARCHAR"), ("CommitmentDiscountId", "VARCHAR"),
        ("CommitmentDiscountStatus", "VARCHAR"), ("CommitmentDiscountType", "VARCHAR"),
    ]  # fmt: skip
    if file != 1:
        cols += [
            ("CapacityReservationStatus", "VARCHAR"),
            ("x_Labels", "STRUCT(Key VARCHAR, Value VARCHAR)[]"),
        ]
    if new_names:
        cols.append(("x_ExportTime", "TIMESTAMPTZ"))
    return cols


@dataclass(frozen=True)
class Sku:
    description: str
    sku_id: str
    unit: str
    kind: str
    gpu_model: str | None
    service: str = COMPUTE


A100 = Sku(
    "Nvidia Tesla A100 GPU running in Americas", "039F-D0DA-4055", "hour", "gpu", "A100-40GB"
)
A100_80 = Sku(
    "Nvidia Tesla A100 80GB GPU running in Americas", "C3A1-5D2F-8E34", "hour", "gpu", "A100-80GB"
)
A2_CORE = Sku(
    "A2 Instance Core running in Americas", "2E27-4F75-95CD", "hour", "gpu-machine", "A100-40GB"
)
A2_RAM = Sku(
    "A2 Instance Ram running in Americas",
    "6E2A-DCD9-87ED",
    "gibibyte hour",
    "gpu-machine",
    "A100-40GB",
)
L4_SPOT = Sku(
    "Spot Preemptible Nvidia L4 GPU running in Americas", "A1B2-7C3D-9E4F", "hour", "gpu", "L4"
)
G2_CORE = Sku(
    "Spot Preemptible G2 Instance Core running in Americas",
    "B7C8-1D2E-3F4A",
    "hour",
    "gpu-machine",
    "L4",
)
G2_RAM = Sku(
    "Spot Preemptible G2 Instance Ram running in Americas",
    "C9D0-5E6F-7A8B",
    "gibibyte hour",
    "gpu-machine",
    "L4",
)
# synthetic SKU texts: the shapes follow GCP's, these exact strings are made up for the fixture
VERTEX_A100 = Sku(
    "Training Nvidia Tesla A100 GPU running in Americas",
    "D1E2-F3A4-B5C6",
    "hour",
    "gpu",
    "A100-40GB",
    VERTEX,
)
# Vertex AI custom training bills the machine's cores and memory on SKUs of their own, the family
# named inside the description (not at its start)
VERTEX_A2_CORE = Sku(
    "Vertex AI: Custom Training A2 Instance Core running in Americas",
    "D7E8-F9A0-B1C2",
    "hour",
    "gpu-machine",
    "A100-40GB",
    VERTEX,
)
VERTEX_A2_RAM = Sku(
    "Vertex AI: Custom Training A2 Instance Ram running in Americas",
    "D9E0-F1A2-B3C4",
    "gibibyte hour",
    "gpu-machine",
    "A100-40GB",
    VERTEX,
)
CUD_A2_GPU = Sku(
    "Commitment v1: A2 GPU in Americas for 1 year", "E7F8-A9B0-C1D2", "hour", "unused", "A100-40GB"
)
N2_CORE = Sku("N2 Instance Core running in Americas", "BB77-5FDA-69D9", "hour", "other", None)
N2_RAM = Sku(
    "N2 Instance Ram running in Americas", "5B01-D157-A097", "gibibyte hour", "other", None
)
STORAGE = Sku(
    "Standard Storage US Multi-region",
    "E5F0-6A5D-7BAD",
    "gibibyte month",
    "other",
    None,
    "Cloud Storage",
)
EGRESS = Sku("Network Internet Data Transfer Out from Americas to Americas", "9DE9-9092-B3BC", "gibibyte", "other", None)  # fmt: skip
# inter-zone traffic of the recsys team's feature store (labelled, no GPU's resource): team transfer
INTER_ZONE = Sku("Network Inter Zone Egress", "DE9E-AFBC-A15A", "gibibyte", "team-transfer", None)  # fmt: skip


class _File:
    """The records of one exported file and their truth."""

    def __init__(self, index: int, demo: bool) -> None:
        self.rel = f"focus-{index:012d}.parquet"
        self.schema = _schema(index, demo)
        self.records: list[dict[str, Any]] = []
        self.rows: list[Row] = []

    def add(
        self,
        sku: Sku,
        period: tuple[datetime, datetime],
        qty: Decimal,
        unit_price: Decimal,
        *,
        pricing: str = "Standard",
        resource: str | None = None,
        labels: dict[str, str] | None = None,
        commitment: str | None = None,
    ) -> None:
        cost = six(qty * unit_price)
        bp = period[0].date().replace(day=1)
        rec: dict[str, Any] = {
            "BilledCost": cost,
            "EffectiveCost": cost,
            "ListCost": cost,
            "ContractedCost": cost,
            "BillingCurrency": "USD",
            "BillingAccountId": BILLING_ACCOUNT,
            "BillingPeriodStart": utc(bp),
            "BillingPeriodEnd": utc(next_month(bp)),
            "ChargePeriodStart": period[0],
            "ChargePeriodEnd": period[1],
            "ChargeCategory": "Usage",
            "ChargeClass": None,
            "ChargeDescription": sku.description,
            "ChargeFrequency": "Usage-Based",
            "ConsumedQuantity": qty,
            "ConsumedUnit": sku.unit,
            "PricingCategory": pricing,
            "PricingQuantity": qty,
            "PricingUnit": sku.unit,
            "ProviderName": "Google Cloud",
            "PublisherName": "Google Cloud",
            "ServiceProviderName": "Google Cloud",
            "HostProviderName": "Google Cloud",
            "InvoiceIssuerName": "Google Cloud",
            "RegionId": REGION,
            "AvailabilityZone": "us-central1-a" if resource else None,
            "ResourceId": resource,
            "ResourceName": resource.rsplit("/", 1)[-1] if resource else None,
            "ServiceCategory": "AI and Machine Learning" if sku.service == VERTEX else (
                "Storage" if sku.service == "Cloud Storage" else "Compute"),
            "ServiceName": sku.service,
            "SkuId": sku.sku_id,
            "SkuPriceId": None,
            "SubAccountId": PROJECT,
            "SubAccountName": "acme ml prod",
            "CommitmentDiscountId": COMMITMENT if commitment else None,
            "CommitmentDiscountStatus": commitment,
            "CommitmentDiscountType": "Committed Use Discount" if commitment else None,
            "CapacityReservationStatus": None,
            "x_Labels": [{"Key": k, "Value": v} for k, v in (labels or {}).items()],
            "x_ExportTime": datetime(2026, 10, 2, 7, 30, tzinfo=period[0].tzinfo),
        }  # fmt: skip
        names = {n for n, _ in self.schema}
        self.records.append({k: v for k, v in rec.items() if k in names})
        has_labels = "x_Labels" in names
        self.rows.append(
            Row(
                cloud="gcp",
                file=self.rel,
                counted=True,
                charge_period_start=period[0],
                kind=sku.kind,
                effective=cost,
                billed=cost,
                currency="USD",
                gpu_hours=qty if sku.kind == "gpu" else Decimal(0),
                hours=qty if sku.unit in ("hour", "gibibyte hour") else Decimal(0),
                account=PROJECT,
                region=REGION,
                instance_type=None,
                gpu_model=sku.gpu_model,
                capacity=CAPACITY[pricing],
                tags=dict(labels or {}) if has_labels else {},
                resource_id=resource,
                charge_class=None,
                **written(rec),
            )
        )


def _a2(f: _File, rng: random.Random, period: tuple[datetime, datetime]) -> None:
    """a2-highgpu-1g (1 A100, 12 vCPUs, 85 GiB), its Vertex AI training and the idle commitment."""
    labels = {"team": "recsys", "owner": "lee"}
    h = busy_hours(rng, period, 0.1)
    vm = SELF_LINK + "a2-train-01"
    f.add(A100, period, h, Decimal("2.9339"), resource=vm, labels=labels)
    f.add(A2_CORE, period, h * 12, Decimal("0.0316"), resource=vm, labels=labels)
    f.add(A2_RAM, period, h * 85, Decimal("0.0042"), resource=vm, labels=labels)
    h = busy_hours(rng, period, 0.7)
    f.add(VERTEX_A100, period, h, Decimal("3.3741"), resource=VERTEX_JOB, labels={"project": "llm"})
    f.add(VERTEX_A2_CORE, period, h * 12, Decimal("0.0364"), resource=VERTEX_JOB,
          labels={"project": "llm"})  # fmt: skip
    f.add(VERTEX_A2_RAM, period, h * 85, Decimal("0.0049"), resource=VERTEX_JOB,
          labels={"project": "llm"})  # fmt: skip
    h = busy_hours(rng, period, 0.85)  # committed A100 GPU-hours that nothing used
    f.add(CUD_A2_GPU, period, h, Decimal("1.8483"), pricing="Committed", commitment="Unused")


def _rest(f: _File, rng: random.Random, period: tuple[datetime, datetime], demo: bool) -> None:
    """An L4 on spot (g2-standard-8) with its core/RAM, a CPU VM, storage and egress (no labels;
    the demo leaves out the CPU VM's RAM and the egress)."""
    h = busy_hours(rng, period, 0.4)
    vm = SELF_LINK + "g2-spot-01"
    f.add(L4_SPOT, period, h, rate(rng, "0.2000", "0.2600"), pricing="Dynamic", resource=vm)
    f.add(G2_CORE, period, h * 8, Decimal("0.0090"), pricing="Dynamic", resource=vm)
    f.add(G2_RAM, period, h * 32, Decimal("0.0011"), pricing="Dynamic", resource=vm)
    h = busy_hours(rng, period)
    f.add(N2_CORE, period, h * 4, Decimal("0.0316"), resource=SELF_LINK + "web-01")
    f.add(STORAGE, period, Decimal(rng.randint(1000, 90000)) / 1000, Decimal("0.026"))
    if demo:
        return
    f.add(N2_RAM, period, h * 16, Decimal("0.0042"), resource=SELF_LINK + "web-01")
    f.add(EGRESS, period, Decimal(rng.randint(100, 9000)) / 1000, Decimal("0.12"))


def build(root: Path, flavour: Flavour) -> list[Row]:
    """Write `root` (the EXPORT DATA folder) and return the truth of every row written in it."""
    rng = random.Random("gpu-audit gcp quarter")
    files = [_File(i, flavour.demo) for i in range(2 if flavour.demo else 3)]
    late = files[-1] if not flavour.demo else files[0]  # September and October's rows
    june_30 = (utc(date(2026, 6, 30)), utc(date(2026, 7, 1)))
    files[0].add(A100, june_30, Decimal(24), Decimal("2.9339"), resource=SELF_LINK + "a2-train-01",
                 labels={"team": "recsys", "owner": "lee"})  # fmt: skip
    for month in (7, 8, 9):
        bp = month_start(2026, month)
        for period in slices(bp, next_month(bp), flavour.usage_step):
            _a2(late if month == 9 else files[0], rng, period)
            _rest(files[1], rng, period, flavour.demo)
            if not flavour.demo:  # in the file with labels
                files[0].add(INTER_ZONE, period, Decimal("57.5"), Decimal("0.01"),
                             resource=SELF_LINK + "feast-01", labels={"team": "recsys"})  # fmt: skip
        if month == 9:
            h = Decimal(rng.randint(200, 400))
            month_period = (utc(bp), utc(next_month(bp)))
            late.add(A100_80, month_period, h, Decimal("3.9270"), resource=SELF_LINK + "a2-ultra-01",
                         labels={"team": "recsys"})  # fmt: skip
    october_1 = (utc(date(2026, 10, 1)), utc(date(2026, 10, 2)))
    late.add(A100, october_1, Decimal(24), Decimal("2.9339"), resource=SELF_LINK + "a2-train-01",
                 labels={"team": "recsys", "owner": "lee"})  # fmt: skip
    rows: list[Row] = []
    for f in files:
        write_parquet(root / f.rel, f.schema, f.records)
        rows += f.rows
    return rows
