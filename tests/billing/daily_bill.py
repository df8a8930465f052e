"""A synthetic 2026-Q3 of daily FOCUS rows on two clouds, for the forecast, anomaly and
incremental tests, with its spend per resource and day spelled out as plain arithmetic
(`SPEND`), so a test works out its expected figures without the code under test.

- AWS (a Data Exports folder: one manifest and one Parquet file per month, rewritten each day
  as AWS refreshes a month's export): team `nlp` runs two p4d.24xlarge, 24 h on weekdays and 6 h
  at weekends, at $32.00/h until a reservation bought on 1 August bills them at $20.00/h (its
  weekend hours left unused are `Unused` rows, untagged); team `research` a g5.xlarge dev box on
  weekdays ($1.006/h, none at weekends) and, from Friday 14 August, a two-instance p5.48xlarge
  cluster left running ($55.00/h each, every day).
- GCP (the FOCUS table exported to Parquet, a new folder per export day): team `vision` holds 8
  A100 GPUs, 24 GPU-hours each on weekdays and 8 at weekends, at $2.90 per GPU-hour, and a sweep
  runs away on 5-7 August: 80 trials a day of 8 GPU-hours each.
- Every day each cloud also bills $10.00 of storage (not a GPU).
Everything is made up: ids, tags and amounts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from tests.billing.writers import write_parquet

Q3_FIRST = date(2026, 7, 1)
Q3_LAST = date(2026, 9, 30)
RESERVATION_DAY = date(2026, 8, 1)
CLUSTER_DAY = date(2026, 8, 14)
SWEEP_DAYS = (date(2026, 8, 5), date(2026, 8, 6), date(2026, 8, 7))
SWEEP_TRIALS = 80
RI = "arn:aws:ec2:us-east-1:111122223333:reserved-instances/ri-nlp-0001"
ACCOUNT = "111122223333"
PROJECT = "vision-prod-4711"
EXPORT = "focus-daily"

AWS_SCHEMA = [
    ("BilledCost", "DECIMAL(18,6)"), ("EffectiveCost", "DECIMAL(18,6)"),
    ("ConsumedQuantity", "DECIMAL(18,6)"), ("ChargePeriodStart", "TIMESTAMP"),
    ("ChargePeriodEnd", "TIMESTAMP"), ("ChargeCategory", "VARCHAR"),
    ("BillingCurrency", "VARCHAR"), ("PricingCategory", "VARCHAR"), ("SubAccountId", "VARCHAR"),
    ("RegionId", "VARCHAR"), ("ResourceId", "VARCHAR"), ("ServiceName", "VARCHAR"),
    ("ServiceProviderName", "VARCHAR"), ("CommitmentDiscountId", "VARCHAR"),
    ("CommitmentDiscountStatus", "VARCHAR"), ("x_UsageType", "VARCHAR"), ("Tags", "VARCHAR"),
]  # fmt: skip
GCP_SCHEMA = [
    ("BilledCost", "DECIMAL(18,6)"), ("EffectiveCost", "DECIMAL(18,6)"),
    ("ConsumedQuantity", "DECIMAL(18,6)"), ("ChargePeriodStart", "TIMESTAMP"),
    ("ChargePeriodEnd", "TIMESTAMP"), ("ChargeCategory", "VARCHAR"),
    ("BillingCurrency", "VARCHAR"), ("PricingCategory", "VARCHAR"), ("SubAccountId", "VARCHAR"),
    ("RegionId", "VARCHAR"), ("ResourceId", "VARCHAR"), ("ServiceName", "VARCHAR"),
    ("ServiceProviderName", "VARCHAR"), ("ChargeDescription", "VARCHAR"), ("Tags", "VARCHAR"),
]  # fmt: skip


def weekend(day: date) -> bool:
    return day.weekday() >= 5


def days(first: date, last: date) -> Iterator[date]:
    day = first
    while day <= last:
        yield day
        day += timedelta(days=1)


# --- the spend, as arithmetic -------------------------------------------------------------------
# Each line: (cloud, resource id, team or None, kind, hours or GPU-hours, rate) for one day.


def lines(day: date) -> list[tuple[str, str, str | None, str, Decimal, Decimal]]:
    out: list[tuple[str, str, str | None, str, Decimal, Decimal]] = []
    reserved = day >= RESERVATION_DAY
    nlp_hours = Decimal(6) if weekend(day) else Decimal(24)
    for n in (1, 2):
        rate = Decimal("20.00") if reserved else Decimal("32.00")
        out.append(("aws", f"i-0nlp{n:012d}", "nlp", "gpu", nlp_hours, rate))
    if reserved and nlp_hours < 24:
        out.append(("aws", RI, None, "unused", 2 * (24 - nlp_hours), Decimal("20.00")))
    if not weekend(day):
        out.append(("aws", "i-0researchdev0001", "research", "gpu", Decimal(24), Decimal("1.006")))
    if day >= CLUSTER_DAY:
        for n in (1, 2):
            out.append(("aws", f"i-0cluster{n:09d}", "research", "gpu", Decimal(24), Decimal(55)))
    vision_hours = Decimal(8 * 8) if weekend(day) else Decimal(8 * 24)
    vm = f"//compute.googleapis.com/projects/{PROJECT}/zones/us-central1-a/instances/vision-1"
    out.append(("gcp", vm, "vision", "gpu", vision_hours, Decimal("2.90")))
    if day in SWEEP_DAYS:
        for n in range(SWEEP_TRIALS):
            trial = (
                f"//aiplatform.googleapis.com/projects/{PROJECT}/customJobs/sweep-{day:%d}-{n:02d}"
            )
            out.append(("gcp", trial, "vision", "gpu", Decimal(8), Decimal("2.90")))
    out.append(("aws", "arn:aws:s3:::nlp-data", "nlp", "other", Decimal(1), Decimal(10)))
    out.append(
        ("gcp", "//storage.googleapis.com/vision-data", "vision", "other", Decimal(1), Decimal(10))
    )
    return out


def spend(
    day: date, cloud: str | None = None, team: str | None = "*", with_unused: bool = False
) -> Decimal:
    """GPU spend of one day (a cloud's, a team's: `None` for untagged; `*` every team)."""
    kinds = ("gpu", "unused") if with_unused else ("gpu",)
    return sum(
        (
            hours * rate
            for c, _, t, kind, hours, rate in lines(day)
            if kind in kinds and (cloud is None or c == cloud) and (team == "*" or t == team)
        ),
        Decimal(0),
    )


# --- the files ----------------------------------------------------------------------------------


def _utc(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).replace(tzinfo=None)


def _aws_record(day: date, line: tuple[str, str, str | None, str, Decimal, Decimal]) -> dict:
    _, rid, team, kind, hours, rate = line
    cost = hours * rate
    usage = {
        "i-0nlp": "USE1-BoxUsage:p4d.24xlarge",
        "i-0res": "USE1-BoxUsage:g5.xlarge",
        "i-0clu": "USE1-BoxUsage:p5.48xlarge",
        "arn:aws:ec2": "USE1-UnusedBox:p4d.24xlarge",
        "arn:aws:s3:": "USE1-TimedStorage-ByteHrs",
    }[rid[:6] if rid.startswith("i-") else rid[:11]]
    committed = kind == "unused" or (rid.startswith("i-0nlp") and day >= RESERVATION_DAY)
    return {
        "BilledCost": Decimal(0) if committed else cost,
        "EffectiveCost": cost,
        "ConsumedQuantity": hours,
        "ChargePeriodStart": _utc(day),
        "ChargePeriodEnd": _utc(day + timedelta(days=1)),
        "ChargeCategory": "Usage",
        "BillingCurrency": "USD",
        "PricingCategory": "Committed" if committed else "Standard",
        "SubAccountId": ACCOUNT,
        "RegionId": "us-east-1",
        "ResourceId": rid,
        "ServiceName": "Amazon Simple Storage Service"
        if kind == "other"
        else "Amazon Elastic Compute Cloud",
        "ServiceProviderName": "AWS",
        "CommitmentDiscountId": RI if committed else None,
        "CommitmentDiscountStatus": ("Unused" if kind == "unused" else "Used")
        if committed
        else None,
        "x_UsageType": usage,
        "Tags": json.dumps({"user:team": team}) if team else None,
    }


def _gcp_record(day: date, line: tuple[str, str, str | None, str, Decimal, Decimal]) -> dict:
    _, rid, team, kind, hours, rate = line
    return {
        "BilledCost": hours * rate,
        "EffectiveCost": hours * rate,
        "ConsumedQuantity": hours,
        "ChargePeriodStart": _utc(day),
        "ChargePeriodEnd": _utc(day + timedelta(days=1)),
        "ChargeCategory": "Usage",
        "BillingCurrency": "USD",
        "PricingCategory": "Standard",
        "SubAccountId": PROJECT,
        "RegionId": "us-central1",
        "ResourceId": rid,
        "ServiceName": "Cloud Storage" if kind == "other" else "Compute Engine",
        "ServiceProviderName": "Google Cloud",
        "ChargeDescription": (
            "Standard Storage US Multi-region"
            if kind == "other"
            else "Nvidia Tesla A100 GPU running in Americas"
        ),
        "Tags": json.dumps({"team": team}) if team else None,
    }


def write_aws_month(root: Path, month: int, through: date, execution: str = "exec-1") -> Path:
    """The month's export as AWS refreshes it: one data file with the days up to `through` in
    the execution's folder, and the manifest naming it (an earlier execution's file stays on
    the prefix, listed by no manifest: superseded)."""
    first = date(2026, month, 1)
    last = min(date(2026, month + 1, 1) - timedelta(days=1), through)
    records = [
        _aws_record(d, line) for d in days(first, last) for line in lines(d) if line[0] == "aws"
    ]
    period = f"2026-{month:02d}"
    rel = f"data/BILLING_PERIOD={period}/{execution}/{EXPORT}-00001.snappy.parquet"
    write_parquet(root / rel, AWS_SCHEMA, records)
    manifest = {
        "executionId": execution,
        "billingPeriod": {"start": f"{first}T00:00:00.000Z"},
        "dataFiles": [f"s3://bills/{EXPORT}/{rel}"],
    }
    path = root / f"metadata/BILLING_PERIOD={period}/{EXPORT}-Manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest) + "\n", encoding="utf-8")
    return root / rel


def write_gcp_day(root: Path, day: date) -> Path:
    """One export day's folder with that day's rows."""
    records = [_gcp_record(day, line) for line in lines(day) if line[0] == "gcp"]
    path = root / f"export_date={day}" / "000000000000.parquet"
    write_parquet(path, GCP_SCHEMA, records)
    return path


def build(root: Path, through: date) -> tuple[Path, Path]:
    """The two export folders under `root` with every day from 1 July to `through`."""
    aws, gcp = root / "aws", root / "gcp"
    for month in range(7, through.month + 1):
        write_aws_month(aws, month, through, execution=f"exec-{through:%m%d}")
    for day in days(Q3_FIRST, through):
        write_gcp_day(gcp, day)
    return aws, gcp
