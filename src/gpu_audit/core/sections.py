"""The resource's larger sections: a sweep's caps (`hpo`), the model served, a job's estimate, a
bill's figures (`billing`), capacity bought ahead (`reservation`) and a shared GPU's share
(`share`); a finished run, a training job's knobs, what its GPU measured and its spot lost work
are in `gpu_audit.core.training`. `gpu_audit.core.resource` assembles them into `Resource`; their
field names are the policy language's."""

from __future__ import annotations

from datetime import datetime

from gpu_audit.core.declare import canonical
from gpu_audit.core.frozen import record


@record
class Hpo:
    """A tuning sweep's trial cap, parallelism, time caps and early stopping."""

    max_trials: int | None = canonical(
        "tuning-job trial cap",
        sources="job config",
        minimum=0,
        maximum=10**9,
        anchored=True,
    )
    early_stopping: bool | None = canonical(
        "tuning-job early stopping", sources="job config", anchored=True
    )
    parallel_trials: int | None = canonical(
        "trials a sweep runs at once (SageMaker `MaxParallelTrainingJobs`, Vertex and Katib "
        "`parallelTrialCount`, Azure ML `max_concurrent_trials`, Optuna `n_jobs`, Determined "
        "`max_concurrent_trials`)",
        sources="job config",
        minimum=1,
        maximum=10**9,
    )
    timeout_hours: float | None = canonical(
        "a sweep's wall-clock cap over all its trials (SageMaker `ResourceLimits."
        "MaxRuntimeInSeconds`, Azure ML `limits.timeout`, Optuna `timeout`)",
        unit="hours",
        sources="job config",
        minimum=0,
        maximum=10**6,
    )
    attempts: int | None = canonical(
        "runs one trial may take, each with a fresh runtime cap (a Katib trial whose deadline is "
        "the pod's: 1 + the Job's `backoffLimit`); unset where one cap covers every attempt",
        sources="job config",
        minimum=1,
        maximum=10**6,
    )
    pruned_share: float | None = canonical(
        "the share of a full trial an average trial is expected to run under the pruner "
        "schedule the file states (hyperband, ASHA, successive halving): an estimate, see "
        "docs/sweeps.md",
        sources="job config (derived from the schedule)",
        minimum=0,
        maximum=1,
    )
    trial_hours: float | None = canonical(
        "the wall-clock cap of one trial: its runtime cap, else the platform's documented "
        "default (Vertex AI: 7 days)",
        unit="hours",
        sources="derived",
        minimum=0,
        maximum=10**6,
    )


@record
class ServedModel:
    """The model a serving config serves, its size and the memory its weights take per GPU."""

    name: str | None = canonical(
        "the model a serving config names (a Hugging Face id in `--model`, `vllm serve`, "
        "`MODEL_ID`)",
        sources="job config",
    )
    params_b: float | None = canonical(
        "its parameters, in billions (the catalog's open-model table, or the size its name states)",
        sources="catalog",
        minimum=0,
    )
    precision: str | None = canonical(
        "the precision its weights are served at: `32-bit`, `16-bit` (unstated), `8-bit`, `4-bit`",
        sources="job config",
    )
    gib_per_gpu: float | None = canonical(
        "GiB of weights per GPU at that precision, over the GPUs the job asks for",
        sources="derived",
        minimum=0,
    )


