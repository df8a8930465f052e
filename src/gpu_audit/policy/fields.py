"""The canonical fields a policy can name, with their types and getters (the data model's names)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from gpu_audit.model import Capacity, Kind, Resource, State, Workload

Getter = Callable[[Resource], Any]


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    type: str  # str | enum | number | bool | list | datetime | gpu
    getter: Getter
    doc: str
    choices: frozenset[str] | None = None
    unit: str | None = None  # hours | minutes: durations like `24h` convert to it


def _spec(name: str, type_: str, doc: str, **extra: Any) -> FieldSpec:
    return FieldSpec(name, type_, attrgetter(name), doc, **extra)


def _choices(enum: Any) -> frozenset[str]:
    return frozenset(member.value for member in enum)


FIELDS: dict[str, FieldSpec] = {
    spec.name: spec
    for spec in (
        _spec("kind", "enum", "`instance` or `job`", choices=_choices(Kind)),
        _spec("provider", "str", "`aws`, `gcp`, … or the job format (`skypilot`, …)"),
        _spec("id", "str", "instance id, self link or job name"),
        _spec("name", "str", "instance or job name"),
        _spec("account", "str", "AWS account id or GCP project"),
        _spec("region", "str", "region as the provider names it"),
        _spec("zone", "str", "availability zone or GCP zone"),
        _spec("instance_type", "str", "`p4d.24xlarge`, `a2-highgpu-1g`, `ml.g5.xlarge`"),
        _spec("state", "enum", "instance or job state", choices=_choices(State)),
        _spec(
            "capacity", "enum", "spot, on-demand, reserved or unknown", choices=_choices(Capacity)
        ),
        _spec("gpu.model", "gpu", "canonical GPU class (`A100-80GB`, `H100`, `L4`)"),
        _spec("gpu.count", "number", "GPUs per resource (× nodes or replicas for jobs)"),
        _spec("gpu.memory_gib", "number", "memory per GPU in GiB"),
        _spec(
            "workload",
            "enum",
            "training, inference, notebook or unknown",
            choices=_choices(Workload),
        ),
        _spec("launched_at", "datetime", "launch time (ISO 8601)"),
        _spec("uptime_hours", "number", "hours since launch", unit="hours"),
        _spec("utilization.gpu_avg", "number", "average GPU utilization % over the window"),
        _spec("utilization.gpu_p95", "number", "95th percentile GPU utilization %"),
        _spec("utilization.window_hours", "number", "utilization window", unit="hours"),
        _spec("data.uris", "list", "buckets or URIs the resource reads and writes"),
        _spec("data.regions", "list", "regions of those buckets"),
        _spec("checkpoint.uri", "str", "where the job checkpoints"),
        _spec("checkpoint.interval_minutes", "number", "checkpoint interval", unit="minutes"),
        _spec("limits.max_runtime_hours", "number", "runtime cap", unit="hours"),
        _spec("limits.budget_usd", "number", "budget cap in USD"),
        _spec("hpo.max_trials", "number", "tuning trial cap"),
        _spec("hpo.early_stopping", "bool", "tuning early stopping enabled"),
        _spec("price.hourly_usd", "number", "hourly price at the resource's capacity"),
        _spec("price.on_demand_hourly_usd", "number", "on-demand hourly price"),
        _spec("price.spot_hourly_usd", "number", "spot hourly price"),
        _spec("monthly_cost_usd", "number", "hourly price × 730 while running"),
    )
}

TAG_PREFIX = "tags."


def tag_getter(key: str) -> Getter:
    def get(resource: Resource) -> Any:
        return resource.tags.get(key)

    return get


def field_spec(name: str) -> FieldSpec | None:
    """The spec of a canonical field, including any `tags.<key>`; None for unknown names."""
    if name.startswith(TAG_PREFIX) and len(name) > len(TAG_PREFIX):
        return FieldSpec(name, "tag", tag_getter(name[len(TAG_PREFIX) :]), "tag or label value")
    return FIELDS.get(name)
