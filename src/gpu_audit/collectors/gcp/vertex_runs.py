"""Vertex AI tuning jobs and custom jobs that ran in the period (`scan --since`), read-only.

Per location, two listings filtered server-side on `update_time` after the period's start,
100 a page: `hyperparameterTuningJobs.list` (each job carries its trials inline: state, start
and end time, the custom job it ran) and `customJobs.list` (jobs alone; the trials' own custom
jobs are skipped). No call per trial: ceil(N / 100) calls each for N jobs.

What the API states, and what it does not:
- a trial is `SUCCEEDED` (completed), `INFEASIBLE` (failed: done without a final measurement),
  `STOPPING` (the service stopped it early) or `ACTIVE`/`REQUESTED` (running). Once ended, an
  early-stopped trial that reported a measurement is `SUCCEEDED`: Vertex does not tell it apart.
- there is no billable time: Vertex bills the wall clock (start to end) of each replica, priced
  here at the `vertex:` rate card, spot where `scheduling.strategy` is `SPOT`.
- there is no interruption or restart count for a trial or custom job: both stay unknown, and
  the rules that need them are not evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from gpu_audit.catalog import price, rate_cards
from gpu_audit.collectors.gcp.rest import rfc3339
from gpu_audit.collectors.gcp.vertex_map import SERVICE, api_time, pool_gpu
from gpu_audit.core.resource import Capacity
from gpu_audit.core.runs import Outcome, Sweep, TrialRun

Lister = Callable[[str, str, str], list[Any]]  # (collection, response key, filter) → items

_TRIALS = {
    "SUCCEEDED": Outcome.COMPLETED,
    "INFEASIBLE": Outcome.FAILED,
    "STOPPING": Outcome.STOPPED,
}
_JOBS = {
    "JOB_STATE_SUCCEEDED": Outcome.COMPLETED,
    "JOB_STATE_FAILED": Outcome.FAILED,
    "JOB_STATE_CANCELLED": Outcome.STOPPED,
    "JOB_STATE_EXPIRED": Outcome.FAILED,
}
_SPOT = ("SPOT", "LOW_COST")


def _first_gpu_pool(spec: Mapping[str, Any]) -> tuple[str | None, int, Any]:
    """(machine type, replicas, GPUs per replica) of the first worker pool with GPUs."""
    for pool in spec.get("workerPoolSpecs") or ():
        replicas = int(pool.get("replicaCount") or 1)
        machine_type, gpu = pool_gpu(pool.get("machineSpec") or {}, 1)
        if gpu is not None:
            return machine_type, replicas, gpu
    return None, 0, None


def run_of(
    spec: Mapping[str, Any],
    location: str,
    *,
    id: str,
    name: str,
    outcome: Outcome,
    started: datetime | None,
    ended: datetime | None,
    now: datetime,
    failure: str | None = None,
) -> TrialRun | None:
    """One trial or custom job, priced on the wall clock of its GPU pool's replicas."""
    machine_type, replicas, gpu = _first_gpu_pool(spec)
    if gpu is None:
        return None
    strategy = str((spec.get("scheduling") or {}).get("strategy") or "")
    spot = strategy in _SPOT
    cards = rate_cards(SERVICE, "training")
    quote = price(machine_type, location, gpu.model, gpu.count, cards)
    rate = (quote.spot if spot else quote.on_demand) if quote else None
    discount = None
    if spot and quote and quote.spot is not None and quote.on_demand:
        discount = max(0.0, 1 - quote.spot / quote.on_demand)
    seconds = 0.0  # never started: nothing billed
    if started is not None:
        seconds = max(0.0, ((ended or now) - started).total_seconds()) * replicas
    return TrialRun(
        id=id,
        name=name,
        outcome=outcome,
        instance_type=machine_type,
        instances=replicas,
        capacity=Capacity.SPOT if spot else Capacity.ON_DEMAND,
        hourly_usd=rate,
        billable_seconds=seconds,
        training_seconds=seconds,
        gpus_per_instance=gpu.count,
        spot_discount=discount,
        started=started,
        ended=ended,
        failure=failure,
        price_source=quote.source if quote else None,
    )


def _in_period(started: datetime | None, ended: datetime | None, since: datetime) -> bool:
    """Ended in the period, or running (started, not ended); a trial that failed before it
    started counts as failed, at no cost."""
    if ended is not None:
        return ended >= since
    return started is not None


def finished_runs(
    lister: Lister, project: str, location: str, since: datetime, now: datetime
) -> list[Sweep]:
    """The location's tuning sweeps and custom jobs alone that ran in the period."""
    after = f'update_time>"{rfc3339(since)}"'
    sweeps: list[Sweep] = []
    trial_jobs: set[str] = set()
    for job in lister("hyperparameterTuningJobs", "hyperparameterTuningJobs", after):
        spec = job.get("trialJobSpec") or {}
        trials = []
        for trial in job.get("trials") or ():
            if trial.get("customJob"):
                trial_jobs.add(str(trial["customJob"]))
            started, ended = api_time(trial.get("startTime")), api_time(trial.get("endTime"))
            if not _in_period(started, ended, since):
                continue
            found = run_of(
                spec,
                location,
                id=str(trial.get("customJob") or f"{job['name']}/trials/{trial.get('id')}"),
                name=f"{job.get('displayName') or job['name']} trial {trial.get('id')}",
                outcome=_TRIALS.get(str(trial.get("state")), Outcome.RUNNING),
                started=started,
                ended=ended,
                now=now,
                failure=trial.get("infeasibleReason"),
            )
            if found is not None:
                trials.append(found)
        if trials:
            sweeps.append(_sweep(job, project, location, since, "tuning", tuple(trials)))
    for job in lister("customJobs", "customJobs", after):
        outcome = _JOBS.get(str(job.get("state")))
        started, ended = api_time(job.get("startTime")), api_time(job.get("endTime"))
        if outcome is None or str(job["name"]) in trial_jobs:
            continue  # still running (the live scan's), or a trial read with its sweep
        if not _in_period(started, ended, since):
            continue
        found = run_of(
            job.get("jobSpec") or {},
            location,
            id=str(job["name"]),
            name=str(job.get("displayName") or job["name"]),
            outcome=outcome,
            started=started,
            ended=ended,
            now=now,
            failure=(job.get("error") or {}).get("message"),
        )
        if found is not None:
            sweeps.append(_sweep(job, project, location, since, "training", (found,)))
    return sweeps


def _sweep(
    job: Mapping[str, Any],
    project: str,
    location: str,
    since: datetime,
    kind: str,
    trials: tuple[TrialRun, ...],
) -> Sweep:
    return Sweep(
        provider="gcp",
        service=SERVICE,
        kind=kind,
        id=str(job["name"]),
        name=str(job.get("displayName") or job["name"]),
        account=project,
        region=location,
        state=str(job.get("state") or ""),
        since=since,
        trials=trials,
    )
