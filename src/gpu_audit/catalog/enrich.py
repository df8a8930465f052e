"""Fill a Resource's GPU spec, prices, uptime and monthly cost from the catalog; a pure function."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import datetime
from functools import lru_cache
from operator import attrgetter

from gpu_audit.catalog import PriceQuote, gpu_class, instance_spec, price, rate_cards
from gpu_audit.catalog.lifecycle import lifecycle, retired_type
from gpu_audit.catalog.lookup import site_price
from gpu_audit.catalog.precision import compute_capability, precisions, tensor_cores
from gpu_audit.catalog.shapes import CLOUD_OF_SERVICE, gpu_shape_price, pinned_cloud
from gpu_audit.catalog.sweep import bound, is_sweep
from gpu_audit.core.resource import (
    Capacity,
    Estimate,
    Gpu,
    Hpo,
    Kind,
    Limits,
    Price,
    Resource,
    Share,
    State,
)

HOURS_PER_MONTH = 730.0
_BILLED = (State.RUNNING, State.PENDING, State.DEFINED)
# Azure bills a stopped VM in full until it is deallocated (deallocated VMs are not listed).
_BILLED_STOPPED = frozenset({"azure"})
# Services whose one resource is a pool of instances (a scale set, an Azure ML cluster): the
# price is per instance, times the instances its GPU count makes.
POOLED = frozenset({"vmss", "azureml"})
_CLOUDS = {"aws": "aws", "gcp": "gcp", "azure": "azure"}  # collectors' providers are clouds


def enrich(resource: Resource, now: datetime) -> Resource:
    """Fields the source left missing, derived from the catalog; what the source gave is kept."""
    gpu, quote = _catalog_facts(
        rate_cards(resource.service, resource.workload.value),
        resource.service if resource.kind is Kind.JOB else None,
        resource.kind,
        resource.instance_type,
        resource.region,
        resource.capacity,
        resource.gpu,
        resource.price,
        resource.service in POOLED,
    )
    retired, retiring = resource.retired, resource.retiring
    # A job file asks for hardware that may no longer be sold; live capacity (a running managed
    # job too) runs on what it has.
    asks = resource.kind is Kind.JOB and resource.state in (State.DEFINED, None)
    if asks and (gpu.model is not None or resource.service is not None):
        cloud = CLOUD_OF_SERVICE.get(resource.service or "") or _CLOUDS.get(resource.provider)
        retired, retiring = lifecycle(
            cloud, gpu.model, resource.instance_type, resource.service, now.date()
        )
    live = resource.kind is Kind.INSTANCE and resource.instance_type and retired is None
    if live and retired_type(str(resource.instance_type), now.date()):
        # a running machine of a family no longer sold bills at its price, but no spot (or
        # other relaunch) saving can be had on it: `retired` keeps the savings rules off it
        retired = lifecycle(None, gpu.model, resource.instance_type, None, now.date())[0]
    elif retired is not None:  # no longer sold: no price to run it at, or to save against
        quote = resource.price
    elif quote is not resource.price and resource.kind in _SHARE_KINDS:
        quote = _share_of(quote, resource.share, gpu.count, resource.instance_type)
    uptime = resource.uptime_hours
    if resource.launched_at is not None and resource.state in (State.RUNNING, State.PENDING):
        uptime = round(max(0.0, (now - resource.launched_at).total_seconds() / 3600), 2)
    monthly = resource.monthly_cost_usd
    if monthly is None and quote.hourly_usd is not None:
        billed = resource.state in _BILLED or resource.state is None
        billed = billed or (
            resource.state is State.STOPPED and resource.provider in _BILLED_STOPPED
        )
        monthly = round(quote.hourly_usd * HOURS_PER_MONTH, 2) if billed else 0.0
    estimate, hpo = resource.estimate, resource.hpo
    if resource.kind is Kind.JOB:
        estimate, hpo = _estimate(estimate, resource.limits, gpu, quote, hpo, resource.provider)
    training = resource.training
    if resource.kind is Kind.JOB and training.method == "full" and training.fits is None:
        from gpu_audit.catalog.fit import smaller_fit  # full fine-tunes only: not every check

        training = smaller_fit(
            training, gpu, quote, resource.capacity, resource.service, resource.region
        )
    if (
        gpu is resource.gpu
        and retired == resource.retired
        and retiring == resource.retiring
        and uptime == resource.uptime_hours
        and quote is resource.price
        and monthly == resource.monthly_cost_usd
        and estimate is resource.estimate
        and hpo is resource.hpo
        and training is resource.training
    ):
        return resource
    return _copy(
        resource,
        gpu=gpu,
        retired=retired,
        retiring=retiring,
        uptime_hours=uptime,
        price=quote,
        monthly_cost_usd=monthly,
        estimate=estimate,
        hpo=hpo,
        training=training,
    )


def _estimate(
    given: Estimate, limits: Limits, gpu: Gpu, quote: Price, hpo: Hpo, provider: str
) -> tuple[Estimate, Hpo]:
    """A job's GPU-hours and run cost at its runtime cap (GPUs × cap, hourly rate × cap), and a
    sweep's ceiling, wall clock and expected cost (catalog/sweep.py); missing when a cap or the
    price is unknown. What the source gave is kept."""
    hours, hourly = limits.max_runtime_hours, quote.hourly_usd
    gpu_hours, run = given.gpu_hours, given.run_usd
    if hours is not None and gpu_hours is None and gpu.count:
        gpu_hours = round(gpu.count * hours, 4)
    if hours is not None and run is None and hourly is not None:
        run = cents(hourly * hours)
    tuning, ceiling = given.tuning_usd, given.ceiling_usd
    sweep_hours, expected = given.sweep_hours, given.expected_usd
    if is_sweep(hpo):
        found = bound(hpo, limits, provider)
        if found.trial_hours is not None and hpo.trial_hours is None:
            hpo = replace(hpo, trial_hours=found.trial_hours)
        if tuning is None and hourly is not None and found.run_hours is not None:
            tuning = cents(hourly * found.run_hours)
        if expected is None and hourly is not None and found.expected_hours is not None:
            expected = cents(hourly * found.expected_hours)
        sweep_hours = found.sweep_hours if sweep_hours is None else sweep_hours
        ceiling = tuning if ceiling is None else ceiling
    elif ceiling is None:
        ceiling = run
    values = (gpu_hours, run, tuning, ceiling, sweep_hours, expected)
    if values == (
        given.gpu_hours,
        given.run_usd,
        given.tuning_usd,
        given.ceiling_usd,
        given.sweep_hours,
        given.expected_usd,
    ):
        return given, hpo
    return Estimate(
        gpu_hours=gpu_hours,
        run_usd=run,
        tuning_usd=tuning,
        ceiling_usd=ceiling,
        sweep_hours=sweep_hours,
        expected_usd=expected,
    ), hpo


_SHARE_KINDS = (Kind.POD, Kind.JOB)


def share_factor(share: Share, count: int | None, instance_type: str | None) -> float | None:
    """The part of its price a pod or job pays when it holds shares of GPUs (a MIG slice, a
    replica, a HAMi fraction): the GPUs' worth it holds over the GPUs its price is for (`count`,
    or the whole instances of `instance_type` they fill) (docs/shared-gpus.md); None for whole
    GPUs."""
    if share.mode is None or share.units is None or not share.per_gpu or not count:
        return None
    spec = instance_spec(instance_type)
    priced = count
    if spec is not None and spec.gpu_count:
        priced = spec.gpu_count * max(1, round(count / spec.gpu_count))
    gpus = share.units / share.per_gpu
    return gpus / priced if gpus < priced else None


def _share_of(quote: Price, share: Share, count: int | None, instance_type: str | None) -> Price:
    factor = share_factor(share, count, instance_type)
    if factor is None:
        return quote

    def part(value: float | None) -> float | None:
        return None if value is None else round(value * factor, 5)

    return Price(
        hourly_usd=part(quote.hourly_usd),
        on_demand_hourly_usd=part(quote.on_demand_hourly_usd),
        spot_hourly_usd=part(quote.spot_hourly_usd),
        as_of=quote.as_of,
        source=quote.source,
    )


def cents(value: float) -> float:
    """Round half up to the cent (round() is half-even: 0.125 → 0.12); a value too large for
    cents to matter (or not finite) is returned as it is."""
    if not -1e15 < value < 1e15:
        return value
    return float(int(value * 100 + 0.5 + 1e-9)) / 100 if value >= 0 else round(value, 2)


_FIELDS = tuple(f.name for f in fields(Resource))
_VALUES = attrgetter(*_FIELDS)  # every field's value in one C call
_INDEX = {name: index for index, name in enumerate(_FIELDS)}
_SLOTS = tuple(Resource.__dict__[name].__set__ for name in _FIELDS)  # slot setters


def _copy(resource: Resource, **changes: object) -> Resource:
    """`dataclasses.replace` without its per-call introspection or frozen-check detours: the
    values read in one call, the changes put in, each slot set directly (same result)."""
    values = list(_VALUES(resource))
    for name, value in changes.items():
        values[_INDEX[name]] = value
    copy = object.__new__(Resource)
    for put, value in zip(_SLOTS, values, strict=True):
        put(copy, value)
    return copy


@lru_cache(maxsize=16384)
def _catalog_facts(
    cards: tuple[str, ...],
    service: str | None,
    kind: Kind,
    instance_type: str | None,
    region: str | None,
    capacity: Capacity | None,
    gpu: Gpu,
    given: Price,
    pooled: bool = False,
) -> tuple[Gpu, Price]:
    """GPU spec and prices for one combination; fleets repeat a few hundred of them at most."""
    full = _hardware(_gpu(gpu, instance_type))
    return full, _price(cards, service, kind, instance_type, region, capacity, full, given, pooled)


def _gpu(gpu: Gpu, instance_type: str | None) -> Gpu:
    if gpu.model is not None and gpu.count is not None and gpu.memory_gib is not None:
        return gpu
    spec = instance_spec(instance_type)
    model = gpu.model or (spec.gpu_model if spec else None)
    count = gpu.count if gpu.count is not None else (spec.gpu_count if spec else None)
    memory = gpu.memory_gib
    if memory is None and spec is not None and spec.gpu_model == model:
        memory = spec.gpu_memory_gib
    if memory is None and model is not None:
        found = gpu_class(model)
        memory = found.memory_gib if found else None
    if (model, count, memory) == (gpu.model, gpu.count, gpu.memory_gib):
        return gpu
    return Gpu(model, count, memory, gpu.allocated)


def _hardware(gpu: Gpu) -> Gpu:
    """The GPU's compute capability, precisions and tensor cores (catalog/precision.py)."""
    if gpu.model is None or gpu.compute_capability is not None:
        return gpu
    capability = compute_capability(gpu.model)
    if capability is None:
        return gpu
    return replace(
        gpu,
        compute_capability=capability,
        precisions=precisions(gpu.model),
        tensor_cores=tensor_cores(gpu.model),
    )


