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
ZERO = Decimal(0)
USD = "USD"


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
    list: Decimal = Decimal(0)  # ListCost (an empty one counted as 0)

    def plus(self, group: BilledGroup) -> Figures:
        """These figures with one billed group's added (its GPU-hours counted as spot too when its
        capacity is spot)."""
        spot = group.gpu_hours if group.capacity == "spot" else Decimal(0)
        return Figures(
            effective=self.effective + group.effective,
            billed=self.billed + group.billed,
            gpu_hours=self.gpu_hours + group.gpu_hours,
            spot_gpu_hours=self.spot_gpu_hours + spot,
            rows=self.rows + group.rows,
            list=self.list + group.list,
        )

    def add(self, other: Figures) -> Figures:
        """The sums of these figures and `other`'s."""
        return Figures(
            effective=self.effective + other.effective,
            billed=self.billed + other.billed,
            gpu_hours=self.gpu_hours + other.gpu_hours,
            spot_gpu_hours=self.spot_gpu_hours + other.spot_gpu_hours,
            rows=self.rows + other.rows,
            list=self.list + other.list,
        )

    @property
    def savings_rate(self) -> Decimal | None:
        """The effective savings rate: 1 − EffectiveCost ÷ ListCost (None without list cost)."""
        return None if not self.list else 1 - self.effective / self.list

    @property
    def per_gpu_hour(self) -> Decimal | None:
        """EffectiveCost per GPU-hour (None without GPU-hours)."""
        return None if not self.gpu_hours else self.effective / self.gpu_hours


class Tally:
    """A running `Figures`: each group added in place, one `Figures` made at the end.

    `Figures.plus` makes a new frozen record for every group; the summary folds every group of
    the period (about a million on a daily read of a year's bill) into a dozen of them, and the
    records alone cost a tenth of that run. The additions are `plus`'s, in the same order
    (`tests/billing/test_summary_tally.py` holds the two to each other, digit for digit)."""

    __slots__ = ("billed", "effective", "gpu_hours", "list", "rows", "spot_gpu_hours")

    def __init__(self) -> None:
        self.effective = self.billed = self.gpu_hours = self.spot_gpu_hours = ZERO
        self.list = ZERO
        self.rows = 0

    def add(self, group: BilledGroup) -> None:
        """Add one billed group (its GPU-hours counted as spot too when its capacity is spot)."""
        self.effective += group.effective
        self.billed += group.billed
        self.gpu_hours += group.gpu_hours
        self.spot_gpu_hours += group.gpu_hours if group.capacity == "spot" else ZERO
        self.rows += group.rows
        self.list += group.list

    def figures(self) -> Figures:
        """The sums so far."""
        return Figures(
            self.effective, self.billed, self.gpu_hours, self.spot_gpu_hours, self.rows, self.list
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
class MonthLine:
    """One month of the period: GPU spend (usage and unused capacity) and the rows read."""

    month: str  # YYYY-MM
    spend: Figures
    read_rows: int  # every row of the month, of any kind: 0 says the month has no data


@record
class Invoice:
    """What one provider billed on one billing period (`BillingPeriodStart`): every row's
    BilledCost, of any charge category, wherever its charge period lies."""

    provider: str
    billing_period: str | None  # YYYY-MM-DD
    currency: str
    billed: Decimal
    rows: int
    in_period_billed: Decimal  # the part charged inside the report's period


@record
class Commitment:
    """A reservation or savings plan (`CommitmentDiscountId`) or a capacity reservation
    (`CapacityReservationId`) with GPU rows: its hours used and left unused."""

    kind: str  # commitment | capacity reservation
    id: str
    cloud: str
    used_hours: Decimal
    unused_hours: Decimal
    used_effective: Decimal
    unused_effective: Decimal

    @property
    def utilization(self) -> Decimal | None:
        """The share of the commitment's hours used (0 to 1), None when it has no hours."""
        whole = self.used_hours + self.unused_hours
        return None if not whole else self.used_hours / whole


@record
class Warning:
    """A data-quality warning: what is off and in how many rows."""

    code: str
    rows: int
    message: str


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
    transfer: Figures = Figures()  # data transfer of the GPU resources (same ResourceId)
    # data transfer of the GPU teams (same team tag and cloud, on no GPU resource's id)
    team_transfer: Figures = Figures()


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
    months: tuple[MonthLine, ...] = ()
    invoices: tuple[Invoice, ...] = ()
    commitments: tuple[Commitment, ...] = ()
    committed_gpu_hours: Decimal = Decimal(0)  # GPU-hours a commitment discount covers
    warnings: tuple[Warning, ...] = ()
    # the GPU resources' data transfer by cloud and tag:<key>, beside their GPU spend
    transfer: tuple[tuple[str, tuple[Line, ...]], ...] = ()
    # the GPU teams' other data transfer (same team tag and cloud) by cloud and tag:<key>
    team_transfer: tuple[tuple[str, tuple[Line, ...]], ...] = ()

    @property
    def spend(self) -> Figures:
        """GPU spend: GPU usage (with GCP GPU machines' cores and memory) plus reserved or
        committed GPU capacity left unused (USD)."""
        return self.usd.gpu.add(self.usd.unused)

    @property
    def commitment_coverage(self) -> Decimal | None:
        """GPU-hours a commitment discount covers over all GPU-hours."""
        total = self.usd.gpu.gpu_hours
        return None if not total else self.committed_gpu_hours / total

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
    """The period's summary: totals per currency, the USD GPU usage, unused commitments and data
    transfer, and each dimension's (and tag's) breakdown, largest first."""
    groups = list(groups)
    currencies = sorted({g.currency for g in groups if g.in_period})
    totals = {currency: _currency(currency, groups) for currency in currencies}
    usd = totals.pop(USD, None) or _currency(USD, [])
    gpu = [
        g for g in groups if g.in_period and g.currency == USD and g.kind in ("gpu", "gpu-machine")
    ]
    unused = [g for g in groups if g.in_period and g.currency == USD and g.kind == "unused"]
    moved = [g for g in groups if g.in_period and g.currency == USD and g.kind == "transfer"]
    teamed = [g for g in groups if g.in_period and g.currency == USD and g.kind == "team-transfer"]
    transfer_keys = (("cloud", _KEYS["cloud"]), *((f"tag:{t}", _tag(t)) for t in tag_keys))
    breakdowns: dict[str, tuple[Line, ...]] = {}
    for name, key in _KEYS.items():
        # spend by who and where includes the unused capacity; by what ran (instance type,
        # capacity) it does not: the unused capacity has its own line
        breakdowns[name] = _lines(gpu if name in _USAGE_ONLY else gpu + unused, key)
    for tag in tag_keys:
        breakdowns[f"tag:{tag}"] = _lines(gpu + unused, _tag(tag))
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
        months=_months(period, groups),
        invoices=_invoices(groups),
        commitments=_commitments(groups),
        committed_gpu_hours=sum(
            (g.gpu_hours for g in gpu if g.kind == "gpu" and _committed(g)), Decimal(0)
        ),
        warnings=_warnings(period, groups),
        transfer=tuple((name, _lines(moved, key)) for name, key in transfer_keys),
        team_transfer=tuple((name, _lines(teamed, key)) for name, key in transfer_keys),
    )


