"""The row-level truth of the synthetic quarter: one Row per written row, and the Quarter's exact sums."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

Q3_START = datetime(2026, 7, 1, tzinfo=UTC)
Q3_END = datetime(2026, 10, 1, tzinfo=UTC)
ZERO = Decimal(0)
KINDS = ("gpu", "unused", "gpu-machine", "transfer", "team-transfer", "other")
BY_FIELDS = ("cloud", "account", "region", "instance_type", "gpu_model", "capacity", "resource_id")


@dataclass(frozen=True)
class Row:
    """One written row, as the truth sees it.

    - `file` is relative to the cloud folder it was written in (`aws/`, `azure/`, `gcp/`).
    - `counted` is False when its file is superseded: an AWS data file that its period's manifest does
      not list, or an Azure run that a later-submitted run with the same `runInfo.startDate` replaces.
      Rows outside the period are still `counted`; `Quarter.in_period` filters both.
    - `kind`: "gpu" (GPU usage), "unused" (unused capacity reservation or commitment: spend, no
      GPU-hours), "gpu-machine" (a GCP core/RAM SKU of a GPU machine family: spend, no GPU-hours),
      "transfer" (data transfer of a GPU resource, by its ResourceId), "team-transfer" (data
      transfer on no GPU resource, tagged with a team that has GPU usage rows in the same cloud),
      "other" (storage, other transfer, CPU VMs, tax, credits, commitment purchases and fees).
    - `effective`, `billed`: EffectiveCost and BilledCost exactly as written (never via float).
    - `hours`: ConsumedQuantity as written: instance-hours, or GPU-hours on a GCP GPU SKU; for a GCP
      core/RAM SKU the SKU's own unit (vCPU-hours, GiB-hours); 0 when the row has no quantity.
    - `gpu_hours`: hours × GPUs per instance (catalog) when kind == "gpu", the quantity itself on a
      GCP GPU SKU, else 0. A quantity correction carries negative hours and GPU-hours.
    - `capacity`: from PricingCategory: Standard -> "on-demand", Dynamic -> "spot", Committed ->
      "committed". A row without a PricingCategory (tax, credit, purchase) is "on-demand". Unused
      rows follow the same rule: the AWS unused capacity reservation is billed at Standard (on-demand)
      rates, the Azure reservation and the GCP commitment are Committed.
    - `instance_type`: the instance type or VM size the row's own SKU columns name (AWS SkuMeter /
      SkuPriceDetails, Azure x_SkuDetails ServiceType); None on GCP rows, which bill GPUs, cores and
      RAM per SKU, not per machine type, and None on rows about no machine.
    - `gpu_model`: the catalog GPU class (A100-40GB, A100-80GB, H100, A10G, L4), also on unused and
      gpu-machine rows; None on non-GPU rows.
    - `tags`: normalised: AWS `user:team` -> `team` (AWS-generated keys such as `aws:createdBy` kept
      as written), Azure's JSON object, GCP `x_Labels`; empty when the row has none (a NULL map, `{}`,
      an empty string, or a GCP file without `x_Labels`).
    - `resource_id`: as written (Azure ARM ids differ in case between rows of one VM); None if empty.
    - `list_cost`, `billing_period`, `commitment_id`: ListCost, BillingPeriodStart's day and
      CommitmentDiscountId as written (None where empty or absent).
    """

    cloud: str
    file: str
    counted: bool
    charge_period_start: datetime
    kind: str
    effective: Decimal
    billed: Decimal
    currency: str
    gpu_hours: Decimal
    hours: Decimal
    account: str
    region: str | None
    instance_type: str | None
    gpu_model: str | None
    capacity: str
    tags: Mapping[str, str]
    resource_id: str | None
    charge_class: str | None
    # ListCost as written (None where the file has no ListCost), the invoice's BillingPeriodStart
    # (YYYY-MM-DD) and the CommitmentDiscountId
    list_cost: Decimal | None = None
    billing_period: str | None = None
    commitment_id: str | None = None


def _key(row: Row, by: str) -> str | None:
    if by.startswith("tag:"):
        return row.tags.get(by[4:])
    if by not in BY_FIELDS:
        raise ValueError(f"unknown grouping {by!r}: one of {', '.join(BY_FIELDS)} or tag:<key>")
    value: str | None = getattr(row, by)
    return value


@dataclass(frozen=True)
class Quarter:
    """What build_quarter wrote under `root` (aws/, azure/, gcp/), with every row's truth."""

    root: Path
    period: tuple[datetime, datetime]
    rows: tuple[Row, ...]

    def in_period(self) -> list[Row]:
        """Counted rows whose ChargePeriodStart falls in [period start, period end)."""
        start, end = self.period
        return [r for r in self.rows if r.counted and start <= r.charge_period_start < end]

    def totals(self, *, kind: str | None = "gpu", by: str | None = None) -> dict[Any, Any]:
        """Exact sums of the in-period rows of `kind` (None: every kind).

        Without `by`: {"effective", "billed", "gpu_hours", "hours", "rows"}. With `by` (cloud, account,
        region, instance_type, gpu_model, capacity, resource_id or tag:<key>): {group: that dict}, the
        rows without the field or tag under None. Every figure is an exact Decimal, never rounded."""
        rows = [r for r in self.in_period() if kind is None or r.kind == kind]
        if len({r.currency for r in rows}) > 1:
            raise ValueError("rows in more than one currency are never summed together")
        if by is None:
            return _sum(rows)
        groups: dict[str | None, list[Row]] = {}
        for r in rows:
            groups.setdefault(_key(r, by), []).append(r)
        return {k: _sum(v) for k, v in groups.items()}


def _sum(rows: list[Row]) -> dict[str, Decimal | int]:
    return {
        "effective": sum((r.effective for r in rows), ZERO),
        "billed": sum((r.billed for r in rows), ZERO),
        "gpu_hours": sum((r.gpu_hours for r in rows), ZERO),
        "hours": sum((r.hours for r in rows), ZERO),
        "rows": len(rows),
    }


def written(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The truth's list cost, invoice and commitment of a record as its layout wrote it."""
    listed = rec.get("ListCost")
    period = rec.get("BillingPeriodStart")
    return {
        "list_cost": None if listed in (None, "") else Decimal(str(listed)),
        "billing_period": period.strftime("%Y-%m-%d") if isinstance(period, datetime) else None,
        "commitment_id": rec.get("CommitmentDiscountId") or None,
    }
