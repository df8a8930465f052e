"""What a finding saves: each savings kind of the policy language (`savings:` on a rule) priced
on the resource, per month for live capacity and jobs, over the period for a bill or a run.
`gpu_audit.policy.engine` calls these when it builds a finding."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache, partial

from gpu_audit.catalog import PriceQuote, gpu_hour_price, instance_spec, price, rate_cards
from gpu_audit.catalog.enrich import HOURS_PER_MONTH, cents
from gpu_audit.catalog.knob_savings import KNOB_SAVINGS, knob_hourly_saving
from gpu_audit.core.resource import Capacity, Resource, State
from gpu_audit.policy.conditions import Condition, Group, Leaf
from gpu_audit.policy.loader import Rule

Saving = Callable[[Resource], float | None]
_BILLED = frozenset([State.RUNNING, State.PENDING, State.DEFINED, None])


def rule_saving(kind: str | None, downsize_to: str | None) -> Saving | None:
    """How a rule's findings are priced: the estimated monthly saving of acting on one."""
    if kind == "stop":
        return _stop_saving
    if kind == "spot":
        return _spot_saving
    if kind == "unallocated":
        return _unallocated_saving
    if kind == "minimum":
        return _minimum_saving
    if kind == "slice":
        return _slice_saving
    if kind in KNOB_SAVINGS:
        return partial(_knob_monthly, kind)
    if kind == "downsize" and downsize_to is None:
        return _half_saving
    if kind == "downsize":
        return partial(_downsize_saving, _target_price(downsize_to))
    return None


def billed_saving(
    kind: str | None, resource: Resource, share: Decimal | None = None
) -> float | None:
    """A billed resource's saving over its period, from what it was billed: stopping saves
    its effective cost (an unused reservation, its unused part); spot saves the catalog's
    spot discount on its on-demand spend; locality saves the data transfer above `share` of
    its compute (the rule's bound; none: all of it). Other kinds are not priced on a bill."""
    billing = resource.billing
    if kind == "locality":
        return _locality_saving(billing.transfer_usd, billing.effective_usd, share)
    if kind == "stop":
        spent = billing.unused_usd or billing.effective_usd
        return None if spent is None else max(0.0, spent)
    if kind != "spot" or billing.effective_usd is None:
        return None
    if resource.capacity is not Capacity.ON_DEMAND:
        return 0.0
    cards = rate_cards(resource.service, resource.workload.value)  # SageMaker on its own card
    gpu = resource.gpu
    quote = price(resource.instance_type, resource.region, gpu.model, gpu.count, cards)
    if quote is None or not quote.on_demand or quote.spot is None:
        return None
    return round(billing.effective_usd * max(0.0, 1 - quote.spot / quote.on_demand), 2)


