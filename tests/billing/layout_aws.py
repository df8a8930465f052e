"""AWS Data Exports, "FOCUS 1.2 with AWS columns", Parquet: `aws/` is the export folder `gpu-focus`.

Layout (AWS "Data export delivery" docs): `data/BILLING_PERIOD=YYYY-MM/<executionId>/gpu-focus-0000N.snappy.parquet`
and `metadata/BILLING_PERIOD=YYYY-MM/gpu-focus-Manifest.json`, whose `dataFiles` (full S3 URIs) name the
current files. Periods 2026-06 to 2026-10; July has two data files; August keeps an older execution's
file that its manifest does not list (superseded: never counted); October delivers a Correction to a
September p4d row. Amounts, ids and names are synthetic.
"""

from __future__ import annotations

import json
import random
import re
import uuid
import zlib
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

from tests.billing.periods import (
    Flavour,
    busy_hours,
    money,
    month_start,
    next_month,
    rate,
    six,
    slices,
    utc,
)
from tests.billing.truth import Q3_END, Q3_START, Row, written
from tests.billing.writers import write_parquet

EXPORT = "gpu-focus"
# the export folder in the bucket; `aws/` is its local copy
S3_PREFIX = f"s3://acme-billing/cur/{EXPORT}/"
PAYER = "111122223333"
RESEARCH, PLATFORM = "111122223333", "444455556666"
ACCOUNT_NAMES = {RESEARCH: "ml-research", PLATFORM: "ml-platform"}
REGION = "us-east-1"
DEC, TS, TEXT = "DECIMAL(38,10)", "TIMESTAMPTZ", "VARCHAR"

SCHEMA: list[tuple[str, str]] = [
    ("BilledCost", DEC), ("EffectiveCost", DEC), ("ListCost", DEC), ("ContractedCost", DEC),
    ("BillingCurrency", TEXT), ("BillingAccountId", TEXT),
    ("BillingPeriodStart", TS), ("BillingPeriodEnd", TS),
    ("ChargePeriodStart", TS), ("ChargePeriodEnd", TS),
    ("ChargeCategory", TEXT), ("ChargeClass", TEXT), ("ChargeDescription", TEXT),
    ("ChargeFrequency", TEXT), ("ConsumedQuantity", DEC), ("ConsumedUnit", TEXT),
    ("PricingCategory", TEXT), ("PricingQuantity", DEC), ("PricingUnit", TEXT),
    ("ProviderName", TEXT), ("PublisherName", TEXT), ("InvoiceIssuerName", TEXT),
    ("RegionId", TEXT), ("RegionName", TEXT), ("AvailabilityZone", TEXT),
    ("ResourceId", TEXT), ("ResourceName", TEXT), ("ResourceType", TEXT),
    ("ServiceCategory", TEXT), ("ServiceName", TEXT), ("ServiceSubcategory", TEXT),
    ("SkuId", TEXT), ("SkuPriceId", TEXT), ("SkuMeter", TEXT), ("SkuPriceDetails", TEXT),
    ("SubAccountId", TEXT), ("SubAccountName", TEXT), ("Tags", "MAP(VARCHAR, VARCHAR)"),
    ("CapacityReservationId", TEXT), ("CapacityReservationStatus", TEXT),
    ("CommitmentDiscountId", TEXT), ("CommitmentDiscountStatus", TEXT),
    ("CommitmentDiscountType", TEXT), ("CommitmentDiscountCategory", TEXT),
    ("x_Operation", TEXT), ("x_ServiceCode", TEXT), ("x_UsageType", TEXT),
]  # fmt: skip
MANIFEST_TYPES = {DEC: "decimal(38,10)", TS: "timestamp", TEXT: "string"}
CAPACITY = {"Standard": "on-demand", "Dynamic": "spot", "Committed": "committed", None: "on-demand"}
EC2, SAGEMAKER, S3 = (
    "Amazon Elastic Compute Cloud",
    "Amazon SageMaker",
    "Amazon Simple Storage Service",
)
SAVINGS_PLANS = "Savings Plans for AWS Compute usage"
# ServiceName -> x_ServiceCode, ServiceCategory, ServiceSubcategory, ResourceType
SERVICES = {
    EC2: ("AmazonEC2", "Compute", "Virtual Machines", "Instance"),
    SAGEMAKER: ("AmazonSageMaker", "AI and Machine Learning", "Machine Learning", "TrainingJob"),
    S3: ("AmazonS3", "Storage", "Object Storage", "Bucket"),
    SAVINGS_PLANS: ("ComputeSavingsPlans", "Compute", "Other (Compute)", "SavingsPlan"),
}
USAGE_TYPE = re.compile(r"(?:BoxUsage|SpotUsage|UnusedBox|Train):(.+)")
SAVINGS_PLAN = f"arn:aws:savingsplans::{RESEARCH}:savingsplan/5e7a1c2d-3b4f-4a6e-9d8c-7f1e2a3b4c5d"
RESERVATION = f"arn:aws:ec2:{REGION}:{RESEARCH}:capacity-reservation/cr-0f3a9b1c2d4e5f607"


