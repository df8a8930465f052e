"""Azure Cost Management `FocusCost` exports (dataVersion 1.0r2): `azure/` is the storage container.

Layout: `<rootFolderPath>/<exportName>/<YYYYMMDD-YYYYMMDD>/<runTimestamp>/<runGuid>/` with `manifest.json`
and `part_N_0001.csv.gz` (partitioned, `CreateNewReport`: every run is a full month-to-date copy).
July and August each have an early month-to-date run and a later complete one with the same
`runInfo.startDate`; only the latest `submittedTime` counts. Both runs of a month sit under one
`<runTimestamp>` folder (the month's start here), and the early run's GUID sorts after the later
one's, so neither folder order tells which run is current. August's complete run has two parts;
September's one run is Parquet (snappy) instead of CSV. Amounts, ids and names are synthetic.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Sequence
from dataclasses import replace
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
from tests.billing.writers import write_csv_gz, write_parquet

ROOT_FOLDER, EXPORT, CONTAINER = "focus", "gpu-focus-daily", "costs"
ML_SUB = "3f2b6c1e-8d4a-4e7b-9c1d-2a5e8f0b7c31"
APPS_SUB = "7c9e4a12-5b3d-4f6e-8a2c-1d0e9f8b6a45"
SUB_NAMES = {ML_SUB: "ml-prod", APPS_SUB: "apps-prod"}
BILLING_ACCOUNT = "/providers/Microsoft.Billing/billingAccounts/87654321"
REGION = "eastus"
RESERVATION = (
    "/providers/Microsoft.Capacity/reservationOrders/0b6f4c1d-2e3a-4b5c-8d9e-1f2a3b4c5d6e"
    "/reservations/9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d"
)
COLUMNS = (
    "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "BillingCurrency",
    "BillingAccountId", "BillingAccountName", "BillingPeriodStart", "BillingPeriodEnd",
    "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription",
    "ChargeFrequency", "ConsumedQuantity", "ConsumedUnit", "PricingCategory", "PricingQuantity",
    "PricingUnit", "ProviderName", "PublisherName", "InvoiceIssuerName", "RegionId", "RegionName",
    "ResourceId", "ResourceName", "ResourceType", "ServiceCategory", "ServiceName", "SkuId",
    "SkuPriceId", "SkuMeter", "SkuPriceDetails", "SubAccountId", "SubAccountName", "Tags",
    "CommitmentDiscountId", "CommitmentDiscountStatus", "CommitmentDiscountType",
    "CommitmentDiscountCategory", "x_SkuMeterCategory", "x_SkuDetails", "x_SkuMeterSubcategory",
)  # fmt: skip
# the Parquet run: amounts and quantities DOUBLE, periods TIMESTAMP (UTC, no zone), the rest text
PARQUET_TYPES = {
    "BilledCost": "DOUBLE", "EffectiveCost": "DOUBLE", "ListCost": "DOUBLE", "ContractedCost": "DOUBLE",
    "ConsumedQuantity": "DOUBLE", "PricingQuantity": "DOUBLE", "BillingPeriodStart": "TIMESTAMP",
    "BillingPeriodEnd": "TIMESTAMP", "ChargePeriodStart": "TIMESTAMP", "ChargePeriodEnd": "TIMESTAMP",
}  # fmt: skip
CAPACITY = {"Standard": "on-demand", "Dynamic": "spot", "Committed": "committed", None: "on-demand"}
NC24_LIST, NC24_RI, ND96_LIST, D4_RATE = (
    Decimal("3.6730"),
    Decimal("2.2043"),
    Decimal("98.3200"),
    Decimal("0.1920"),
)


SERIES = {
    "Standard_NC24ads_A100_v4": "NCadsA100v4 Series",
    "Standard_ND96isr_H100_v5": "NDisrH100v5 Series",
    "Standard_D4s_v5": "Dsv5 Series",
}


def _vm(size: str, vcpus: int) -> str:
    return json.dumps({"ServiceType": size, "VCPUs": vcpus}, separators=(",", ":"))


def _vm_id(sub: str, name: str, upper: bool) -> str:
    """An ARM id as Cost Management writes it: the casing differs between rows of one VM."""
    if upper:
        return f"/subscriptions/{sub}/resourceGroups/ML/providers/Microsoft.Compute/virtualMachines/{name.upper()}"
    return (
        f"/subscriptions/{sub}/resourcegroups/ml/providers/microsoft.compute/virtualmachines/{name}"
    )


class _Blob:
    """The records of one data blob and their truth."""

    def __init__(self, rel: str, counted: bool) -> None:
        self.rel, self.counted = rel, counted
        self.records: list[dict[str, Any]] = []
        self.rows: list[Row] = []
        self.stamps: list[str] = []

    def add(
        self,
        *,
        bp: date,
        period: tuple[datetime, datetime],
        kind: str,
        sub: str,
        effective: Decimal,
        description: str,
        billed: Decimal | None = None,
        list_cost: Decimal | None = None,
        hours: Decimal = Decimal(0),
        unit: str | None = "Hours",
        size: tuple[str, int, int, str] | None = None,  # VM size, vCPUs, GPUs, GPU class
        meter: str | None = None,
        meter_category: str = "Virtual Machines",
        pricing: str | None = "Standard",
        category: str = "Usage",
        resource: str = "",
        name: str = "",
        tags: str = "{}",
        commitment: str | None = None,
        service: tuple[str, str] = ("Virtual Machines", "Compute"),
    ) -> None:
        billed = effective if billed is None else billed
        zone = (
            len(self.records) % 2 == 0
        )  # half the rows spell their periods with a Z, half without
        stamp = "%Y-%m-%dT%H:%M:%SZ" if zone else "%Y-%m-%dT%H:%M:%S"
        rec: dict[str, Any] = {
            "BilledCost": six(billed),
            "EffectiveCost": six(effective),
            "ListCost": six(effective if list_cost is None else list_cost),
            "ContractedCost": six(effective),
            "BillingCurrency": "USD",
            "BillingAccountId": BILLING_ACCOUNT,
            "BillingAccountName": "Acme ML",
            "BillingPeriodStart": utc(bp),
            "BillingPeriodEnd": utc(next_month(bp)),
            "ChargePeriodStart": period[0],
            "ChargePeriodEnd": period[1],
            "ChargeCategory": category,
            "ChargeClass": None,
            "ChargeDescription": description,
            "ChargeFrequency": "Usage-Based" if category == "Usage" else "Recurring",
            "ConsumedQuantity": hours if unit else None,
            "ConsumedUnit": unit,
            "PricingCategory": pricing,
            "PricingQuantity": hours if unit else None,
            "PricingUnit": unit,
            "ProviderName": "Microsoft",
            "PublisherName": "Microsoft",
            "InvoiceIssuerName": "Microsoft",
            "RegionId": REGION if category == "Usage" else None,
            "RegionName": "East US" if category == "Usage" else None,
            "ResourceId": resource,
            "ResourceName": name,
            "ResourceType": "Virtual machine"
            if resource and size
            else ("Storage account" if resource else ""),
            "ServiceCategory": service[1],
            "ServiceName": service[0],
            "SkuId": "DZH318Z0BQ4L" if size else "",
            "SkuPriceId": "",
            "SkuMeter": meter,
            "SkuPriceDetails": "",  # not in FocusCost 1.0r2: the VM size is in x_SkuDetails
            "SubAccountId": sub,
            "SubAccountName": SUB_NAMES[sub],
            "Tags": tags,
            "CommitmentDiscountId": RESERVATION if commitment is not None else "",
            "CommitmentDiscountStatus": commitment or "",
            "CommitmentDiscountType": "Reservation" if commitment is not None else "",
            "CommitmentDiscountCategory": "Usage" if commitment is not None else "",
            "x_SkuMeterCategory": meter_category,
            "x_SkuDetails": _vm(size[0], size[1]) if size else "",
            "x_SkuMeterSubcategory": SERIES.get(size[0], "") if size else "",
        }
        self.records.append(rec)
        self.stamps.append(stamp)
        gpus = size[2] if size else 0
        self.rows.append(
            Row(
                cloud="azure",
                file=self.rel,
                counted=self.counted,
                charge_period_start=period[0],
                kind=kind,
                effective=six(effective),
                billed=six(billed),
                currency="USD",
                gpu_hours=hours * gpus if kind == "gpu" else Decimal(0),
                hours=hours if unit == "Hours" else Decimal(0),
                account=sub,
                region=rec["RegionId"],
                instance_type=size[0] if size else None,
                gpu_model=size[3] if size and gpus else None,
                capacity=CAPACITY[pricing],
                tags=json.loads(tags) if tags else {},
                resource_id=resource or None,
                charge_class=None,
                **written(rec),
            )
        )

    def text_records(self) -> list[dict[str, Any]]:
        """The records as the CSV spells them (periods as ISO text, with or without a zone)."""
        out = []
        for rec, stamp in zip(self.records, self.stamps, strict=True):
            out.append(
                {k: (v.strftime(stamp) if isinstance(v, datetime) else v) for k, v in rec.items()}
            )
        return out


NC24 = ("Standard_NC24ads_A100_v4", 24, 1, "A100-80GB")
ND96 = ("Standard_ND96isr_H100_v5", 96, 8, "H100")
D4 = ("Standard_D4s_v5", 4, 0, "")
SPEECH = '{"team":"speech","owner":"kim"}'


def _usage(
    b: _Blob, rng: random.Random, bp: date, period: tuple[datetime, datetime], n: int
) -> None:
    """One charge period's rows: three GPU VMs, the unused reservation, a CPU VM, storage, bandwidth."""
    h = busy_hours(rng, period, 0.1)
    b.add(bp=bp, period=period, kind="gpu", sub=ML_SUB, size=NC24, hours=h, effective=h * NC24_LIST,
          meter="NC24ads A100 v4", resource=_vm_id(ML_SUB, "gpu-01", n % 2 == 1),
          name='gpu, "a"', tags=SPEECH, description="NC24ads A100 v4")  # fmt: skip
    h = busy_hours(rng, period, 0.05)
    b.add(bp=bp, period=period, kind="gpu", sub=ML_SUB, size=NC24, hours=h, pricing="Committed",
          effective=h * NC24_RI, billed=Decimal(0), list_cost=h * NC24_LIST, commitment="Used",
          meter="NC24ads A100 v4", resource=_vm_id(ML_SUB, "gpu-03", False), name="gpu-03",
          tags='{"team":"search"}', description="NC24ads A100 v4 (reservation)")  # fmt: skip
    h = busy_hours(rng, period, 0.6)
    spot = rate(rng, "27.0000", "33.0000")
    b.add(bp=bp, period=period, kind="gpu", sub=ML_SUB, size=ND96, hours=h, pricing="Dynamic",
          effective=h * spot, list_cost=h * ND96_LIST, meter="ND96isr H100 v5 Spot",
          resource=_vm_id(ML_SUB, "h100-spot-01", False), name="h100-spot-01",
          tags="" if n % 2 else "{}", description="ND96isr H100 v5 Spot")  # fmt: skip
    h = busy_hours(rng, period, 0.9)  # reserved NC24ads hours that no VM used
    b.add(bp=bp, period=period, kind="unused", sub=ML_SUB, size=NC24, hours=h, pricing="Committed",
          effective=h * NC24_RI, billed=Decimal(0), list_cost=h * NC24_LIST, commitment="Unused",
          meter="NC24ads A100 v4", description="Unused reservation: NC24ads A100 v4")  # fmt: skip
    h = busy_hours(rng, period)
    b.add(bp=bp, period=period, kind="other", sub=APPS_SUB, size=D4, hours=h, effective=h * D4_RATE,
          meter="D4s v5", resource=_vm_id(APPS_SUB, "app-01", False), name="app-01",
          tags='{"team":"platform"}', description="D4s v5")  # fmt: skip
    gb = Decimal(rng.randint(10_000, 60_000)) / 1000
    b.add(bp=bp, period=period, kind="other", sub=APPS_SUB, hours=gb, unit="GB/Month",
          effective=gb * Decimal("0.021"), meter="Hot LRS Data Stored", meter_category="Storage",
          service=("Storage", "Storage"), name="acmemldata",
          resource=f"/subscriptions/{APPS_SUB}/resourceGroups/data/providers/Microsoft.Storage/storageAccounts/acmemldata",
          tags='{"team":"speech"}', description="Hot LRS Data Stored")  # fmt: skip
    gb = Decimal(rng.randint(1_000, 90_000)) / 1000
    b.add(bp=bp, period=period, kind="other", sub=APPS_SUB, hours=gb, unit="GB",
          effective=gb * Decimal("0.087"), meter="Standard Data Transfer Out",
          meter_category="Bandwidth", service=("Bandwidth", "Networking"),
          description="Standard Data Transfer Out")  # fmt: skip
    # the speech team's data account sends out (the team tag of Azure GPU rows: team transfer);
    # an nlp-tagged transfer stays left out: nlp's GPUs are on AWS, not Azure
    storage = f"/subscriptions/{APPS_SUB}/resourceGroups/data/providers/Microsoft.Storage/storageAccounts/acmemldata"
    gb = Decimal("431.25") + bp.month
    b.add(bp=bp, period=period, kind="team-transfer", sub=APPS_SUB, hours=gb, unit="GB",
          effective=gb * Decimal("0.087"), meter="Standard Data Transfer Out",
          meter_category="Bandwidth", service=("Bandwidth", "Networking"), name="acmemldata",
          resource=storage, tags='{"team":"speech"}', description="Standard Data Transfer Out")  # fmt: skip
    b.add(bp=bp, period=period, kind="other", sub=APPS_SUB, hours=Decimal("12.5"), unit="GB",
          effective=Decimal("12.5") * Decimal("0.087"), meter="Standard Data Transfer Out",
          meter_category="Bandwidth", service=("Bandwidth", "Networking"),
          tags='{"team":"nlp"}', description="Standard Data Transfer Out")  # fmt: skip


