"""Cost of one run of a job, and the options for a GPU request: rate × runtime, to the cent."""

from __future__ import annotations

from gpu_audit.catalog import (
    PriceQuote,
    gpu_hour_price,
    instance_spec,
    price,
    regional_prices,
)
from gpu_audit.catalog.enrich import cents
from gpu_audit.catalog.options import offers, unpriced
from gpu_audit.core.resource import Capacity, Resource
from gpu_audit.errors import InputError
from gpu_audit.estimate.model import JobEstimate, Option, OptionTable, Rate


def estimate_job(resource: Resource, hours: float | None = None) -> JobEstimate:
    """One job's estimate; `hours` (the --hours flag) overrides the job's runtime cap."""
    cap = resource.limits.max_runtime_hours
    runtime, origin = (hours, "--hours") if hours is not None else (cap, "runtime cap")
    if runtime is None:
        origin = "unknown"
    spec = instance_spec(resource.instance_type)
    count = resource.gpu.count
    nodes = per_node = None
    if spec is not None and count:
        per_node = spec.gpu_count
        nodes = max(1, round(count / spec.gpu_count))
    spot_job = resource.capacity is Capacity.SPOT
    quote, units, label, region_note = _job_quote(resource, spot_job, nodes)
    on_demand = _rate("on-demand", quote, units, runtime, label)
    spot = _rate("spot", quote, units, runtime, label)
    own = spot if spot_job else on_demand
    trials = resource.hpo.max_trials
    return JobEstimate(
        job=resource.name or resource.id,
        location=resource.location,
        provider=resource.provider,
        gpu_model=resource.gpu.model,
        gpus_per_node=per_node,
        nodes=nodes,
        gpu_count=count,
        hours=runtime,
        hours_from=origin,
        gpu_hours=None if runtime is None or not count else round(count * runtime, 4),
        capacity="spot" if spot_job else "on-demand",
        region_note=region_note,
        on_demand=on_demand,
        spot=spot,
        run_usd=own.run_usd if own else None,
        budget_usd=resource.limits.budget_usd,
        trials=trials,
        tuning_on_demand_usd=_times(trials, on_demand, runtime),
        tuning_spot_usd=_times(trials, spot, runtime),
        note=None if quote else "no price: the catalog does not know this GPU or instance type",
    )


def _job_quote(
    resource: Resource, spot_job: bool, nodes: int | None
) -> tuple[PriceQuote | None, int, str, str]:
    """The quote, how many priced units the job runs (nodes, or GPUs), its label and region note."""
    itype = resource.instance_type
    spec = instance_spec(itype)
    if itype and spec is not None:
        name = spec.instance_type  # the catalog's spelling: `ml.p4d.24xlarge` → `p4d.24xlarge`
        if resource.region:
            quote = price(itype, resource.region)
            if quote is None:
                return None, 1, name, "unpriced"
            if quote.exact_region:
                return quote, nodes or 1, name, f"the job's region {quote.region}"
            note = f"{resource.region} is not priced; {quote.region} (reference region)"
            return quote, nodes or 1, name, note
        regional = regional_prices(itype)
        if not regional:
            return None, 1, name, "unpriced"
        cheapest = min(regional, key=lambda q: _sort_price(q, spot_job))
        return cheapest, nodes or 1, name, f"cheapest region the job allows ({cheapest.region})"
    if itype:  # a host billed with attached GPUs (GCP N1), or a type the catalog lacks
        quote = price(itype, resource.region, resource.gpu.model, resource.gpu.count)
        if quote is not None:
            return quote, 1, quote.item or itype, f"region {quote.region}"
    if resource.gpu.model and resource.gpu.count:
        per_gpu = gpu_hour_price(resource.gpu.model)
        if per_gpu is not None:
            label = f"{per_gpu.item} per GPU" if per_gpu.item else "per GPU"
            note = f"no instance type: per-GPU price of {per_gpu.item} in {per_gpu.region}"
            return per_gpu, resource.gpu.count, label, note
    return None, 1, itype or "-", "unpriced"


def _sort_price(quote: PriceQuote, spot: bool) -> tuple[float, str]:
    value = quote.spot if spot and quote.spot is not None else quote.on_demand
    return (value if value is not None else float("inf"), quote.region)


def _rate(
    capacity: str,
    quote: PriceQuote | None,
    units: int,
    hours: float | None,
    label: str,
) -> Rate | None:
    if quote is None:
        return None
    hourly = quote.spot if capacity == "spot" else quote.on_demand
    if hourly is None:
        return None
    total = round(hourly * units, 5)
    run = None if hours is None else cents(total * hours)
    return Rate(capacity, total, run, label, quote.region, quote.as_of, quote.source)


