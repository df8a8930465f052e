"""The instance types that offer a GPU request, priced in every region the catalog knows; pure."""

from __future__ import annotations

from datetime import date

from gpu_audit.catalog import (
    InstanceSpec,
    PriceQuote,
    canonical_gpu,
    gpu_class,
    instance_types,
    regional_prices,
)
from gpu_audit.catalog.lifecycle import lifecycle, retired_type
from gpu_audit.core.frozen import record


@record
class Offer:
    """One instance type in one region with its hourly prices (per instance)."""

    spec: InstanceSpec
    quote: PriceQuote


def offering(
    gpu_model: str, per_node: int, cloud: str | None = None, today: date | None = None
) -> tuple[InstanceSpec, ...]:
    """Instance types with `per_node` GPUs of this model, or of an NVIDIA GPU with at least its
    memory per GPU (a bigger GPU that fits the same work); accelerators off the NVIDIA ladder
    (Trainium, TPU, AMD) run other software stacks and are left out unless named, and so is a
    machine no longer sold (the catalog's lifecycle table, at `today`)."""
    model = canonical_gpu(gpu_model) or gpu_model
    wanted = gpu_class(model)
    memory = wanted.memory_gib if wanted and wanted.memory_gib else None
    today = today or date.today()
    found = []
    for spec in instance_types():
        if spec.gpu_count != per_node or (cloud and spec.cloud != cloud):
            continue
        if retired_type(spec.instance_type, today):
            continue
        if spec.gpu_model == model:
            found.append(spec)
            continue
        other = gpu_class(spec.gpu_model)
        if memory is None or other is None or other.rank is None or other.vendor != "nvidia":
            continue
        if wanted is not None and wanted.rank is not None and spec.gpu_memory_gib >= memory:
            found.append(spec)
    return tuple(found)


def offers(
    gpu_model: str, per_node: int, cloud: str | None = None, today: date | None = None
) -> tuple[Offer, ...]:
    """Every priced (instance type, region) offering the request; unpriced types are left out."""
    return tuple(
        Offer(spec, quote)
        for spec in offering(gpu_model, per_node, cloud, today)
        for quote in regional_prices(spec.instance_type)
    )


def unpriced(
    gpu_model: str, per_node: int, cloud: str | None = None, today: date | None = None
) -> tuple[str, ...]:
    """Instance types that offer the request but that the catalog cannot price."""
    return tuple(
        spec.instance_type
        for spec in offering(gpu_model, per_node, cloud, today)
        if not regional_prices(spec.instance_type)
    )


def withdrawn(
    gpu_model: str,
    per_node: int,
    cloud: str | None = None,
    today: date | None = None,
    asked: str | None = None,
) -> tuple[str, ...]:
    """The machines with this request's GPUs that are no longer sold (and the one asked for, if
    it is one), each with what retired it: never an option, always said."""
    today = today or date.today()
    model = canonical_gpu(gpu_model) or gpu_model
    found = []
    for spec in instance_types():
        named = asked is not None and spec.instance_type == asked
        if not named and (spec.gpu_count != per_node or spec.gpu_model != model):
            continue
        if not named and cloud and spec.cloud != cloud:
            continue
        why = lifecycle(spec.cloud, spec.gpu_model, spec.instance_type, None, today)[0]
        if why:
            found.append(f"{spec.instance_type} ({why})")
    return tuple(found)