@record
class Estimate:
    """What one run of a job costs, derived from its price and runtime cap."""

    gpu_hours: float | None = canonical(
        "GPU-hours of one run at the job's runtime cap", sources="derived", minimum=0
    )
    run_usd: float | None = canonical(
        "cost of one run at the runtime cap, on the job's own capacity",
        sources="derived",
        minimum=0,
    )
    tuning_usd: float | None = canonical(
        "a sweep's ceiling: max trials × attempts × trial hours × hourly rate, or parallel "
        "trials × sweep timeout × hourly rate where the timeout binds first (docs/sweeps.md)",
        sources="derived",
        minimum=0,
    )
    ceiling_usd: float | None = canonical(
        "the most the job can cost as written: a sweep's ceiling, else one run at the runtime "
        "cap; what `run-within-budget` compares with the budget",
        sources="derived",
        minimum=0,
    )
    sweep_hours: float | None = canonical(
        "a sweep's wall clock at its caps: ⌈trials ÷ parallel trials⌉ × trial hours, at most "
        "the sweep timeout",
        unit="hours",
        sources="derived",
        minimum=0,
    )
    expected_usd: float | None = canonical(
        "a sweep's expected cost under its pruner schedule: the ceiling's trial hours × the "
        "pruned share (an estimate, not a bound)",
        sources="derived",
        minimum=0,
    )


@record
class Billing:
    """What a billing export says a resource cost over a period (`gpu-audit billing`)."""

    period: str | None = canonical(
        "the billing period judged (`2026-Q3`, `2026-08`)", sources="billing export"
    )
    hours: float | None = canonical(
        "usage hours billed in the period: instance-hours (GPU-hours for a GCP GPU SKU)",
        unit="hours",
        sources="billing export",
        minimum=0,
    )
    gpu_hours: float | None = canonical(
        "GPU-hours billed in the period (usage hours × GPUs per instance)",
        sources="billing export",
        minimum=0,
    )
    effective_usd: float | None = canonical(
        "FOCUS `EffectiveCost` in the period (amortized)", sources="billing export"
    )
    billed_usd: float | None = canonical(
        "FOCUS `BilledCost` in the period (as invoiced)", sources="billing export"
    )
    unused_usd: float | None = canonical(
        "reserved or committed capacity paid for and left unused in the period",
        sources="billing export",
        minimum=0,
    )
    first_charge: datetime | None = canonical(
        "start of the first charge in the period", sources="billing export"
    )
    last_charge: datetime | None = canonical(
        "end of the last charge in the period", sources="billing export"
    )
    ended: bool | None = canonical(
        "the resource stopped billing before the period's last day", sources="billing export"
    )
    transfer_usd: float | None = canonical(
        "data transfer billed on the resource's `ResourceId` in the period (FOCUS `EffectiveCost`)",
        sources="billing export",
    )
    transfer_share: float | None = canonical(
        "the resource's data transfer over its compute (`transfer_usd` ÷ `effective_usd`)",
        sources="billing export",
        minimum=0,
    )
    rise_start: datetime | None = canonical(
        "the day its daily GPU spend rose far above its own recent history (its largest such "
        "rise in the period; billing/anomaly.py)",
        sources="billing export",
    )
    rise_usd: float | None = canonical(
        "dollars above its baseline since the rise began, to the last day read",
        sources="billing export",
    )
    rise_forecast_usd: float | None = canonical(
        "dollars above its baseline by the period's end, where the rise goes on",
        sources="billing export",
    )
    rise_pct: float | None = canonical(
        "the rise's largest day above its baseline, in % of that baseline", sources="billing export"
    )
    rise_days: int | None = canonical(
        "days the rise has lasted", sources="billing export", minimum=0
    )