_USAGE_ONLY = ("instance_type", "capacity")


def _committed(group: BilledGroup) -> bool:
    return group.capacity == "committed" or (
        group.commitment_id is not None and not group.commitment_unused
    )


def _months(period: Period, groups: Sequence[BilledGroup]) -> tuple[MonthLine, ...]:
    spend: dict[str, Tally] = defaultdict(Tally)
    read: dict[str, int] = defaultdict(int)
    for g in groups:
        if not g.in_period or g.month is None:
            continue
        read[g.month] += g.rows
        if g.currency == USD and g.kind in ("gpu", "gpu-machine", "unused"):
            spend[g.month].add(g)
    return tuple(MonthLine(m, spend[m].figures(), read[m]) for m in period.months())


def _invoices(groups: Sequence[BilledGroup]) -> tuple[Invoice, ...]:
    """Each provider's billing periods that hold a row charged in the report's period."""
    every: dict[tuple[str, str | None, str], Tally] = defaultdict(Tally)
    inside: dict[tuple[str, str | None, str], Tally] = defaultdict(Tally)
    for g in groups:
        key = (g.cloud, g.billing_period, g.currency)
        every[key].add(g)
        if g.in_period:
            inside[key].add(g)
    return tuple(
        Invoice(cloud, period, currency, every[key].billed, every[key].rows, inside[key].billed)
        for key in sorted(every, key=lambda k: (k[0], k[1] or "", k[2]))
        if inside[key].rows
        for cloud, period, currency in [key]
    )