# Services that are a site's own cluster (a Slurm script's `service`): priced only by a price
# file's `<site>:gpu:<MODEL>` rows (prices/pricefile.py SITE_PROVIDERS), never by a cloud's.
SITES = frozenset({"slurm"})


def priced_quote(
    cards: tuple[str, ...],
    service: str | None,
    kind: Kind,
    instance_type: str | None,
    region: str | None,
    gpu: Gpu,
    pooled: bool = False,
) -> tuple[PriceQuote | None, int]:
    """The quote a resource is priced on (its rate card first) and how many of the quoted item it
    runs: what `check`, `scan`, `estimate` and `diff` all price a job with."""
    if service in SITES:  # the site's own nodes: its price file's rate, never a cloud's
        return site_price(service, gpu.model, gpu.count, region), 1
    spec = instance_spec(instance_type)
    instances = 1
    # A job, or a managed service's endpoint or cluster, may hold several instances.
    if (kind is Kind.JOB or cards or pooled) and spec and gpu.count and spec.gpu_count:
        instances = max(1, round(gpu.count / spec.gpu_count))  # nodes × replicas
    job_gpus = kind is Kind.JOB and not instance_type  # GPUs named without a machine
    quote = None if job_gpus else price(instance_type, region, gpu.model, gpu.count, cards)
    if quote is None and kind is Kind.JOB and gpu.model and gpu.count:
        # GPUs without a machine: the shapes the pinned cloud sells (none for RunPod, Lambda …)
        cloud, priced = pinned_cloud(service)
        quote = gpu_shape_price(gpu.model, gpu.count, cloud, region) if priced else None
        instances = 1
    return quote, instances


def _price(
    cards: tuple[str, ...],
    service: str | None,
    kind: Kind,
    instance_type: str | None,
    region: str | None,
    capacity: Capacity | None,
    gpu: Gpu,
    given: Price,
    pooled: bool = False,
) -> Price:
    if given.on_demand_hourly_usd is not None and given.hourly_usd is not None:
        return given
    quote, instances = priced_quote(cards, service, kind, instance_type, region, gpu, pooled)
    if quote is None:
        return given
    on_demand = given.on_demand_hourly_usd
    if on_demand is None and quote.on_demand is not None:
        on_demand = round(quote.on_demand * instances, 5)
    spot = given.spot_hourly_usd
    if spot is None and quote.spot is not None:
        spot = round(quote.spot * instances, 5)
    hourly = given.hourly_usd
    if hourly is None:
        hourly = spot if capacity is Capacity.SPOT else on_demand
    return Price(
        hourly_usd=hourly,
        on_demand_hourly_usd=on_demand,
        spot_hourly_usd=spot,
        as_of=given.as_of or quote.as_of,
        source=given.source or quote.source,
    )