@dataclass(frozen=True)
class Gpu:
    instance_type: str
    gpus: int
    model: str


P4D = Gpu("p4d.24xlarge", 8, "A100-40GB")
P5 = Gpu("p5.48xlarge", 8, "H100")
G5 = Gpu("g5.12xlarge", 4, "A10G")
ML_P4D = Gpu("ml.p4d.24xlarge", 8, "A100-40GB")


class _File:
    """The records of one data file and their truth."""

    def __init__(self, rel: str, counted: bool) -> None:
        self.rel, self.counted = rel, counted
        self.records: list[dict[str, Any]] = []
        self.rows: list[Row] = []

    def add(
        self,
        *,
        bp: date,
        period: tuple[datetime, datetime],
        kind: str,
        account: str,
        meter: str | None,
        description: str,
        effective: Decimal,
        billed: Decimal | None = None,
        list_cost: Decimal | None = None,
        hours: Decimal = Decimal(0),
        unit: str | None = "Hrs",
        gpu: Gpu | None = None,
        pricing: str | None = "Standard",
        category: str = "Usage",
        frequency: str = "Usage-Based",
        service: str = EC2,
        resource: str | None = None,
        tags: dict[str, str] | None = None,
        price_details: str | None = None,
        charge_class: str | None = None,
        region: str | None = REGION,
        extra: dict[str, Any] | None = None,
    ) -> None:
        billed = effective if billed is None else billed
        usage = USAGE_TYPE.search(meter or "")
        instance = gpu.instance_type if gpu else (usage.group(1) if usage else None)
        code, category_name, subcategory, resource_type = SERVICES[service]
        rec: dict[str, Any] = {
            "BilledCost": six(billed),
            "EffectiveCost": six(effective),
            "ListCost": six(effective if list_cost is None else list_cost),
            "ContractedCost": six(effective),
            "BillingCurrency": "USD",
            "BillingAccountId": PAYER,
            "BillingPeriodStart": utc(bp),
            "BillingPeriodEnd": utc(next_month(bp)),
            "ChargePeriodStart": period[0],
            "ChargePeriodEnd": period[1],
            "ChargeCategory": category,
            "ChargeClass": charge_class,
            "ChargeDescription": description,
            "ChargeFrequency": frequency,
            "ConsumedQuantity": hours if unit else None,
            "ConsumedUnit": unit,
            "PricingCategory": pricing,
            "PricingQuantity": hours if unit else None,
            "PricingUnit": unit,
            "ProviderName": "AWS",
            "PublisherName": "Amazon Web Services, Inc.",
            "InvoiceIssuerName": "Amazon Web Services, Inc.",
            "RegionId": region,
            "RegionName": "US East (N. Virginia)" if region else None,
            "AvailabilityZone": "us-east-1a" if resource else None,
            "ResourceId": resource,
            "ResourceName": resource.rsplit("/", 1)[-1] if resource else None,
            "ResourceType": resource_type if resource else None,
            "ServiceCategory": category_name,
            "ServiceName": service,
            "ServiceSubcategory": subcategory,
            "SkuId": f"SKU{zlib.crc32(meter.encode()):010d}" if meter else None,
            "SkuPriceId": None,
            "SkuMeter": meter,
            "SkuPriceDetails": price_details,
            "SubAccountId": account,
            "SubAccountName": ACCOUNT_NAMES[account],
            "Tags": tags,
            "x_Operation": ("RunInstances" if service == EC2 else "CreateTrainingJob")
            if usage
            else None,
            "x_ServiceCode": code,
            "x_UsageType": meter,
        }
        rec.update(extra or {})
        self.records.append(rec)
        self.rows.append(
            Row(
                cloud="aws",
                file=self.rel,
                counted=self.counted,
                charge_period_start=period[0],
                kind=kind,
                effective=six(effective),
                billed=six(billed),
                currency="USD",
                gpu_hours=hours * gpu.gpus if kind == "gpu" and gpu else Decimal(0),
                hours=hours if unit == "Hrs" else Decimal(0),
                account=account,
                region=region,
                instance_type=instance,
                gpu_model=gpu.model if gpu else None,
                capacity=CAPACITY[pricing],
                tags={k.removeprefix("user:"): v for k, v in (tags or {}).items()},
                resource_id=resource,
                charge_class=charge_class,
                **written(rec),
            )
        )


