"""The sweeps section (`scan --since`) as plain values: what every format shows of a finished
tuning sweep or training job, dollars rounded to the cent, shares in percent."""

from __future__ import annotations

from typing import Any

from gpu_audit.catalog.enrich import cents
from gpu_audit.core.runs import SECONDS_PER_HOUR, Sweep, TrialRun
from gpu_audit.report.values import percent

NO_CEILING = (
    "not available: give --history, the database `check --history` recorded the sweep's file in"
)


def _usd(value: float | None) -> float | None:
    return None if value is None else cents(value)


def _hours(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds / SECONDS_PER_HOUR, 4)


def _percent(share: float | None) -> float | None:
    return None if share is None else round(share * 100, 2)


def _iso(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def trial_data(trial: TrialRun) -> dict[str, Any]:
    """A finished trial as the report's plain values (hours, USD to the cent, shares as
    percentages), with its exact seconds too so that `merge` adds shards up as the scan did."""
    return {
        "id": trial.id,
        "name": trial.name,
        "outcome": trial.outcome.value,
        "instance_type": trial.instance_type,
        "instances": trial.instances,
        "capacity": trial.capacity.value,
        "started": _iso(trial.started),
        "ended": _iso(trial.ended),
        "billable_hours": _hours(trial.billable_seconds),
        "training_hours": _hours(trial.training_seconds),
        "hourly_usd": trial.hourly_usd,
        "cost_usd": _usd(trial.cost_usd),
        "spot_savings_pct": _percent(trial.spot_savings),
        "interruptions": trial.interruptions,
        "restarts": trial.restarts,
        "checkpoint": trial.checkpoint,
        "failure": trial.failure,
        "price_source": trial.price_source,
        # exact, for `merge` to add shards' sweeps up to the cent as the scan did
        "billable_seconds": trial.billable_seconds,
        "training_seconds": trial.training_seconds,
        "lost_seconds": trial.lost_seconds,
        "gpus_per_instance": trial.gpus_per_instance,
        "spot_discount": trial.spot_discount,
        "resume_seconds": trial.resume_seconds,
        "resumes": trial.resumes,
        "startup_seconds": trial.startup_seconds,
        "startup_usd": _usd(trial.startup_usd),
        "input_mode": trial.input_mode,
    }


def sweep_data(sweep: Sweep) -> dict[str, Any]:
    """One sweep (or training job alone) with its sums and its trials."""
    ceiling = sweep.ceiling_gpu_hours
    return {
        "kind": sweep.kind,
        "provider": sweep.provider,
        "service": sweep.service,
        "id": sweep.id,
        "name": sweep.name,
        "account": sweep.account,
        "region": sweep.region,
        "state": sweep.state,
        "since": _iso(sweep.since),
        "trials_by_outcome": {
            "completed": sweep.completed,
            "stopped": sweep.stopped,
            "failed": sweep.failed,
            "running": sweep.running,
            "retried": sweep.retried,
        },
        "cost_usd": _usd(sweep.cost_usd),
        "cost_per_success_usd": _usd(sweep.cost_per_success_usd),
        "failed_usd": _usd(sweep.failed_usd),
        "failed_share_pct": _percent(sweep.failed_share),
        "billable_hours": _hours(sweep.billable_seconds),
        "training_hours": _hours(sweep.training_seconds),
        "gpu_hours": None if sweep.gpu_hours is None else round(sweep.gpu_hours, 4),
        "spot_savings_pct": _percent(sweep.spot_savings),
        "interruptions": sweep.interruptions,
        "restarts": sweep.restarts,
        "lost_usd": _usd(sweep.lost_usd),
        "resume_minutes": None if sweep.resume_minutes is None else round(sweep.resume_minutes, 2),
        "startup_usd": _usd(sweep.startup_usd),
        "startup_share_pct": _percent(sweep.startup_share),
        "ceiling_gpu_hours": ceiling,
        "ceiling": _why_no_ceiling(sweep),
        "ceiling_used_pct": _percent(sweep.ceiling_used),
        "ceiling_commit": sweep.ceiling_commit,
        "ceiling_file": sweep.ceiling_file,
        "trials": [trial_data(t) for t in sweep.trials],
    }


def _why_no_ceiling(sweep: Sweep) -> str | None:
    if sweep.ceiling_gpu_hours is not None or sweep.kind != "tuning":
        return None
    return sweep.ceiling_note or NO_CEILING


def ceiling_text(sweep: Sweep) -> str | None:
    """ "used X of Y GPU-hours (Z%) the file allowed at commit abc1234", said plainly when over
    it; None when there is no ceiling."""
    ceiling, used = sweep.ceiling_gpu_hours, sweep.gpu_hours
    if ceiling is None or used is None:
        return None
    commit = "(not a git checkout)" if sweep.ceiling_commit is None else sweep.ceiling_commit[:7]
    share = percent(_percent(sweep.ceiling_used), places=None, scaled=False)
    if used > ceiling:
        return (
            f"used {used:,.1f} GPU-hours, over the {ceiling:,.1f} the file allowed at commit "
            f"{commit} ({share}): retries, or the file changed since"
        )
    return (
        f"used {used:,.1f} of {ceiling:,.1f} GPU-hours ({share}) the file allowed at "
        f"commit {commit}"
    )


def sweeps_data(sweeps: tuple[Sweep, ...]) -> list[dict[str, Any]]:
    """Every sweep as the report's plain values."""
    return [sweep_data(s) for s in sweeps]


def count(value: int | None) -> str:
    """A count, or `not stated` for None."""
    return "not stated" if value is None else str(value)