def _commitments(groups: Sequence[BilledGroup]) -> tuple[Commitment, ...]:
    """Hours used and unused of each commitment and capacity reservation with GPU rows (the
    instance hours, `ConsumedQuantity`, of its GPU usage and unused-capacity rows)."""
    sums: dict[tuple[str, str, str], list[Decimal]] = {}
    for g in groups:
        if not g.in_period or g.currency != USD or g.kind not in ("gpu", "unused"):
            continue
        keys = []
        if g.commitment_id and (g.kind == "gpu" or g.commitment_unused):
            keys.append(("commitment", g.commitment_id))
        if g.capacity_id and (g.kind == "gpu" or not g.commitment_unused):
            keys.append(("capacity reservation", g.capacity_id))
        for kind, ident in keys:
            entry = sums.setdefault((kind, ident, g.cloud), [Decimal(0)] * 4)
            at = 0 if g.kind == "gpu" else 1
            entry[at] += g.quantity
            entry[at + 2] += g.effective
    return tuple(
        Commitment(kind, ident, cloud, used, unused, used_cost, unused_cost)
        for (kind, ident, cloud), (used, unused, used_cost, unused_cost) in sorted(sums.items())
    )


def _warnings(period: Period, groups: Sequence[BilledGroup]) -> tuple[Warning, ...]:
    inside = [g for g in groups if g.in_period]
    usage = [g for g in inside if g.kind in ("gpu", "gpu-machine")]
    found = [
        Warning(
            "effective-over-list",
            sum(g.over_list_rows for g in usage),
            "GPU usage rows whose EffectiveCost exceeds their ListCost",
        ),
        Warning(
            "negative-usage",
            sum(g.negative_rows for g in inside),
            "rows with a negative ConsumedQuantity",
        ),
        Warning(
            "gpu-usage-without-resource-id",
            sum(g.rows for g in usage if not g.resource_id),
            "GPU usage rows with no ResourceId",
        ),
    ]
    held = {g.month for g in inside if g.month}
    months = period.months()
    missing = [m for m in months if m not in held]
    if missing:
        found.append(
            Warning("missing-months", 0, f"months of the period with no rows: {', '.join(missing)}")
        )
    others = sorted({g.currency for g in inside if g.currency != USD})
    if others:
        found.append(
            Warning(
                "other-currency",
                sum(g.rows for g in inside if g.currency != USD),
                f"rows in {', '.join(others)}: reported apart, never added to dollars",
            )
        )
    return tuple(w for w in found if w.rows or w.code == "missing-months")


def _tag(key: str) -> Callable[[BilledGroup], str | None]:
    def value(group: BilledGroup) -> str | None:
        return group.tags.get(key)

    return value


def _currency(currency: str, groups: Sequence[BilledGroup]) -> CurrencyTotals:
    read, gpu, machine, unused, transfer = Tally(), Tally(), Tally(), Tally(), Tally()
    team_transfer = Tally()
    left: dict[str, Tally] = defaultdict(Tally)
    corrections = Decimal(0)
    for g in groups:
        if not g.in_period or g.currency != currency:
            continue
        read.add(g)
        corrections += g.corrections
        if g.kind in ("gpu", "gpu-machine"):
            gpu.add(g)
            if g.kind == "gpu-machine":
                machine.add(g)
        elif g.kind == "unused":
            unused.add(g)
        elif g.kind == "transfer":
            transfer.add(g)
        elif g.kind == "team-transfer":
            team_transfer.add(g)
        else:
            left[g.reason or "other"].add(g)
    lines = sorted(
        (Line(k, v.figures()) for k, v in left.items()),
        key=lambda line: (-abs(line.figures.effective), line.key or ""),
    )
    return CurrencyTotals(
        currency,
        read.figures(),
        gpu.figures(),
        machine.figures(),
        unused.figures(),
        tuple(lines),
        corrections,
        transfer.figures(),
        team_transfer.figures(),
    )


def _lines(
    groups: Sequence[BilledGroup], key: Callable[[BilledGroup], str | None]
) -> tuple[Line, ...]:
    sums: dict[str | None, Tally] = defaultdict(Tally)
    for g in groups:
        sums[key(g)].add(g)
    ordered = sorted(
        sums.items(), key=lambda item: (-item[1].effective, item[0] is None, item[0] or "")
    )
    return tuple(Line(k, v.figures()) for k, v in ordered)


def _unused(groups: Sequence[BilledGroup]) -> tuple[UnusedLine, ...]:
    hours: dict[tuple[object, ...], Decimal] = defaultdict(Decimal)
    sums: dict[tuple[object, ...], Tally] = defaultdict(Tally)
    for g in groups:
        if not g.in_period or g.currency != USD or g.kind != "unused":
            continue
        key = (g.cloud, g.account, g.region, gpu_label(g), g.reservation_id)
        hours[key] += g.quantity
        sums[key].add(g)
    lines = [
        UnusedLine(cloud, account, region, itype, rid, hours[key], tally.figures())  # type: ignore[arg-type]
        for key, tally in sums.items()
        for cloud, account, region, itype, rid in [key]
    ]
    return tuple(
        sorted(lines, key=lambda u: (-u.figures.effective, u.cloud, u.reservation_id or ""))
    )
