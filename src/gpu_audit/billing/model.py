"""What the billing query returns: one group of rows with its exact sums."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal

from gpu_audit.core.frozen import record


@record
class BilledGroup:
    """Rows of one cloud, currency and kind (and, for GPU rows in the period, one resource,
    instance type, capacity and tag values) summed exactly.

    `kind`: `gpu` (GPU usage), `gpu-machine` (GCP core/RAM of a GPU machine family: spend, no
    GPU-hours), `unused` (reserved or committed GPU capacity paid and unused: spend, no
    GPU-hours), `transfer` (data transfer on a GPU resource's ResourceId), `team-transfer`
    (data transfer on no GPU resource but of a team tag a GPU row of the cloud carries) or
    `other` (not a GPU, or not usage: `reason` says which). Rows outside the
    period and `other` rows keep only cloud, currency, kind and reason.
    """

    cloud: str
    currency: str
    in_period: bool
    kind: str
    reason: str | None
    account: str | None
    region: str | None
    instance_type: str | None
    gpu_model: str | None
    gpus: int | None
    gcp_gpu: str | None  # the GPU named by a GCP GPU SKU's description (`A100 80GB`)
    capacity: str | None  # on-demand | spot | committed | reserved | unknown
    service: str | None
    usage_kind: str | None  # AWS usage type's kind: BoxUsage, SpotUsage, Train, Host, …
    resource_id: str | None
    reservation_id: str | None
    tags: Mapping[str, str]
    effective: Decimal
    billed: Decimal
    quantity: Decimal
    gpu_hours: Decimal
    corrections: Decimal  # EffectiveCost of `Correction` rows inside the group
    rows: int
    first_charge: datetime | None
    last_charge: datetime | None
    month: str | None = None  # YYYY-MM of the charge (rows in the period)
    billing_period: str | None = None  # BillingPeriodStart's day: the invoice the rows are on
    commitment_id: str | None = None  # CommitmentDiscountId (a reservation or savings plan)
    capacity_id: str | None = None  # CapacityReservationId
    commitment_unused: bool | None = None  # CommitmentDiscountStatus is Unused
    list: Decimal = Decimal(0)  # ListCost (an empty one counts as 0)
    over_list_rows: int = 0  # rows whose EffectiveCost exceeds their ListCost
    negative_rows: int = 0  # rows with a negative ConsumedQuantity
