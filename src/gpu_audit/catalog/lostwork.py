"""Expected spot lost work per run, and the spot saving net of it (docs/spot.md); pure functions.

lost = hours × rate × instances × (interval ÷ 2 + resume) × spot hourly rate, the interval in
hours (the whole run where the job states no checkpoint interval);
discount = (on-demand − spot) × hours; net = discount − lost. A job file is priced at its
runtime cap and the runbook's resume bound; a finished run at its training time and its
measured mean resume.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from gpu_audit.catalog import instance_spec, price, rate_cards
from gpu_audit.catalog.interruptions import Rate, rate_for
from gpu_audit.catalog.shapes import CLOUD_OF_SERVICE
from gpu_audit.core.resource import Capacity, Interruption, Kind, Resource, State, Workload
from gpu_audit.core.yamlsrc import is_templated

DEFAULT_RESUME_MINUTES = 5.0
# The label or tag a job states its checkpoint interval in (GCP labels allow no `/`).
INTERVAL_TAGS = ("gpu-audit/checkpoint-interval-minutes", "gpu-audit-checkpoint-interval-minutes")
# Fields a templated interval leaves unknown: the rules over them are not evaluated.
UNKNOWN_WHEN_TEMPLATED = frozenset(
    {"checkpoint.interval_minutes", "interruption.lost_usd", "interruption.net_usd"}
)
_CLOUDS = ("aws", "gcp", "azure")
_KNOB = "checkpoint_interval_minutes"  # a framework's wall-clock setting (core/knobs/duration.py)


def money(value: float) -> float:
    """Round half up to the cent, either sign."""
    from decimal import ROUND_HALF_UP, Decimal  # keeps decimal off `estimate`'s start-up

    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def lost_work(
    hours: float,
    rate: float,
    interval_minutes: float | None,
    resume_minutes: float,
    spot: float,
    instances: int = 1,
) -> float:
    """Expected lost work in dollars (unrounded): no interval is a restart from zero. A job on
    several instances is interrupted when any of them is (rate × instances), and each
    interruption loses the whole job's work since its checkpoint (at the job's hourly rate)."""
    interval = hours if interval_minutes is None else interval_minutes / 60
    return hours * rate * instances * (interval / 2 + resume_minutes / 60) * spot


def instances_of(resource: Resource) -> int:
    """The instances (nodes) a job or run holds: its GPUs ÷ its instance type's; 1 if unknown."""
    spec = instance_spec(resource.instance_type) if resource.instance_type else None
    if spec is None or not spec.gpu_count or not resource.gpu.count:
        return 1
    return max(1, round(resource.gpu.count / spec.gpu_count))


def cloud_of(resource: Resource) -> str | None:
    """The cloud whose interruption rates apply: the provider, or the cloud of its service (a
    job file's provider is its format: `azureml` is Azure's), or of its instance type."""
    if resource.provider in _CLOUDS:
        return resource.provider
    named = CLOUD_OF_SERVICE.get(resource.service or "") or CLOUD_OF_SERVICE.get(
        resource.provider or ""
    )
    if named is None and resource.instance_type:  # a Ray or SkyPilot file naming a cloud's type
        spec = instance_spec(resource.instance_type)
        named = spec.cloud if spec is not None and spec.cloud in _CLOUDS else None
    return named


def stated_interval(resource: Resource) -> tuple[float | None, bool]:
    """(the job's checkpoint interval in minutes, templated): the field, else the tag, else a
    framework's wall-clock setting (`train_time_interval`)."""
    minutes, templated, _ = interval_and_origin(resource)
    return minutes, templated


def interval_and_origin(resource: Resource) -> tuple[float | None, bool, str | None]:
    """(minutes, templated, where it was stated): the label or tag wins over a framework
    setting; the setting's origin is its `file:line`."""
    if resource.checkpoint.interval_minutes is not None:
        origin = resource.interruption.checkpoint_from or "checkpoint.interval_minutes"
        return resource.checkpoint.interval_minutes, False, origin
    if "checkpoint.interval_minutes" in resource.source.templated:
        return None, True, None
    for key in INTERVAL_TAGS:
        text = resource.tags.get(key)
        if text is None:
            continue
        origin = f"label or tag {key}"
        if is_templated(text):
            return None, True, origin
        try:
            minutes = float(text)
        except ValueError:
            return None, True, origin  # not a number: unknown, never read as "no checkpoint"
        if minutes > 0 and minutes == minutes and minutes != float("inf"):
            return minutes, False, origin
        return None, True, origin
    setting = resource.training.checkpoint_interval_minutes
    if setting is not None:
        where = resource.training.located.get(_KNOB, "job config")
        return setting, False, f"{where} (train_time_interval)"
    if f"training.{_KNOB}" in resource.source.templated:
        return None, True, None
    return None, False, None


def _judged(resource: Resource) -> bool:
    return (
        resource.kind is Kind.JOB
        and resource.state in (State.DEFINED, None)
        and resource.workload is Workload.TRAINING
        and resource.capacity in (Capacity.SPOT, Capacity.ON_DEMAND)
        and resource.role != "head"
        and resource.retired is None
    )


