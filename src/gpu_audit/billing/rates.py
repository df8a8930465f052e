"""Billed effective rates as a price file (`--write-prices`): the team's own negotiated rates.

Per instance type, region and capacity (on-demand from `Standard` rows, spot from `Dynamic`):
the period's EffectiveCost over its usage hours. A GCP GPU SKU gives a per-GPU-hour rate
(`gpu:<MODEL>`), a SageMaker usage type the `sagemaker:` rate card. Committed and unused rows
are not a rate anyone can buy again, and are left out. The file is the one `catalog refresh`
writes, so `scan`, `check`, `estimate` and `diff` take it with `--prices`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.billing.summary import USD
from gpu_audit.catalog.gpus import canonical_gpu
from gpu_audit.core.stamps import stamp as utc_stamp
from gpu_audit.prices.pricefile import PriceFile, PriceRow

_CAPACITIES = {"on-demand": "on-demand", "spot": "spot"}


def _item(group: BilledGroup) -> str | None:
    if group.gcp_gpu:
        model = canonical_gpu(group.gcp_gpu)
        return f"gpu:{model}" if model else None
    if not group.instance_type:
        return None
    if group.instance_type.lower().startswith("ml."):
        return f"sagemaker:{group.instance_type}"
    return group.instance_type


def billed_rates(groups: Iterable[BilledGroup], period: Period, now: datetime) -> PriceFile:
    """The period's USD on-demand and spot GPU rows as a price file: each (cloud, item, region,
    capacity)'s effective cost over its usage quantity, to 4 decimals (a rate of 0 or less left
    out)."""
    sums: dict[tuple[str, str, str, str], tuple[Decimal, Decimal, int]] = {}
    for g in groups:
        capacity = _CAPACITIES.get(g.capacity or "")
        item = _item(g)
        if not (g.in_period and g.kind == "gpu" and g.currency == USD and capacity and item):
            continue
        if not g.region or g.quantity <= 0:
            continue
        key = (g.cloud, item, g.region, capacity)
        cost, hours, rows = sums.get(key, (Decimal(0), Decimal(0), 0))
        sums[key] = (cost + g.effective, hours + g.quantity, rows + g.rows)
    stamp = utc_stamp(now)
    out = []
    for (cloud, item, region, capacity), (cost, hours, rows) in sorted(sums.items()):
        rate = (cost / hours).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
        if rate <= 0:
            continue
        unit = "GPU-hours" if item.startswith("gpu:") else "hours"
        out.append(
            PriceRow(
                provider=cloud,
                type=item,
                region=region,
                capacity=capacity,
                usd_per_hour=float(rate),
                effective=period.start.date().isoformat(),
                fetched_at=stamp,
                source=(
                    f"billing export {period.name}: EffectiveCost {cost.quantize(Decimal('0.01'))} "
                    f"USD over {hours.normalize():f} {unit} in {rows} rows"
                ),
            )
        )
    return PriceFile(tuple(out), stamp, {})
