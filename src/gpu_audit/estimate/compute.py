"""Cost of one run of a job, and the options for a GPU request: rate × runtime, to the cent."""

from __future__ import annotations

import re
from dataclasses import replace

from gpu_audit.catalog import (
    PriceQuote,
    canonical_gpu,
    instance_spec,
    instance_types,
    ladder,
    rate_cards,
)
from gpu_audit.catalog.enrich import POOLED, cents, priced_quote, share_factor
from gpu_audit.catalog.options import offers, unpriced, withdrawn
from gpu_audit.catalog.sweep import DEFAULT_TRIAL_NOTE, bound, is_sweep, sweep_gpu_hours
from gpu_audit.core.resource import Capacity, Resource
from gpu_audit.errors import InputError
from gpu_audit.estimate.model import JobEstimate, Option, OptionTable, Rate, Sweep


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
    quote, units, label, region_note = _job_quote(resource)
    on_demand = _rate("on-demand", quote, units, runtime, label)
    spot = _rate("spot", quote, units, runtime, label)
    own = spot if spot_job else on_demand
    sweep = _sweep(resource, runtime, hours is not None, count, on_demand, spot)
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
        trials=resource.hpo.max_trials,
        tuning_on_demand_usd=_times(sweep, on_demand),
        tuning_spot_usd=_times(sweep, spot),
        note=_no_price(resource) if quote is None else _unfit(resource),
        sweep=sweep,
    )


def _sweep(
    resource: Resource,
    runtime: float | None,
    flagged: bool,
    count: int | None,
    on_demand: Rate | None,
    spot: Rate | None,
) -> Sweep | None:
    """A tuning sweep's bound at the trial hours used for one run (the cap or --hours)."""
    hpo = resource.hpo
    if not is_sweep(hpo):
        return None
    limits = replace(resource.limits, max_runtime_hours=runtime)
    found = bound(hpo, limits, resource.provider)
    origin = "--hours" if flagged else "runtime cap"
    notes = list(_SWEEP_NOTES.get(resource.provider, ()))
    if found.trial_hours_default:
        origin = "platform default"
        notes.append(DEFAULT_TRIAL_NOTE[resource.provider])
    elif found.trial_hours is None:
        origin = "unknown"
    run_hours = found.run_hours

    def expected(rate: Rate | None) -> float | None:
        if rate is None or found.expected_hours is None:
            return None
        return cents(rate.hourly_usd * found.expected_hours)

    return Sweep(
        trials=hpo.max_trials,
        parallel=hpo.parallel_trials,
        attempts=hpo.attempts or 1,
        trial_hours=found.trial_hours,
        trial_hours_from=origin,
        timeout_hours=hpo.timeout_hours,
        run_hours=run_hours,
        bound_by=found.binds,
        gpu_hours=sweep_gpu_hours(found, count),
        sweep_hours=found.sweep_hours,
        pruned_share=hpo.pruned_share,
        expected_run_hours=found.expected_hours,
        expected_on_demand_usd=expected(on_demand),
        expected_spot_usd=expected(spot),
        notes=tuple(notes),
    )


# What a format's file cannot say about its own bound, shown with every estimate of one.
_SWEEP_NOTES = {
    "wandb": (
        "the agents' `wandb agent --count N` also caps the runs; it is outside the file, so "
        "only `run_cap` bounds the sweep here",
    ),
}


def _job_quote(resource: Resource) -> tuple[PriceQuote | None, int, str, str]:
    """The quote, how many priced units the job runs, its label and region note: the quote
    `check` prices the job with (catalog.enrich.priced_quote), on the job's own rate card."""
    itype = resource.instance_type
    if resource.retired:  # hardware or a platform no longer sold is not priced as an option
        return None, 1, itype or "-", "unpriced"
    cards = rate_cards(resource.service, resource.workload.value)
    quote, units = priced_quote(
        cards,
        resource.service,
        resource.kind,
        itype,
        resource.region,
        resource.gpu,
        resource.service in POOLED,
    )
    if quote is None:
        return None, 1, itype or "-", "unpriced"
    spec = instance_spec(itype)
    label = spec.instance_type if spec is not None else (quote.item or itype or "-")
    factor = share_factor(resource.share, resource.gpu.count, itype)
    if factor is not None:  # a MIG slice or HAMi fraction: its share of the GPU's price
        quote = _part(quote, factor * units)
        units = 1
        label = f"{label}, {_share_label(resource)}"
    card = next((c for c in cards if f"{c}:" in (quote.item or "")), None)
    on_card = f" on the {card} rate card" if card else ""
    if not resource.region:
        where = f"the job states no region: {quote.region} (reference region){on_card}"
    elif quote.exact_region:
        where = f"the job's region {quote.region}{on_card}"
    else:
        where = f"{resource.region} is not priced; {quote.region} (reference region){on_card}"
    return quote, units, label, where


def _part(quote: PriceQuote, factor: float) -> PriceQuote:
    def part(value: float | None) -> float | None:
        return None if value is None else round(value * factor, 5)

    return replace(quote, on_demand=part(quote.on_demand), spot=part(quote.spot))


def _share_label(resource: Resource) -> str:
    """`MIG 1g.10gb: 1/7 of a GPU's price` (the share a job's price follows, all pods)."""
    share = resource.share
    what = f"MIG {share.profile}" if share.profile else (share.mode or "share")
    return f"{what}: {share.units:g}/{share.per_gpu} of a GPU's price"


def _no_price(resource: Resource) -> str:
    if resource.retired:
        return f"not priced: no longer offered ({resource.retired}); it cannot run as written"
    unfit = _unfit(resource)
    if unfit:
        return f"not priced: {unfit}"
    if resource.provider == "kubernetes" and resource.service == "kubernetes":
        return (
            "not priced: the manifest names no cloud (no instance type the catalog knows, no "
            "cloud's node label such as `cloud.google.com/gke-accelerator` or "
            "`karpenter.k8s.aws/instance-gpu-name`)"
        )
    if resource.gpu.model is None and resource.instance_type is None:
        return "not priced: the file names no GPU model or instance type"
    return "no price: the catalog does not know this GPU or instance type"


def _unfit(resource: Resource) -> str | None:
    """The Kubernetes parser's note that no pod fits the machine type it selects, if made."""
    note = resource.source.note or ""
    return next((part for part in note.split("; ") if "no pod fits" in part), None)


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


def _times(sweep: Sweep | None, rate: Rate | None) -> float | None:
    """A sweep's ceiling at a rate: the rate × the capacity-hours its bound allows."""
    if sweep is None or rate is None or sweep.run_hours is None:
        return None
    return cents(rate.hourly_usd * sweep.run_hours)


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
        withdrawn=withdrawn(gpu_model, gpus_per_node, cloud, asked=asked),
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

    names = sorted({spec.instance_type for spec in instance_types()})
    folded = text.strip().lower().removeprefix("ml.")
    begun = [name for name in names if name.lower().startswith(folded)] if folded else []
    close = begun[:1] if len(begun) == 1 else get_close_matches(folded, names, n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _close_gpu(name: str, count: str) -> str:
    """` (did you mean 'H100:8'?)` for `H100x8` or `H100 x 8`; a close GPU name otherwise."""
    from difflib import get_close_matches  # an error's hint only

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