NLP = {"user:team": "nlp", "user:owner": "ana", "aws:createdBy": "IAMUser:AIDAEXAMPLEANA:ana"}
P4D_RATE, P5_LIST, SP_RATE = Decimal("32.7726"), Decimal("98.3200"), Decimal("19.6636")
ML_P4D_RATE, G5_RATE, M5_RATE = Decimal("37.6880"), Decimal("5.6720"), Decimal("0.1920")
P4D_ID = f"arn:aws:ec2:{REGION}:{RESEARCH}:instance/i-04d7a1b2c3d4e5f60"
P5_ID = "i-05b8c2d3e4f5a6b71"
SP_P4D_ID = f"arn:aws:ec2:{REGION}:{RESEARCH}:instance/i-04d7a1b2c3d4e5f62"
TRAINING_ID = f"arn:aws:sagemaker:{REGION}:{PLATFORM}:training-job/llm-pretrain-q3"
# the forgotten cluster: untagged, ran 2026-07-03 10:45 to 2026-08-20 09:30 UTC, inside the quarter
CLUSTER_IDS = (
    "i-0c1a5e7f9b3d2a401",
    "i-0c1a5e7f9b3d2a402",
    "i-0c1a5e7f9b3d2a403",
    "i-0c1a5e7f9b3d2a404",
)
CLUSTER_FIRST, CLUSTER_STOP = date(2026, 7, 3), date(2026, 8, 21)
CLUSTER_LATE_START, CLUSTER_EARLY_STOP = Decimal("10.75"), Decimal("14.5")  # hours not run


def _usage(
    f: _File,
    rng: random.Random,
    bp: date,
    periods: list[tuple[datetime, datetime]],
    only_p4d: bool = False,
) -> None:
    """The month's GPU usage rows and the unused capacity reservation, one per charge period."""
    for period in periods:
        h = busy_hours(rng, period, 0.15)
        f.add(bp=bp, period=period, kind="gpu", account=RESEARCH, gpu=P4D, hours=h,
              meter="USE1-BoxUsage:p4d.24xlarge", effective=h * P4D_RATE, resource=P4D_ID, tags=NLP,
              description="$32.7726 per On Demand Linux p4d.24xlarge Instance Hour",
              price_details='{"InstanceType":"p4d.24xlarge","GpuCount":8}')  # fmt: skip
        if only_p4d:
            continue
        h = busy_hours(rng, period, 0.5)
        spot = rate(rng, "38.0000", "42.0000")
        f.add(bp=bp, period=period, kind="gpu", account=RESEARCH, gpu=P5, hours=h, pricing="Dynamic",
              meter="USE1-SpotUsage:p5.48xlarge", effective=h * spot, list_cost=h * P5_LIST,
              resource=P5_ID, tags={"user:team": "vision"},
              description=f"${spot} per Spot Linux p5.48xlarge Instance Hour")  # fmt: skip
        h = busy_hours(rng, period, 0.05)
        f.add(bp=bp, period=period, kind="gpu", account=RESEARCH, gpu=P4D, hours=h, pricing="Committed",
              meter="USE1-BoxUsage:p4d.24xlarge", effective=h * SP_RATE, billed=Decimal(0),
              list_cost=h * P4D_RATE, resource=SP_P4D_ID, tags={"user:team": "nlp", "user:owner": "raj"},
              description="p4d.24xlarge covered by Savings Plan",
              price_details='{"InstanceType":"p4d.24xlarge"}',
              extra={"CommitmentDiscountId": SAVINGS_PLAN, "CommitmentDiscountStatus": "Used",
                     "CommitmentDiscountType": "Savings Plan", "CommitmentDiscountCategory": "Spend"})  # fmt: skip
        h = busy_hours(rng, period, 0.7)
        f.add(bp=bp, period=period, kind="gpu", account=PLATFORM, gpu=ML_P4D, hours=h,
              service=SAGEMAKER, meter="USE1-Train:ml.p4d.24xlarge", effective=h * ML_P4D_RATE,
              resource=TRAINING_ID, tags={"user:project": "llm"},
              description="$37.688 per ml.p4d.24xlarge hour for Training")  # fmt: skip
        h = busy_hours(rng, period, 0.8)  # the reserved p5 sat idle this many hours
        f.add(bp=bp, period=period, kind="unused", account=RESEARCH, gpu=P5, hours=h,
              meter="USE1-UnusedBox:p5.48xlarge", effective=h * P5_LIST, tags={},
              description="$98.32 per Unused Reservation Linux p5.48xlarge Instance Hour",
              price_details='{"InstanceType":"p5.48xlarge","GpuCount":8}',
              extra={"CapacityReservationId": RESERVATION, "CapacityReservationStatus": "Unused"})  # fmt: skip


