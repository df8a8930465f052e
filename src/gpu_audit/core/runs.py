"""What finished runs cost (`scan --since`): a trial or training job as it ran, a tuning sweep's
sums (cost per successful trial, the share spent on failed trials), and the resource judged.

A collector fills `TrialRun`s from the API (billable and training seconds, secondary status
transitions, the rate card's rate) and yields one `Sweep` per tuning job, or per training job
that ran alone; everything else here is arithmetic over those values.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import (
    Capacity,
    Checkpoint,
    Gpu,
    Kind,
    Resource,
    Run,
    SourceRef,
    State,
    Workload,
)

SECONDS_PER_HOUR = 3600.0


class Outcome(StrEnum):
    """How a trial or job ended: the terminal states the report counts."""

    COMPLETED = "completed"
    STOPPED = "stopped"  # stopped early (by the tuner's early stopping, or by hand)
    FAILED = "failed"
    RUNNING = "running"  # still running at the end of the period: cost so far


@record(kw_only=True)
class TrialRun:
    """One training job (a sweep's trial, or a job alone) as the API describes it."""

    id: str
    name: str
    outcome: Outcome
    instance_type: str | None
    instances: int
    capacity: Capacity
    hourly_usd: float | None  # one instance-hour at the rate billable time is priced at
    billable_seconds: float | None  # instance-seconds billed (× instances)
    training_seconds: float | None  # instance-seconds trained (× instances)
    gpus_per_instance: int | None = None
    interruptions: int | None = None  # None: the API does not say
    restarts: int | None = None
    lost_seconds: float | None = None  # instance-seconds of training that ended interrupted
    checkpoint: str | None = None
    started: datetime | None = None
    ended: datetime | None = None
    failure: str | None = None
    price_source: str | None = None
    # Spot priced at a spot rate (Vertex AI): the rate's discount on on-demand, which SageMaker
    # shows instead as billable seconds below the training seconds.
    spot_discount: float | None = None
    # From the secondary status transitions (SageMaker): the summed wall seconds from the end of
    # each `Interrupted` to the start of the next `Training`, and how many such resumes; the
    # summed wall seconds of `Downloading` and `DownloadingTrainingImage` (billed start-up).
    resume_seconds: float | None = None
    resumes: int | None = None
    startup_seconds: float | None = None
    input_mode: str | None = None  # `File`, `FastFile`, `Pipe` (File where any channel copies)
    # The `gpu-audit/checkpoint-interval-minutes` tag (key, value) as written (SageMaker ListTags,
    # read for a checkpointed job alone): the stated interval its lost work is computed at.
    checkpoint_interval: tuple[str, str] | None = None

    @property
    def startup_usd(self) -> float | None:
        """The billed start-up at the run's hourly rate: on-demand × billable ÷ training, per
        instance, times the instances."""
        if self.startup_seconds is None or self.hourly_usd is None:
            return None
        hours = self.startup_seconds * self.instances / SECONDS_PER_HOUR
        return hours * self.hourly_usd * self._billed_share()

    @property
    def cost_usd(self) -> float | None:
        """The run's cost in USD: billable instance-seconds at the hourly rate; None when either is
        unknown."""
        if self.billable_seconds is None or self.hourly_usd is None:
            return None
        return self.billable_seconds / SECONDS_PER_HOUR * self.hourly_usd

    @property
    def lost_usd(self) -> float | None:
        """The interrupted training time at the billed share of the rate (what a restart from
        zero spends again)."""
        if self.lost_seconds is None or self.hourly_usd is None:
            return None
        return self.lost_seconds / SECONDS_PER_HOUR * self.hourly_usd * self._billed_share()

    def _billed_share(self) -> float:
        if self.billable_seconds is None or not self.training_seconds:
            return 1.0
        return min(1.0, self.billable_seconds / self.training_seconds)

    @property
    def on_demand_seconds(self) -> float | None:
        """The billable seconds as on-demand seconds at the same price."""
        if self.billable_seconds is None:
            return None
        return self.billable_seconds * (1.0 - (self.spot_discount or 0.0))

    @property
    def spot_savings(self) -> float | None:
        """1 − billable ÷ training: the share spot did not bill (a spot rate's discount)."""
        billed = self.on_demand_seconds
        if billed is None or not self.training_seconds:
            return None
        return max(0.0, 1.0 - billed / self.training_seconds)

    @property
    def gpu_hours(self) -> float | None:
        """The GPU-hours billed: billable instance-seconds × GPUs per instance; None when either is
        unknown."""
        if self.billable_seconds is None or self.gpus_per_instance is None:
            return None
        return self.billable_seconds / SECONDS_PER_HOUR * self.gpus_per_instance


def _sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


@record(kw_only=True)
class Sweep:
    """A tuning sweep and its trials that ran in the period, or a training job alone
    (`kind` `training`, one trial)."""

    provider: str
    service: str
    kind: str  # "tuning" or "training"
    id: str
    name: str
    account: str | None
    region: str | None
    state: str  # as the API names it: `Completed`, `JOB_STATE_SUCCEEDED`
    since: datetime
    trials: tuple[TrialRun, ...]
    # GPU-hours the sweep's file allowed, from the latest estimate `check --history` recorded of a
    # sweep of its name (history/sweeps.py); None: not available, `ceiling_note` says why
    ceiling_gpu_hours: float | None = None
    ceiling_commit: str | None = None  # the commit the file was checked at (None: not in git)
    ceiling_file: str | None = None  # the file's path as the check was given it
    ceiling_note: str | None = None  # why there is no ceiling (None: no history was given)

    @property
    def ceiling_used(self) -> float | None:
        """The GPU-hours used as a share of the ceiling (above 1: over what the file allowed)."""
        used, ceiling = self.gpu_hours, self.ceiling_gpu_hours
        return None if used is None or not ceiling else used / ceiling

    def _count(self, outcome: Outcome) -> int:
        return sum(1 for t in self.trials if t.outcome is outcome)

    @property
    def completed(self) -> int:
        """How many trials completed."""
        return self._count(Outcome.COMPLETED)

    @property
    def stopped(self) -> int:
        """How many trials were stopped early (by the tuner or by hand)."""
        return self._count(Outcome.STOPPED)

    @property
    def failed(self) -> int:
        """How many trials failed."""
        return self._count(Outcome.FAILED)

    @property
    def running(self) -> int:
        """How many trials were still running at the end of the period."""
        return self._count(Outcome.RUNNING)

    @property
    def retried(self) -> int | None:
        """Trials that were interrupted or restarted at least once; None where the API states
        neither (Vertex AI)."""
        if all(t.interruptions is None and t.restarts is None for t in self.trials):
            return None
        return sum(1 for t in self.trials if (t.interruptions or 0) + (t.restarts or 0) > 0)

    @property
    def cost_usd(self) -> float | None:
        """The sweep's cost in USD over its priced trials; None when no trial is priced."""
        return _sum(t.cost_usd for t in self.trials)

    @property
    def failed_usd(self) -> float | None:
        """The USD the failed trials cost (0.0 when none failed); None when no trial is priced."""
        if self.cost_usd is None:
            return None
        return _sum(t.cost_usd for t in self.trials if t.outcome is Outcome.FAILED) or 0.0

    @property
    def failed_share(self) -> float | None:
        """The failed trials' share of the sweep's cost (0 to 1); None when the cost is unknown or
        0."""
        total, failed = self.cost_usd, self.failed_usd
        if total is None or failed is None or total <= 0:
            return None
        return min(1.0, failed / total)

    @property
    def cost_per_success_usd(self) -> float | None:
        """The cost of every trial (failed, stopped, retried too) ÷ the completed ones."""
        total = self.cost_usd
        return None if total is None or not self.completed else total / self.completed

    @property
    def billable_seconds(self) -> float | None:
        """The trials' billable instance-seconds summed; None when no trial states them."""
        return _sum(t.billable_seconds for t in self.trials)

    @property
    def training_seconds(self) -> float | None:
        """The trials' trained instance-seconds summed; None when no trial states them."""
        return _sum(t.training_seconds for t in self.trials)

    @property
    def gpu_hours(self) -> float | None:
        """The trials' GPU-hours summed; None when no trial's are known."""
        return _sum(t.gpu_hours for t in self.trials)

    @property
    def interruptions(self) -> int | None:
        """The spot interruptions of the trials that report them; None when none does."""
        known = [t.interruptions for t in self.trials if t.interruptions is not None]
        return sum(known) if known else None

    @property
    def restarts(self) -> int | None:
        """The restarts of the trials that report them; None when none does."""
        known = [t.restarts for t in self.trials if t.restarts is not None]
        return sum(known) if known else None

    @property
    def lost_usd(self) -> float | None:
        """The USD of training lost to interruptions, summed over the trials; None when none is
        known."""
        return _sum(t.lost_usd for t in self.trials)

    @property
    def resume_minutes(self) -> float | None:
        """The mean measured resume over the trials' interruptions; None where none was seen."""
        resumes = sum(t.resumes or 0 for t in self.trials)
        total = _sum(t.resume_seconds for t in self.trials)
        return None if not resumes or total is None else total / resumes / 60

    @property
    def startup_seconds(self) -> float | None:
        """The billed start-up (downloading data and image) in wall seconds, summed over the trials;
        None when none is measured."""
        return _sum(t.startup_seconds for t in self.trials)

    @property
    def startup_usd(self) -> float | None:
        """The billed start-up in USD, summed over the trials; None when none is known."""
        return _sum(t.startup_usd for t in self.trials)

    @property
    def startup_share(self) -> float | None:
        """The start-up's share of the sweep's cost (0 to 1); None when either is unknown or the
        cost is 0."""
        startup, total = self.startup_usd, self.cost_usd
        if startup is None or not total:
            return None
        return min(1.0, startup / total)

    @property
    def input_mode(self) -> str | None:
        """The sweep's input mode: `File` when any trial copies its data, else the one mode all
        trials share; None when they differ or none says."""
        modes = {t.input_mode for t in self.trials if t.input_mode}
        return "File" if "File" in modes else (modes.pop() if len(modes) == 1 else None)

    @property
    def spot_savings(self) -> float | None:
        """1 − billable ÷ training seconds over the sweep: the share spot did not bill; None when
        either is unknown."""
        billed, training = _sum(t.on_demand_seconds for t in self.trials), self.training_seconds
        if billed is None or not training:
            return None
        return max(0.0, 1.0 - billed / training)


def _hours(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds / SECONDS_PER_HOUR, 4)


def _money(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _percent(share: float | None) -> float | None:
    return None if share is None else round(share * 100, 2)


def _minutes(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _per_minute(seconds: float | None) -> float | None:
    return None if seconds is None else seconds / 60


def _capacity(trials: tuple[TrialRun, ...]) -> Capacity:
    kinds = {t.capacity for t in trials}
    return kinds.pop() if len(kinds) == 1 else Capacity.UNKNOWN


def sweep_resource(sweep: Sweep) -> Resource:
    """The sweep (or job) as a resource of kind `run`, which the runbook's `run` rules judge."""
    trials = sweep.trials
    first = trials[0] if trials else None
    tuning = sweep.kind == "tuning"
    checkpoints = {t.checkpoint for t in trials}
    gpus = first.gpus_per_instance if first else None
    share = sweep.failed_share
    return Resource(
        kind=Kind.RUN,
        provider=sweep.provider,
        service=sweep.service,
        id=sweep.id,
        name=sweep.name,
        account=sweep.account,
        region=sweep.region,
        instance_type=first.instance_type if first else None,
        state=State.RUNNING if sweep.running else State.TERMINATED,
        capacity=_capacity(trials),
        gpu=Gpu(count=gpus * first.instances) if first and gpus else Gpu(),
        workload=Workload.TRAINING,
        checkpoint=Checkpoint(uri=checkpoints.pop() if len(checkpoints) == 1 else None),
        tags=dict([first.checkpoint_interval]) if first and first.checkpoint_interval else {},
        run=Run(
            since=sweep.since.isoformat().replace("+00:00", "Z"),
            billable_hours=_hours(sweep.billable_seconds),
            training_hours=_hours(sweep.training_seconds),
            cost_usd=_money(sweep.cost_usd),
            spot_savings=_percent(sweep.spot_savings),
            interruptions=sweep.interruptions,
            restarts=sweep.restarts,
            lost_usd=_money(sweep.lost_usd),
            trials=len(trials) if tuning else None,
            completed=sweep.completed if tuning else None,
            failed=sweep.failed if tuning else None,
            failed_usd=_money(sweep.failed_usd) if tuning else None,
            failed_share=_percent(share) if tuning else None,
            cost_per_success_usd=_money(sweep.cost_per_success_usd) if tuning else None,
            resume_minutes=_minutes(sweep.resume_minutes),
            startup_minutes=_minutes(_per_minute(sweep.startup_seconds)),
            startup_usd=_money(sweep.startup_usd),
            startup_share=_percent(sweep.startup_share),
            input_mode=sweep.input_mode,
        ),
        source=SourceRef(note=_note(sweep)),
    )


def _note(sweep: Sweep) -> str | None:
    if sweep.kind != "tuning":
        return None
    retried = "" if sweep.retried is None else f", {sweep.retried} retried"
    return (
        f"{len(sweep.trials)} trials in the period: {sweep.completed} completed, "
        f"{sweep.stopped} stopped early, {sweep.failed} failed{retried}"
    )