def _times(trials: int | None, rate: Rate | None, hours: float | None) -> float | None:
    """Worst case of a tuning job: every trial runs to the cap (trials × hourly × hours)."""
    if trials is None or rate is None or hours is None:
        return None
    return cents(rate.hourly_usd * hours * trials)


def options(
    gpu_model: str,
    gpus_per_node: int,
    hours: float | None,
    nodes: int = 1,
    cloud: str | None = None,
    max_usd: float | None = None,
    asked: str | None = None,
) -> OptionTable:
    """Each type offering the request, on-demand and spot, per priced region; cheapest first
    (per run, or per hour without `hours`), the instance type `asked` for before the others."""
    if gpus_per_node < 1 or nodes < 1 or (hours is not None and hours <= 0):
        raise InputError("estimate: GPUs per node, nodes and hours must be positive")
    found: list[Option] = []
    for offer in offers(gpu_model, gpus_per_node, cloud):
        spec, quote = offer.spec, offer.quote
        for capacity, hourly in (("on-demand", quote.on_demand), ("spot", quote.spot)):
            if hourly is None:
                continue
            total = round(hourly * nodes, 5)
            run = cents(total * hours) if hours is not None else None
            found.append(
                Option(
                    instance_type=spec.instance_type,
                    cloud=spec.cloud,
                    region=quote.region,
                    gpu_model=spec.gpu_model,
                    gpus_per_node=spec.gpu_count,
                    memory_gib_per_gpu=spec.gpu_memory_gib,
                    nodes=nodes,
                    capacity=capacity,
                    hourly_usd=total,
                    run_usd=run,
                    over_budget=max_usd is not None and run is not None and run > max_usd,
                    as_of=quote.as_of,
                    source=quote.source,
                )
            )
    found.sort(
        key=lambda o: (
            o.instance_type != asked,
            o.hourly_usd,
            o.instance_type,
            o.region,
            o.capacity,
        )
    )  # the run is the hourly rate × the same hours for every option
    return OptionTable(
        gpu_model=gpu_model,
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        hours=hours,
        cloud=cloud,
        max_usd=max_usd,
        options=tuple(found),
        unpriced=unpriced(gpu_model, gpus_per_node, cloud),
        asked=asked,
    )


def instance_request(instance_type: str) -> tuple[str, int]:
    """`--instance-type p4d.24xlarge` as a GPU request: (A100-40GB, 8)."""
    spec = instance_spec(instance_type)
    if spec is None:
        hint = _close_type(instance_type)
        raise InputError(f"estimate: instance type '{instance_type}' is not in the catalog{hint}")
    return spec.gpu_model, spec.gpu_count


def _close_type(text: str) -> str:
    """` (did you mean 'p5.48xlarge'?)` for `p5.48xl`: a type it begins, else a close one."""
    from difflib import get_close_matches  # an error's hint only

    from gpu_audit.catalog import instance_types

    names = sorted({spec.instance_type for spec in instance_types()})
    folded = text.strip().lower().removeprefix("ml.")
    begun = [name for name in names if name.lower().startswith(folded)] if folded else []
    close = begun[:1] if len(begun) == 1 else get_close_matches(folded, names, n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _close_gpu(name: str, count: str) -> str:
    """` (did you mean 'H100:8'?)` for `H100x8` or `H100 x 8`; a close GPU name otherwise."""
    import re
    from difflib import get_close_matches  # an error's hint only

    from gpu_audit.catalog import canonical_gpu, ladder

    times = re.fullmatch(r"(.+?)\s*[x×*]\s*(\d+)", name.strip(), re.IGNORECASE)
    if times and not count and (model := canonical_gpu(times.group(1))) is not None:
        return f" (did you mean '{model}:{times.group(2)}'?)"
    names = sorted({gpu.name for gpu in ladder()})
    close = get_close_matches(name.strip().upper(), [n.upper() for n in names], n=1, cutoff=0.7)
    if not close:
        return ""
    model = next(n for n in names if n.upper() == close[0])
    return f" (did you mean '{model}{':' + count if count else ''}'?)"


def parse_gpu_request(text: str) -> tuple[str, int]:
    """`A100-80GB:8` → (A100-80GB, 8); `H100` → (H100, 1)."""
    from gpu_audit.catalog import canonical_gpu

    name, _, count = text.partition(":")
    model = canonical_gpu(name.strip())
    if model is None:
        hint = _close_gpu(name, count)
        raise InputError(f"estimate: --gpu '{text}': unknown GPU '{name.strip()}'{hint}")
    try:
        number = int(count) if count else 1
    except ValueError:
        message = f"estimate: --gpu '{text}': the count after ':' must be a whole number"
        raise InputError(message) from None
    if number < 1:
        raise InputError(f"estimate: --gpu '{text}': the count must be at least 1")
    return model, number
