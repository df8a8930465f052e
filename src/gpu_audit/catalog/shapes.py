"""GPUs asked for by model and count, priced on a machine shape the pinned cloud sells.

A job that names GPUs but no instance type (SkyPilot `A100:1`, dstack `H100:2`, a Ray
`resources: {GPU: 1}`) is priced on the cheapest shape, or shapes, that hold its GPUs: on the
cloud its file pins (the job's `service`), in its region where the catalog prices it. A 1-GPU ask
on a cloud that sells 1-GPU shapes is priced on one, never as an eighth of an 8-GPU machine; on a
cloud that only sells 8-GPU machines it is priced on the machine it has to rent. GCP's N1 GPUs
(T4, V100, P100), billed per attached GPU, are a shape of any size. A provider the catalog does
not price (RunPod, Lambda, a Kubernetes cluster) leaves the job unpriced, never priced as another
cloud.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date

from gpu_audit.catalog import (
    REFERENCE_REGION,
    PriceQuote,
    canonical_gpu,
    instance_types,
    price,
    regional_prices,
)
from gpu_audit.catalog.lifecycle import N1_ATTACHABLE as _N1_ATTACHABLE
from gpu_audit.catalog.lifecycle import lifecycle, retired_type

# The cloud a billing service runs on; a service not listed is a provider the catalog does not
# price (runpod, lambda, kubernetes, …).
# a table: one cloud's services a line, as ruff format would not keep it
# fmt: off
CLOUD_OF_SERVICE = {
    "ec2": "aws", "sagemaker": "aws", "batch": "aws",
    "gce": "gcp", "vertex": "gcp", "ai-platform": "gcp",
    "azure": "azure", "azureml": "azure",
}
# fmt: on


# GPUs Compute Engine attaches to N1 machines one at a time (catalog/lifecycle.py holds the set)
N1_ATTACHABLE = _N1_ATTACHABLE


def pinned_cloud(service: str | None) -> tuple[str | None, bool]:
    """(cloud, priced): None and True for a job that pins no cloud (any cloud may run it)."""
    if service is None:
        return None, True
    cloud = CLOUD_OF_SERVICE.get(service)
    return cloud, cloud is not None


def gpu_shape_price(
    model: str | None,
    count: int,
    cloud: str | None,
    region: str | None,
    today: date | None = None,
) -> PriceQuote | None:
    """The cheapest machine holding `count` GPUs of `model` (on `cloud`, if pinned); several
    machines only where no one machine holds them all. A machine no longer sold (the catalog's
    lifecycle table, at `today`) is never a price; a machine with more GPUs than asked for is
    priced whole, and its label says so."""
    name = canonical_gpu(model)
    if name is None or count <= 0:
        return None
    today = today or date.today()
    options: list[tuple[bool, float, str, PriceQuote]] = []
    for spec in instance_types():
        if spec.gpu_model != name or spec.gpu_count <= 0 or cloud not in (None, spec.cloud):
            continue
        if retired_type(spec.instance_type, today):
            continue
        quote = price(spec.instance_type, region if cloud else None)
        if quote is None or quote.on_demand is None:
            continue
        machines = math.ceil(count / spec.gpu_count)
        label = f"{machines}× {spec.instance_type}" if machines > 1 else spec.instance_type
        if machines * spec.gpu_count > count:  # rented whole: the ask is a share of it
            label += f" (whole: {machines * spec.gpu_count} GPUs for {count} asked)"
        cost = quote.on_demand * machines
        options.append((machines > 1, cost, label, _times(quote, machines, label)))
    attachable = name in N1_ATTACHABLE and not lifecycle("gcp", name, None, None, today)[0]
    if cloud in (None, "gcp") and attachable:  # N1 hosts, GPUs billed per GPU
        quote = _attached(name, region if cloud else None)
        if quote is not None and quote.on_demand is not None:
            label = f"{count}× {quote.item}"
            options.append((False, quote.on_demand * count, label, _times(quote, count, label)))
    if not options:
        return None
    # One machine that holds every GPU first (what a multi-GPU job is launched on), then cost.
    return min(options, key=lambda option: option[:3])[3]


def _attached(model: str, region: str | None) -> PriceQuote | None:
    quotes = {q.region: q for q in regional_prices(f"gpu:{model}")}
    for wanted in (region, REFERENCE_REGION["gcp"]):
        if wanted in quotes:
            return replace(quotes[wanted], exact_region=wanted == region or region is None)
    return next(iter(quotes.values()), None)


def _times(quote: PriceQuote, machines: int, label: str) -> PriceQuote:
    if machines == 1:
        return replace(quote, item=label)

    def scaled(value: float | None) -> float | None:
        return None if value is None else round(value * machines, 5)

    return replace(quote, on_demand=scaled(quote.on_demand), spot=scaled(quote.spot), item=label)