def _month_rows(b: _Blob, rng: random.Random, bp: date, stop: date, flavour: Flavour) -> None:
    """A month-to-date copy: the reservation's monthly fee, then [bp, stop)'s usage."""
    fee = Decimal("1273.3100")
    b.add(bp=bp, period=(utc(bp), utc(next_month(bp))), kind="other", sub=ML_SUB, unit=None,
          category="Purchase", pricing="Committed", effective=Decimal(0), billed=fee,
          commitment="", meter="NC24ads A100 v4", meter_category="Virtual Machines",
          description="Reservation purchase: NC24ads A100 v4, 1 year, monthly")  # fmt: skip
    for n, period in enumerate(slices(bp, stop, flavour.usage_step)):
        _usage(b, rng, bp, period, n)


def _guid(rng: random.Random, first: str) -> str:
    """A run GUID whose first hex digit is `first`: the early run's sorts after the complete run's."""
    return first + str(uuid.UUID(int=rng.getrandbits(128), version=4))[1:]


# month -> runs as (submittedTime, data up to (exclusive), GUID's first digit, parts, format)
RUNS: dict[int, list[tuple[str, date, str, int, str]]] = {
    7: [("2026-07-16T03:12:45.6181220Z", date(2026, 7, 16), "f", 1, "Csv"),
        ("2026-08-02T04:05:17.2043181Z", date(2026, 8, 1), "0", 1, "Csv")],
    8: [("2026-08-21T03:40:02.9931470Z", date(2026, 8, 21), "e", 1, "Csv"),
        ("2026-09-02T04:11:39.0150552Z", date(2026, 9, 1), "1", 2, "Csv")],
    9: [("2026-10-02T04:02:55.4471903Z", date(2026, 10, 1), "5", 1, "Parquet")],
}  # fmt: skip


