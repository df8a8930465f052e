"""`gpu-audit estimate` between the CLI and the pure core: a typed request in, a report out."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from gpu_audit.catalog.enrich import enrich
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.errors import ConfigError
from gpu_audit.estimate.compute import estimate_job, instance_request, options, parse_gpu_request
from gpu_audit.estimate.model import JobEstimate
from gpu_audit.estimate.render import render_jobs, render_options
from gpu_audit.report.values import money


@record
class EstimateRequest:
    """What `estimate` was asked: job files, or a GPU request (`--gpu` / `--instance-type`)."""

    files: tuple[str, ...] = ()
    gpu: str | None = None  # "A100-80GB:8"
    instance_type: str | None = None
    hours: float | None = None
    nodes: int = 1
    cloud: str | None = None
    max_usd: float | None = None
    fmt: str = "text"
    excludes: tuple[str, ...] = ()  # `exclude:` patterns under directories and globs, as check


@record
class EstimateReport:
    text: str
    over_budget: int  # jobs whose run costs more than their declared budget
    errors: tuple[str, ...]  # files that could not be read, one located line each
    unbounded: tuple[str, ...] = ()  # jobs with a budget whose run has no end or no price


def run_estimate(request: EstimateRequest) -> EstimateReport:
    """`gpu-audit estimate`: the job files' estimates, or the priced options of a
    `--gpu`/`--instance-type` ask; ConfigError when both or neither is given, or `--hours` is not
    positive."""
    asked = request.gpu is not None or request.instance_type is not None
    if asked and request.files:
        raise ConfigError("estimate: give job FILES, or --gpu/--instance-type, not both")
    if request.gpu is not None and request.instance_type is not None:
        raise ConfigError("estimate: give --gpu or --instance-type, not both")
    if not asked and not request.files:
        raise ConfigError("estimate: nothing to estimate: give job FILES, --gpu or --instance-type")
    if request.hours is not None and request.hours <= 0:
        raise ConfigError("estimate: --hours must be positive")
    if asked:
        if request.instance_type is not None:
            model, per_node = instance_request(request.instance_type)
        else:
            model, per_node = parse_gpu_request(request.gpu or "")
        table = options(
            model,
            per_node,
            request.hours,
            request.nodes,
            request.cloud,
            request.max_usd,
            asked=request.instance_type,
        )
        return EstimateReport(render_options(table, request.fmt), 0, ())  # choices, not a gate
    return _jobs(request)


def _jobs(request: EstimateRequest) -> EstimateReport:
    from gpu_audit.jobs import load_jobs  # keeps jobs off `estimate`'s start-up
    from gpu_audit.jobs.discover import expand  # keeps jobs.discover off `estimate`'s start-up

    # directories walked and quoted globs expanded, as `check` takes them
    files, unmatched = expand(request.files, request.excludes)
    loaded = load_jobs(files)
    now = datetime.now(UTC)
    estimates = [
        with_lost_work(estimate_job(enrich(r, now), request.hours), enrich(r, now), request.hours)
        for r in loaded.resources
    ]
    errors = (*unmatched, *(s.reason for s in loaded.skipped if s.error))
    over = sum(1 for e in estimates if e.over_budget)
    unbounded = tuple(
        f"{e.location}: {e.job}: budget {money(e.budget_usd)} not evaluated ({e.budget_reason})"
        for e in estimates
        if e.budget_reason
    )
    return EstimateReport(render_jobs(estimates, request.fmt), over, errors, unbounded)


def with_lost_work(estimate: JobEstimate, resource: Resource, hours: float | None) -> JobEstimate:
    """The estimate with the job's expected spot lost work at its runtime (--hours or its cap)
    and the runbook's 5-minute resume (docs/spot.md); training jobs only."""
    # keeps catalog.lostwork off `estimate`'s start-up
    from gpu_audit.catalog.lostwork import DEFAULT_RESUME_MINUTES

    # keeps catalog.lostwork off `estimate`'s start-up
    from gpu_audit.catalog.lostwork import with_lost_work as priced

    if hours is not None:
        resource = replace(resource, limits=replace(resource.limits, max_runtime_hours=hours))
    judged = priced(resource, DEFAULT_RESUME_MINUTES)
    figures = judged.interruption
    note = None
    if figures.net_usd is not None and figures.lost_usd is not None:
        note = (
            f"spot lost work: {money(figures.lost_usd)} expected per run at "
            f"{figures.rate_per_hour:g} interruptions an hour ({figures.rate_public}; "
            f"{figures.rate_source}), checkpoint every {figures.checkpoint_minutes:g} min"
            + (f" ({figures.checkpoint_from})" if figures.checkpoint_from else "")
            + f", resume {figures.resume_minutes:g} min; spot saves {money(figures.net_usd)} net"
        )
    elif "interruption.net_usd" in judged.source.templated:
        note = "spot lost work not evaluated: the checkpoint interval is templated"
    elif judged is not resource and figures.hours is not None and figures.rate_per_hour is None:
        note = "spot lost work not evaluated: no interruption rate for the type and region"
    return replace(
        estimate, spot_lost_usd=figures.lost_usd, spot_net_usd=figures.net_usd, spot_lost_note=note
    )