def _not_gpu(
    f: _File, rng: random.Random, bp: date, period: tuple[datetime, datetime], lean: str
) -> None:
    """The month's non-GPU rows: a CPU VM and tax ("lean"); with "some", also storage, a credit
    and the Savings Plan fee; with "all", also transfer and the other account's tax."""
    h = Decimal((period[1] - period[0]).days * 24)
    f.add(bp=bp, period=period, kind="other", account=RESEARCH, hours=h, effective=h * M5_RATE,
          meter="USE1-BoxUsage:m5.xlarge", resource="i-0e5a1b2c3d4e5f6a7",
          tags={"user:team": "platform"}, price_details='{"InstanceType":"m5.xlarge"}',
          description="$0.192 per On Demand Linux m5.xlarge Instance Hour")  # fmt: skip
    f.add(bp=bp, period=period, kind="other", account=RESEARCH, unit=None, pricing=None,
          category="Tax", frequency="Recurring", meter=None, region=None,
          effective=money(rng, "100", "900"), description="Tax for product code AmazonEC2")  # fmt: skip
    if lean == "lean":
        return
    gb = Decimal(rng.randint(800_000, 1_200_000)) / 1000
    f.add(bp=bp, period=period, kind="other", account=RESEARCH, hours=gb, unit="GB-Mo", service=S3,
          meter="TimedStorage-ByteHrs", effective=gb * Decimal("0.023"),
          resource="acme-ml-datasets", tags={"user:team": "nlp"},
          description="$0.023 per GB - first 50 TB / month of storage used")  # fmt: skip
    # the p4d's own transfer: inter-region out of the GPU instance (same ResourceId)
    gb = Decimal(rng.randint(2_000_000, 6_000_000)) / 1000
    f.add(bp=bp, period=period, kind="transfer", account=RESEARCH, hours=gb, unit="GB",
          meter="USE1-USW2-AWS-Out-Bytes", effective=gb * Decimal("0.02"), resource=P4D_ID,
          tags=NLP, description="$0.02 per GB - US East (N. Virginia) data transfer to US West (Oregon)")  # fmt: skip
    # the nlp team's dataset bucket replicated across regions: no GPU's ResourceId, but the
    # team tag of GPU rows (team transfer); the platform team's (no GPUs) stays left out
    gb = Decimal("812.345") + bp.month
    f.add(bp=bp, period=period, kind="team-transfer", account=RESEARCH, hours=gb, unit="GB",
          service=S3, meter="USE1-USW2-AWS-Out-Bytes", effective=gb * Decimal("0.02"),
          resource="acme-ml-datasets", tags={"user:team": "nlp"},
          description="$0.02 per GB - US East (N. Virginia) data transfer to US West (Oregon)")  # fmt: skip
    gb = Decimal("64.5")
    f.add(bp=bp, period=period, kind="other", account=RESEARCH, hours=gb, unit="GB",
          meter="USE1-DataTransfer-Regional-Bytes", effective=gb * Decimal("0.01"),
          resource="i-0e5a1b2c3d4e5f6a7", tags={"user:team": "platform"},
          description="$0.01 per GB - regional data transfer - in/out/between EC2 AZs")  # fmt: skip
    credit = -money(rng, "200", "400")
    f.add(bp=bp, period=period, kind="other", account=RESEARCH, unit=None, pricing=None,
          category="Credit", frequency="One-Time", meter=None, region=None, effective=credit,
          description="AWS Activate credit")  # fmt: skip
    fee = Decimal("14.1552") * h
    f.add(bp=bp, period=period, kind="other", account=RESEARCH, unit=None, pricing=None,
          category="Purchase", frequency="Recurring", meter="ComputeSP:1yrNoUpfront", region=None,
          service=SAVINGS_PLANS,
          effective=Decimal(0), billed=fee, description="Savings Plan recurring fee",
          extra={"CommitmentDiscountId": SAVINGS_PLAN, "CommitmentDiscountType": "Savings Plan",
                 "CommitmentDiscountCategory": "Spend"})  # fmt: skip
    if lean == "some":
        return
    gb = Decimal(rng.randint(100_000, 900_000)) / 1000
    f.add(bp=bp, period=period, kind="other", account=RESEARCH, hours=gb, unit="GB",
          meter="USE1-DataTransfer-Out-Bytes", effective=gb * Decimal("0.09"),
          description="$0.09 per GB - first 10 TB / month data transfer out")  # fmt: skip
    f.add(bp=bp, period=period, kind="other", account=PLATFORM, unit=None, pricing=None,
          category="Tax", frequency="Recurring", meter=None, region=None,
          effective=money(rng, "100", "900"), description="Tax for product code AmazonEC2")  # fmt: skip


