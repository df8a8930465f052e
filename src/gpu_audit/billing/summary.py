"""The period's figures from the groups: every sum exact (Decimal), each figure rounded once."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

from gpu_audit.billing.exports import ExportFiles
from gpu_audit.billing.model import BilledGroup
from gpu_audit.billing.period import Period
from gpu_audit.catalog.gpus import canonical_gpu
from gpu_audit.core.frozen import record

CENT = Decimal("0.01")
USD = "USD"
UNTAGGED = None  # a tag dimension's line for spend without that tag
DIMENSIONS = ("cloud", "account", "region", "instance_type", "capacity")


def cents(amount: Decimal) -> Decimal:
    """Round once, half away from zero, to the cent (as invoices do)."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


@record
class Figures:
    """Exact sums of a set of rows."""

    effective: Decimal = Decimal(0)
    billed: Decimal = Decimal(0)
    gpu_hours: Decimal = Decimal(0)
    spot_gpu_hours: Decimal = Decimal(0)
    rows: int = 0

    def plus(self, group: BilledGroup) -> Figures:
        spot = group.gpu_hours if group.capacity == "spot" else Decimal(0)
        return Figures(
            effective=self.effective + group.effective,
            billed=self.billed + group.billed,
            gpu_hours=self.gpu_hours + group.gpu_hours,
            spot_gpu_hours=self.spot_gpu_hours + spot,
            rows=self.rows + group.rows,
        )


@record
class Line:
    """One line of a breakdown: its key (None: untagged) and figures."""

    key: str | None
    figures: Figures


@record
class UnusedLine:
    cloud: str
    account: str | None
    region: str | None
    instance_type: str | None
    reservation_id: str | None
    hours: Decimal
    figures: Figures


@record
class CurrencyTotals:
    """What was read in one currency in the period, split by what it is."""

    currency: str
    read: Figures  # every row of the period
    gpu: Figures  # GPU usage (and GCP GPU machines' cores and memory)
    machine: Figures  # the part of `gpu` that is GCP GPU machines' cores and memory
    unused: Figures  # reserved or committed GPU capacity left unused
    left_out: tuple[Line, ...]  # by reason (storage, CPU, tax, credits, purchases, …)
    corrections: Decimal  # EffectiveCost of correction rows counted in the period


@record
class BillingSummary:
    period: Period
    sources: tuple[ExportFiles, ...]
    tag_keys: tuple[str, ...]
    usd: CurrencyTotals
    other_currencies: tuple[CurrencyTotals, ...]
    breakdowns: dict[str, tuple[Line, ...]]  # dimension (or `tag:<key>`) → lines, largest first
    unused: tuple[UnusedLine, ...]
    outside_rows: int  # rows read whose charge period is outside the period
    outside_effective: dict[str, Decimal]  # by currency

    @property
    def spot_share(self) -> Decimal | None:
        """Spot GPU-hours over all GPU-hours (USD rows)."""
        total = self.usd.gpu.gpu_hours
        return None if not total else self.usd.gpu.spot_gpu_hours / total


def gpu_label(group: BilledGroup) -> str | None:
    """The instance type a group is shown under (a GCP GPU SKU: `gpu:<model>`)."""
    if group.instance_type:
        return group.instance_type
    if group.gcp_gpu:
        return f"gpu:{canonical_gpu(group.gcp_gpu) or group.gcp_gpu}"
    return None


_KEYS: dict[str, Callable[[BilledGroup], str | None]] = {
    "cloud": lambda g: g.cloud,
    "account": lambda g: g.account,
    "region": lambda g: g.region,
    "instance_type": gpu_label,
    "capacity": lambda g: g.capacity,
}


def summarize(
    period: Period,
    sources: Sequence[ExportFiles],
    groups: Iterable[BilledGroup],
    tag_keys: Sequence[str],
) -> BillingSummary:
    groups = list(groups)
    currencies = sorted({g.currency for g in groups if g.in_period})
    totals = {currency: _currency(currency, groups) for currency in currencies}
    usd = totals.pop(USD, None) or _currency(USD, [])
    gpu = [
        g for g in groups if g.in_period and g.currency == USD and g.kind in ("gpu", "gpu-machine")
    ]
    breakdowns: dict[str, tuple[Line, ...]] = {}
    for name, key in _KEYS.items():
        breakdowns[name] = _lines(gpu, key)
    for tag in tag_keys:
        breakdowns[f"tag:{tag}"] = _lines(gpu, _tag(tag))
    outside: dict[str, Decimal] = defaultdict(Decimal)
    for g in groups:
        if not g.in_period:
            outside[g.currency] += g.effective
    return BillingSummary(
        period=period,
        sources=tuple(sources),
        tag_keys=tuple(tag_keys),
        usd=usd,
        other_currencies=tuple(totals.values()),
        breakdowns=breakdowns,
        unused=_unused(groups),
        outside_rows=sum(g.rows for g in groups if not g.in_period),
        outside_effective=dict(sorted(outside.items())),
    )


def _tag(key: str) -> Callable[[BilledGroup], str | None]:
    def value(group: BilledGroup) -> str | None:
        return group.tags.get(key)

    return value


def _currency(currency: str, groups: Sequence[BilledGroup]) -> CurrencyTotals:
    read, gpu, machine, unused = Figures(), Figures(), Figures(), Figures()
    left: dict[str, Figures] = defaultdict(Figures)
    corrections = Decimal(0)
    for g in groups:
        if not g.in_period or g.currency != currency:
            continue
        read = read.plus(g)
        corrections += g.corrections
        if g.kind in ("gpu", "gpu-machine"):
            gpu = gpu.plus(g)
            machine = machine.plus(g) if g.kind == "gpu-machine" else machine
        elif g.kind == "unused":
            unused = unused.plus(g)
        else:
            left[g.reason or "other"] = left[g.reason or "other"].plus(g)
    lines = sorted(
        (Line(k, v) for k, v in left.items()),
        key=lambda line: (-abs(line.figures.effective), line.key or ""),
    )
    return CurrencyTotals(currency, read, gpu, machine, unused, tuple(lines), corrections)


def _lines(
    groups: Sequence[BilledGroup], key: Callable[[BilledGroup], str | None]
) -> tuple[Line, ...]:
    sums: dict[str | None, Figures] = defaultdict(Figures)
    for g in groups:
        sums[key(g)] = sums[key(g)].plus(g)
    ordered = sorted(
        sums.items(), key=lambda item: (-item[1].effective, item[0] is None, item[0] or "")
    )
    return tuple(Line(k, v) for k, v in ordered)


def _unused(groups: Sequence[BilledGroup]) -> tuple[UnusedLine, ...]:
    merged: dict[tuple[object, ...], tuple[Decimal, Figures]] = {}
    for g in groups:
        if not g.in_period or g.currency != USD or g.kind != "unused":
            continue
        key = (g.cloud, g.account, g.region, gpu_label(g), g.reservation_id)
        hours, figures = merged.get(key, (Decimal(0), Figures()))
        merged[key] = (hours + g.quantity, figures.plus(g))
    lines = [
        UnusedLine(cloud, account, region, itype, rid, hours, figures)  # type: ignore[arg-type]
        for (cloud, account, region, itype, rid), (hours, figures) in merged.items()
    ]
    return tuple(
        sorted(lines, key=lambda u: (-u.figures.effective, u.cloud, u.reservation_id or ""))
    )