@record
class Reservation:
    """Capacity bought ahead: a reservation's own counts and dates, or, on an instance, the
    reservation it runs on (and one with room it could have run on)."""

    type: str | None = canonical(
        "`capacity-reservation` (an EC2 On-Demand Capacity Reservation, a GCP reservation, an "
        "Azure capacity reservation), `capacity-block` (EC2 Capacity Blocks for ML) or "
        "`future-reservation` (GCP)",
        sources="API",
    )
    id: str | None = canonical(
        "on an instance: the reservation it runs on (AWS `CapacityReservationId`, GCP "
        "`reservationAffinity`, Azure `capacityReservationGroup`); on a reservation, its own id",
        sources="API",
    )
    match: str | None = canonical(
        "`open` (any instance of its type, zone and platform lands on it) or `targeted` (only "
        "instances that name it); on an instance, what it consumes when its API does not say "
        "which reservation: `open` (any matching one, GCP `ANY_RESERVATION`) or `none`",
        sources="API",
    )
    platform: str | None = canonical(
        "the operating system platform it reserves, or an instance runs (`Linux/UNIX`)",
        sources="API",
    )
    total: int | None = canonical("instances reserved", sources="API", minimum=0)
    used: int | None = canonical("reserved instances in use", sources="API", minimum=0)
    unused: int | None = canonical(
        "reserved instances not in use (total − used)", sources="API, derived", minimum=0
    )
    starts_at: datetime | None = canonical("when the reservation starts", sources="API")
    ends_at: datetime | None = canonical(
        "when the reservation ends; absent when it runs until cancelled", sources="API"
    )
    hours_left: float | None = canonical(
        "hours the unused instances are still paid for in the month a saving is stated in: to "
        "the end date, at most 730 (derived when judged)",
        unit="hours",
        sources="derived",
        minimum=0,
    )
    unused_usd: float | None = canonical(
        "dollars paid for unused instances over those hours: unused × hours left × the "
        "reservation's hourly rate per instance (derived when judged)",
        sources="derived",
        minimum=0,
    )
    instances: tuple[str, ...] | None = canonical(
        "the instances running on the reservation", sources="API, derived"
    )
    covering: str | None = canonical(
        "on an on-demand instance: an open reservation of its type, zone and platform with "
        "unused instances, which it would have run on at no extra cost",
        sources="derived",
    )
    idle_hours: float | None = canonical(
        "hours the reservation has had nothing on it, by the audits in the history; absent "
        "without a history",
        unit="hours",
        sources="history",
        minimum=0,
    )


@record
class Share:
    """The part of a GPU a Kubernetes pod or job holds when GPUs are shared, and what a shared
    node offers and leaves free (docs/shared-gpus.md)."""

    mode: str | None = canonical(
        "how GPUs are shared: `mig` (MIG slices), `time-slicing`, `mps`, `hami` (HAMi fractions); "
        "absent for whole GPUs",
        sources="Kubernetes API, job config",
    )
    profile: str | None = canonical(
        "the MIG profile a pod or job holds (`1g.10gb`, `3g.40gb`); on a node, the profiles it "
        "offers (`1g.10gb×4, 3g.40gb×1`)",
        sources="Kubernetes API, job config",
    )
    per_gpu: int | None = canonical(
        "shares one physical GPU is divided into: 7 compute slices (MIG on A100/H100), the "
        "replicas (time-slicing, MPS), 100 (HAMi percent of the GPU's memory)",
        sources="Kubernetes API, catalog",
        minimum=1,
    )
    units: float | None = canonical(
        "shares held by a pod or job (compute slices, replicas, percent); on a node, the shares "
        "its GPUs offer in all",
        sources="Kubernetes API, job config",
        minimum=0,
    )
    allocated: float | None = canonical(
        "shares of a node that pods hold", sources="Kubernetes API", minimum=0
    )
    free: float | None = canonical(
        "shares of a node no pod holds (free MIG compute slices, replicas, percent)",
        sources="Kubernetes API",
        minimum=0,
    )
    gpus: float | None = canonical(
        "GPUs' worth a pod or job holds (units ÷ per_gpu); on a node, GPUs' worth held",
        sources="derived",
        minimum=0,
    )
    node: str | None = canonical(
        "the Kubernetes node whose GPUs a pod's share is cut from (its provider id, else "
        "`context/name`); on a shared node, its own",
        sources="Kubernetes API",
    )
    idle_usd: float | None = canonical(
        "a shared node's monthly cost of its free shares: its GPU cost minus its pods' shares",
        sources="derived",
        minimum=0,
    )
    slice_pct: float | None = canonical(
        "for a pod holding whole GPUs on a node that offers MIG slices: the largest offered "
        "slice as a percent of one GPU's compute (a p95 at or under it fits the slice)",
        sources="derived",
        minimum=0,
        maximum=100,
    )