def _locality_saving(
    transfer: float | None, compute: float | None, share: Decimal | None
) -> float | None:
    """The transfer above `share` of the compute, exactly in cents (both are billed cents)."""
    if transfer is None:
        return None
    allowed = Decimal(0)
    if share is not None:
        if compute is None:
            return None
        allowed = share * max(Decimal(str(compute)), Decimal(0))
    excess = max(Decimal(str(transfer)) - allowed, Decimal(0))
    return float(excess.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def transfer_bound(condition: Condition) -> Decimal | None:
    """The share of compute a rule lets a resource's transfer reach: the number its `require`
    puts on `billing.transfer_share` with `lte` or `lt` (None where it puts none)."""
    if isinstance(condition, Leaf):
        if condition.field.name == "billing.transfer_share" and condition.operator in (
            "lte",
            "lt",
        ):
            try:
                return Decimal(condition.operand_text)
            except ArithmeticError:
                return None
        return None
    if isinstance(condition, Group) and condition.mode == "all":  # a bound every finding broke
        for part in condition.parts:
            found = transfer_bound(part)
            if found is not None:
                return found
    return None


def run_saving(kind: str | None, resource: Resource) -> float | None:
    """A finished run's dollars in the period: what its failed trials cost, or the training
    time an interruption threw away (a restart from zero spends it again)."""
    if kind == "failed-trials":
        spent = resource.run.failed_usd
    elif kind == "lost-work":
        spent = resource.run.lost_usd
    elif kind == "startup":
        spent = resource.run.startup_usd
    else:
        return None
    return None if spent is None else cents(spent)


def _stop_saving(resource: Resource) -> float | None:
    return resource.monthly_cost_usd


def _spot_saving(resource: Resource) -> float | None:
    if resource.monthly_cost_usd is None:
        return None
    if resource.capacity is Capacity.SPOT or resource.state not in _BILLED:
        return 0.0
    on_demand, spot = resource.price.on_demand_hourly_usd, resource.price.spot_hourly_usd
    if on_demand is None or spot is None:
        return None
    return round(max(0.0, on_demand - spot) * HOURS_PER_MONTH, 2)


def _unallocated_saving(resource: Resource) -> float | None:
    """A cluster node's GPUs no pod requests: their share of the node's monthly cost; on a node
    sharing its GPUs, the free shares' cost (its idle cost, split to the cent)."""
    if resource.share.idle_usd is not None:
        return resource.share.idle_usd
    monthly, gpu = resource.monthly_cost_usd, resource.gpu
    if monthly is None or not gpu.count or gpu.allocated is None:
        return None
    idle = max(0, gpu.count - gpu.allocated)
    return round(monthly * idle / gpu.count, 2)


def _slice_saving(resource: Resource) -> float | None:
    """A pod holding a whole GPU whose p95 fits a MIG slice: its cost minus the smallest slice
    (in compute slices, at least one) that p95 fits, per share of the GPU."""
    monthly, share = resource.monthly_cost_usd, resource.share
    p95, per_gpu = resource.utilization.gpu_p95, share.per_gpu
    if monthly is None or p95 is None or not per_gpu or not resource.gpu.count:
        return None
    slices = max(1, math.ceil(p95 * per_gpu / 100 - 1e-9))
    if slices >= per_gpu:
        return 0.0
    return round(monthly * (1 - slices / per_gpu), 2)


def _minimum_saving(resource: Resource) -> float | None:
    """An autoscaling cluster's nodes kept at its minimum: their share of its monthly cost."""
    monthly, minimum, spec = resource.monthly_cost_usd, resource.min_nodes, None
    if resource.instance_type:
        spec = instance_spec(resource.instance_type)
    if monthly is None or minimum is None or spec is None or not resource.gpu.count:
        return None
    nodes = max(1, round(resource.gpu.count / spec.gpu_count))
    return round(monthly * min(minimum, nodes) / nodes, 2)


def _knob_monthly(kind: str, resource: Resource) -> float | None:
    """A knob's saving on live capacity: its hourly saving × the hours of a month."""
    hourly = knob_hourly_saving(kind, resource)
    return None if hourly is None else round(hourly * HOURS_PER_MONTH, 2)


def _half_saving(resource: Resource) -> float | None:
    """No target class: one size down is about half the GPUs or half the price."""
    monthly = resource.monthly_cost_usd
    return None if monthly is None else round(monthly * 0.5, 2)


def _downsize_saving(target: PriceQuote | None, resource: Resource) -> float | None:
    """The monthly cost minus the same number of GPUs of the target class."""
    monthly = resource.monthly_cost_usd
    if monthly is None or target is None or target.on_demand is None:
        return None
    spot = resource.capacity is Capacity.SPOT and target.spot
    per_hour = target.spot if spot else target.on_demand
    count = resource.gpu.count or 1
    return round(max(0.0, monthly - per_hour * count * HOURS_PER_MONTH), 2)  # type: ignore[operator]


JobSaving = Callable[[Resource], tuple[float | None, str | None]]


def job_saving(kind: str | None, downsize_to: str | None) -> JobSaving | None:
    """How a rule prices a job's finding: per run at its runtime cap, else per GPU-hour."""
    if kind == "lost-work":
        return _excess_lost_work
    if kind not in ("stop", "spot", "downsize", *KNOB_SAVINGS):
        return None
    target = _target_price(downsize_to) if kind == "downsize" and downsize_to else None
    return partial(_per_run, kind, target)


def _excess_lost_work(resource: Resource) -> tuple[float | None, str | None]:
    """A spot job whose expected lost work exceeds its discount: on-demand saves the excess."""
    net = resource.interruption.net_usd
    return (None, None) if net is None else (cents(max(0.0, -net)), "run")


def _per_run(
    kind: str, target: PriceQuote | None, resource: Resource
) -> tuple[float | None, str | None]:
    net = resource.interruption.net_usd
    if kind == "spot" and net is not None and resource.capacity is Capacity.ON_DEMAND:
        return cents(max(0.0, net)), "run"  # the discount net of expected lost work
    hourly = _hourly_saving(kind, target, resource)
    net_hourly = resource.interruption.net_hourly_usd
    if kind == "spot" and net_hourly is not None and resource.capacity is Capacity.ON_DEMAND:
        hourly = max(0.0, net_hourly)  # no cap: the saving per hour, net of lost work
    if hourly is None:
        return None, None
    cap = resource.limits.max_runtime_hours
    if cap is not None:
        return cents(hourly * cap), "run"
    gpus = resource.gpu.count
    return (round(hourly / gpus, 4), "gpu-hour") if gpus else (None, None)


def _hourly_saving(kind: str, target: PriceQuote | None, resource: Resource) -> float | None:
    """What acting on the finding saves per hour the job runs, from the job's own prices."""
    price = resource.price
    if kind == "stop":
        return price.hourly_usd
    if kind in KNOB_SAVINGS:
        return knob_hourly_saving(kind, resource)
    if kind == "spot":
        if resource.capacity is Capacity.SPOT:
            return 0.0
        if price.on_demand_hourly_usd is None or price.spot_hourly_usd is None:
            return None
        return max(0.0, price.on_demand_hourly_usd - price.spot_hourly_usd)
    if price.hourly_usd is None:
        return None
    if target is None:
        return price.hourly_usd * 0.5  # no target class: one size down is about half
    per_gpu = (
        target.spot if resource.capacity is Capacity.SPOT and target.spot else target.on_demand
    )
    if per_gpu is None:
        return None
    return max(0.0, price.hourly_usd - per_gpu * (resource.gpu.count or 1))


_target_price = lru_cache(maxsize=64)(gpu_hour_price)  # a handful of classes, priced once


def downsize_target(rule: Rule) -> str | None:
    """The GPU class a downsize finding prices its saving at: the rule's `downsize_to`, else the
    `at-most` class its requirement names; None for a rule that does not downsize."""
    if rule.downsize_to is not None:
        return rule.downsize_to
    if rule.info.savings != "downsize":
        return None
    return _at_most(rule.require)


def _at_most(condition: Condition) -> str | None:
    if isinstance(condition, Leaf):
        if condition.operator == "at-most" and condition.field.name == "gpu.model":
            return condition.operand_text
        return None
    if isinstance(condition, Group):
        for part in condition.parts:
            found = _at_most(part)
            if found:
                return found
    return None