def _write_blob(root: Path, blob: _Blob, fmt: str) -> int:
    path = root / blob.rel
    if fmt == "Csv":
        return write_csv_gz(path, COLUMNS, blob.text_records())
    write_parquet(path, [(c, PARQUET_TYPES.get(c, "VARCHAR")) for c in COLUMNS], blob.records)
    return path.stat().st_size


def _split(blob: _Blob, parts: int) -> Sequence[_Blob]:
    if parts == 1:
        return [blob]
    out = []
    size = -(-len(blob.records) // parts)
    for i in range(parts):
        part = _Blob(blob.rel.replace("part_0_", f"part_{i}_"), blob.counted)
        lo, hi = i * size, (i + 1) * size
        part.records, part.stamps = blob.records[lo:hi], blob.stamps[lo:hi]
        part.rows = [replace(r, file=part.rel) for r in blob.rows[lo:hi]]
        out.append(part)
    return out


def build(root: Path, flavour: Flavour) -> list[Row]:
    """Write `root` (the container) and return the truth of every row written in it."""
    rng = random.Random("gpu-audit azure quarter")
    rows: list[Row] = []
    for month, runs in RUNS.items():
        bp = month_start(2026, month)
        last = max(r[0] for r in runs)
        for submitted, stop, first, parts, fmt in runs:
            guid = _guid(rng, first)
            end = date.fromordinal(next_month(bp).toordinal() - 1)
            run_folder = f"{ROOT_FOLDER}/{EXPORT}/{bp:%Y%m%d}-{end:%Y%m%d}/{bp:%Y%m%d}0000/{guid}"
            if flavour.demo:
                fmt = "Csv"  # the demo stays small: its September run is CSV too
            ext = "csv.gz" if fmt == "Csv" else "snappy.parquet"
            whole = _Blob(f"{run_folder}/part_0_0001.{ext}", counted=submitted == last)
            _month_rows(whole, rng, bp, stop, flavour)
            blobs = []
            for blob in _split(whole, parts):
                size = _write_blob(root, blob, fmt)
                blobs.append(
                    {"blobName": blob.rel, "byteCount": size, "dataRowCount": len(blob.records)}
                )
                rows += blob.rows
            manifest = {
                "manifestVersion": "2024-03-01",
                "byteCount": sum(b["byteCount"] for b in blobs),
                "blobCount": len(blobs),
                "dataRowCount": sum(b["dataRowCount"] for b in blobs),
                "exportConfig": {
                    "exportName": EXPORT,
                    "resourceId": f"/subscriptions/{ML_SUB}/providers/Microsoft.CostManagement/exports/{EXPORT}",
                    "dataVersion": "1.0r2",
                    "apiVersion": "2023-07-01-preview",
                    "type": "FocusCost",
                    "timeFrame": "MonthToDate",
                    "granularity": "Daily",
                },
                "deliveryConfig": {
                    "partitionData": True,
                    "dataOverwriteBehavior": "CreateNewReport",
                    "fileFormat": fmt,
                    "compressionMode": "Gzip" if fmt == "Csv" else "Snappy",
                    "containerName": CONTAINER,
                    "rootFolderPath": ROOT_FOLDER,
                },
                "runInfo": {
                    "executionType": "Scheduled",
                    "submittedTime": submitted,
                    "runId": guid,
                    "startDate": f"{bp:%Y-%m-%d}T00:00:00",
                    "endDate": f"{date.fromordinal(stop.toordinal() - 1):%Y-%m-%d}T00:00:00",
                },
                "blobs": blobs,
            }
            path = root / run_folder / "manifest.json"
            path.write_text(json.dumps(manifest, separators=(",", ":")) + "\n", encoding="utf-8")
    return rows