def with_lost_work(resource: Resource, resume_minutes: float) -> Resource:
    """A training job file, or a SageMaker training job that ran alone, with its expected lost
    work on spot (other resources as they are)."""
    if resource.kind is Kind.RUN:
        return _run_lost_work(resource, resume_minutes)
    if not _judged(resource):
        return resource
    interval, templated, origin = interval_and_origin(resource)
    if templated:
        unknown = resource.source.templated | UNKNOWN_WHEN_TEMPLATED
        return replace(resource, source=replace(resource.source, templated=unknown))
    rate = rate_for(cloud_of(resource), resource.instance_type, resource.region)
    hours = resource.limits.max_runtime_hours
    on_demand, spot = resource.price.on_demand_hourly_usd, resource.price.spot_hourly_usd
    if interval is None and resource.checkpoint.uri is not None:
        # it checkpoints, at an interval it does not state: the lost work is unknown (a restart
        # from zero is only the case of no checkpoint at all)
        partial = figures(rate, hours, None, resume_minutes, None, spot, instances_of(resource))
        return replace(resource, interruption=replace(partial, checkpoint_minutes=None))
    section = figures(
        rate, hours, interval, resume_minutes, on_demand, spot, instances_of(resource)
    )
    if origin is not None:
        section = replace(section, checkpoint_from=origin)
    checkpoint = resource.checkpoint
    if interval is not None and checkpoint.interval_minutes is None:
        checkpoint = replace(checkpoint, interval_minutes=interval)
    return replace(resource, interruption=section, checkpoint=checkpoint)


def figures(
    rate: Rate | None,
    hours: float | None,
    interval: float | None,
    resume_minutes: float,
    on_demand: float | None,
    spot: float | None,
    instances: int = 1,
) -> Interruption:
    """The section: every input, and lost, discount and net where all of them are known."""
    base = Interruption(
        rate_per_hour=rate.per_hour if rate else None,
        rate_public=rate.public if rate else None,
        rate_source=rate.source if rate else None,
        rate_as_of=rate.as_of if rate else None,
        instances=instances,
        hours=hours,
        checkpoint_minutes=(
            interval if interval is not None else (hours * 60 if hours is not None else None)
        ),
        resume_minutes=resume_minutes,
        spot_hourly_usd=spot,
    )
    if rate is None or spot is None or on_demand is None:
        return base
    if interval is not None:  # per hour, with or without a runtime cap
        lost_hour = lost_work(1.0, rate.per_hour, interval, resume_minutes, spot, instances)
        hourly = (on_demand - spot) - lost_hour
        base = replace(base, net_hourly_usd=round(hourly, 4))
    if hours is None:
        return base
    lost = lost_work(hours, rate.per_hour, interval, resume_minutes, spot, instances)
    discount = (on_demand - spot) * hours
    return replace(
        base,
        lost_usd=money(lost),
        discount_usd=money(discount),
        net_usd=money(discount - lost),
    )


def with_pod_startup(resource: Resource, now: datetime) -> Resource:
    """A GPU pod's start-up (PodScheduled to Ready) in dollars at its hourly price, and as a
    share of its run so far (from its start to `now`)."""
    run = resource.run
    minutes, started = run.startup_minutes, resource.launched_at
    if resource.kind is not Kind.POD or minutes is None or started is None:
        return resource
    so_far = (now - started).total_seconds() / 60
    share = None if so_far <= 0 else round(min(100.0, minutes / so_far * 100), 2)
    hourly = resource.price.hourly_usd
    usd = None if hourly is None else round(minutes / 60 * hourly, 6)
    return replace(resource, run=replace(run, startup_usd=usd, startup_share=share))


def _run_lost_work(resource: Resource, bound: float) -> Resource:
    """A finished SageMaker job alone: hours = its training time, resume = its measured mean
    (the runbook's bound where it was never interrupted), the spot rate = on-demand × billable ÷
    training (a spot run) or the catalog's spot rate (an on-demand one). No checkpoint: the whole
    run; a checkpoint: the interval its tag states (`gpu-audit/checkpoint-interval-minutes`,
    read by the collector), else unknown (the API states none)."""
    run = resource.run
    spec = instance_spec(resource.instance_type) if resource.instance_type else None
    if (
        resource.service != "sagemaker"
        or run.trials is not None
        or resource.capacity not in (Capacity.SPOT, Capacity.ON_DEMAND)
        or not run.training_hours
        or run.billable_hours is None
        or spec is None
        or not spec.gpu_count
        or not resource.gpu.count
    ):
        return resource
    instances = resource.gpu.count / spec.gpu_count
    quote = price(
        resource.instance_type, resource.region, cards=rate_cards("sagemaker", "training")
    )
    if quote is None or quote.on_demand is None:
        return resource
    if resource.capacity is Capacity.SPOT:
        spot = quote.on_demand * run.billable_hours / run.training_hours
    elif quote.spot is not None:
        spot = quote.spot
    else:
        return resource
    wall = run.training_hours / instances
    resume = run.resume_minutes if run.resume_minutes is not None else bound
    rate = rate_for("aws", resource.instance_type, resource.region)
    interval, origin = None, None
    if resource.checkpoint.uri is not None:  # its interval: the tag, else unknown
        interval, _templated, origin = interval_and_origin(resource)
        if interval is None:  # checkpointed at an interval nobody states (or not a number)
            section = figures(rate, wall, None, resume, None, spot * instances, round(instances))
            return replace(resource, interruption=replace(section, checkpoint_minutes=None))
    section = figures(
        rate,
        wall,
        interval,
        resume,
        quote.on_demand * instances,
        spot * instances,
        round(instances),
    )
    if origin is not None:
        section = replace(section, checkpoint_from=origin)
    return replace(resource, interruption=section)