def _cluster(f: _File, bp: date, flavour: Flavour, stop: date) -> None:
    """The forgotten cluster's rows in `bp`'s month, one per instance per charge period."""
    first = max(CLUSTER_FIRST, bp)
    stop = min(stop, CLUSTER_STOP, next_month(bp))
    for n, instance in enumerate(CLUSTER_IDS[: flavour.cluster_size]):
        for period in slices(first, stop, flavour.cluster_step):
            h = Decimal((period[1] - period[0]).days * 24)
            if period[0] == utc(CLUSTER_FIRST):
                h -= CLUSTER_LATE_START
            if period[1] == utc(CLUSTER_STOP):
                h -= CLUSTER_EARLY_STOP
            tags = (
                None if n % 2 else {}
            )  # untagged: a NULL map on some instances, an empty one on others
            f.add(bp=bp, period=period, kind="gpu", account=PLATFORM, gpu=G5, hours=h,
                  meter="USE1-BoxUsage:g5.12xlarge", effective=h * G5_RATE,
                  resource=instance, tags=tags,
                  price_details=None if n % 2 else '{"InstanceType":"g5.12xlarge","GpuCount":4}',
                  description="$5.672 per On Demand Linux g5.12xlarge Instance Hour")  # fmt: skip


def _edge(f: _File, rng: random.Random, bp: date, first: date, stop: date) -> None:
    """A few p4d days and the month's CPU VM in a period outside the quarter (June, October)."""
    for period in slices(first, stop, 1):
        h = busy_hours(rng, period, 0.15)
        f.add(bp=bp, period=period, kind="gpu", account=RESEARCH, gpu=P4D, hours=h,
              meter="USE1-BoxUsage:p4d.24xlarge", effective=h * P4D_RATE, resource=P4D_ID, tags=NLP,
              description="$32.7726 per On Demand Linux p4d.24xlarge Instance Hour")  # fmt: skip
    month = slices(bp, next_month(bp), None)[0]
    h = Decimal(24 * (month[1] - month[0]).days)
    f.add(bp=bp, period=month, kind="other", account=RESEARCH, hours=h, effective=h * M5_RATE,
          meter="USE1-BoxUsage:m5.xlarge", resource="i-0e5a1b2c3d4e5f6a7",
          tags={"user:team": "platform"}, description="$0.192 per On Demand Linux m5.xlarge Instance Hour")  # fmt: skip


def _correction(f: _File, bp: date) -> None:
    """Delivered with October: 6.5 p4d hours billed on 2026-09-14 are taken back (a quantity correction)."""
    h = Decimal("-6.5")
    f.add(bp=bp, period=(utc(date(2026, 9, 14)), utc(date(2026, 9, 15))), kind="gpu",
          account=RESEARCH, gpu=P4D, hours=h, meter="USE1-BoxUsage:p4d.24xlarge",
          effective=h * P4D_RATE, resource=P4D_ID, tags=NLP, charge_class="Correction",
          description="Correction: $32.7726 per On Demand Linux p4d.24xlarge Instance Hour")  # fmt: skip


def _data_rel(period: str, execution: str, part: int) -> str:
    return f"data/BILLING_PERIOD={period}/{execution}/{EXPORT}-{part:05d}.snappy.parquet"


def build(root: Path, flavour: Flavour) -> list[Row]:
    """Write `root` (the export folder) and return the truth of every row written in it."""
    rng = random.Random("gpu-audit aws quarter")

    def new_id() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    export_arn = f"arn:aws:bcm-data-exports:us-east-1:{RESEARCH}:export/{EXPORT}-{new_id()}"
    files: list[_File] = []
    manifests: dict[str, dict[str, Any]] = {}
    for month in (7, 8, 9, 10) if flavour.demo else (6, 7, 8, 9, 10):  # the demo has no June
        bp = month_start(2026, month)
        period = f"{bp:%Y-%m}"
        execution = new_id()
        current = [_File(_data_rel(period, execution, 1), counted=True)]
        f = current[0]
        if month == 6:
            _edge(f, rng, bp, date(2026, 6, 28), date(2026, 7, 1))
        elif month == 10:
            _edge(f, rng, bp, bp, date(2026, 10, 2 if flavour.demo else 3))
            _correction(f, bp)
        else:
            _usage(f, rng, bp, slices(bp, next_month(bp), flavour.usage_step))
            # the demo keeps its files small: a few kinds of non-GPU row in July, two in the others
            lean = "all" if not flavour.demo else ("some" if month == 7 else "lean")
            _not_gpu(f, rng, bp, slices(bp, next_month(bp), None)[0], lean)
            if month == 7 and not flavour.demo:  # a second data file in one period
                current.append(_File(_data_rel(period, execution, 2), counted=True))
            _cluster(current[-1], bp, flavour, next_month(bp))
        if month == 8:  # an older execution's file, left on the prefix, listed by no manifest
            old = _File(_data_rel(period, new_id(), 1), counted=False)
            stop = date(2026, 8, 16)
            _usage(old, rng, bp, slices(bp, stop, flavour.usage_step), only_p4d=flavour.demo)
            _cluster(old, bp, flavour, stop)
            files.append(old)
        files += current
        manifests[period] = {
            "executionId": execution,
            "exportArn": export_arn,
            "billingPeriod": {
                "start": f"{bp:%Y-%m-%d}T00:00:00.000Z",
                "end": f"{next_month(bp):%Y-%m-%d}T00:00:00.000Z",
            },
            "columns": [
                {"name": n, "type": MANIFEST_TYPES.get(t, "map<string,string>")} for n, t in SCHEMA
            ],
            "dataFiles": [S3_PREFIX + data.rel for data in current],
        }
    _round_half(files)
    for data in files:
        write_parquet(root / data.rel, SCHEMA, data.records)
    for period, manifest in manifests.items():
        path = root / f"metadata/BILLING_PERIOD={period}/{EXPORT}-Manifest.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(manifest, separators=(",", ":")) + "\n", encoding="utf-8")
    return [row for data in files for row in data.rows]


def _round_half(files: list[_File]) -> None:
    """Make the quarter's spot p5 spend (tag team=vision) end in an exact half cent after an even
    cent, e.g. 1234.565000: half-up rounds it to .57, half-even to .56 (one figure, rounded once)."""
    hits = [
        (data, i)
        for data in files
        for i, row in enumerate(data.rows)
        if row.counted
        and row.tags.get("team") == "vision"
        and Q3_START <= row.charge_period_start < Q3_END
    ]
    total = sum((data.rows[i].effective for data, i in hits), Decimal(0))
    target = total.quantize(Decimal("0.01"), rounding=ROUND_FLOOR) + Decimal("0.005")
    if int(target * 100) % 2:
        target -= Decimal("0.01")
    data, i = hits[-1]
    cost = six(data.rows[i].effective + target - total)
    data.records[i].update(BilledCost=cost, EffectiveCost=cost, ContractedCost=cost)
    data.rows[i] = replace(data.rows[i], effective=cost, billed=cost)
