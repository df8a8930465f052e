"""The resource: one unit of GPU capacity, and its parts; field names are the policy language's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any

from gpu_audit.core.frozen import record


class Kind(StrEnum):
    INSTANCE = "instance"
    JOB = "job"
    POD = "pod"  # a Kubernetes pod holding GPUs on a node
    BILLED = "billed"  # GPU capacity as a billing export saw it over a period (`gpu-audit billing`)
    RESERVATION = "reservation"  # capacity bought ahead: a reservation or Capacity Block (`scan`)
    RUN = "run"  # a finished training job or tuning sweep over a period (`scan --since`)


class Capacity(StrEnum):
    SPOT = "spot"
    ON_DEMAND = "on-demand"
    RESERVED = "reserved"
    UNKNOWN = "unknown"


class State(StrEnum):
    RUNNING = "running"
    STOPPED = "stopped"
    PENDING = "pending"
    TERMINATED = "terminated"
    DEFINED = "defined"


class Workload(StrEnum):
    TRAINING = "training"
    INFERENCE = "inference"
    BATCH_INFERENCE = "batch-inference"  # a model run over inputs: transcription, folding, eval
    BENCHMARK = "benchmark"  # NCCL tests, throughput and burn-in runs
    NOTEBOOK = "notebook"  # a notebook or dev box
    UNKNOWN = "unknown"


class Severity(IntEnum):
    INFO = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.strip().upper()]


def canonical(
    doc: str,
    *,
    sources: str,
    type: str | None = None,
    unit: str | None = None,
    ordered: bool = False,
    required: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    anchored: bool = False,
    default: Any = None,
    factory: Any = None,
) -> Any:
    """Declare a canonical field: the one line that the field table (`gpu_audit.core.fields`), the
    policy loader, the inventory reader, the JSON report schema and the docs derive from.

    `type` overrides the type read from the annotation (`gpu` for a GPU class); `unit` makes
    durations (`24h`, `30m`) convert to it; `ordered` lets rules compare by GPU class order;
    `sources` says what fills the field; `minimum` and `maximum` bound a number (a value out of
    them is impossible, and refused where it enters); `anchored`: a finding about the field when
    a job file leaves it out points at the job's own line in a larger document (`JobDraft.anchor`:
    a CloudFormation logical id, a Ray node type), not at the document's first line.
    """
    meta = {
        "doc": doc,
        "sources": sources,
        "type": type,
        "unit": unit,
        "ordered": ordered,
        "minimum": minimum,
        "maximum": maximum,
        "anchored": anchored,
    }
    if required:
        return field(metadata=meta)
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@record
class Gpu:
    """The GPUs a resource holds."""

    model: str | None = canonical(
        "canonical GPU class (`A100-80GB`, `H100`, `L4`)",
        type="gpu",
        ordered=True,
        sources="catalog, API, job config",
    )
    count: int | None = canonical(
        "GPUs per resource (× nodes or replicas for jobs)",
        sources="catalog, API, job config",
        minimum=0,
    )
    memory_gib: float | None = canonical("memory per GPU in GiB", sources="catalog", minimum=0)
    allocated: int | None = canonical(
        "GPUs requested by the pods on a Kubernetes node", sources="Kubernetes API", minimum=0
    )


@record
class Utilization:
    """How busy the GPUs were over a window."""

    gpu_avg: float | None = canonical(
        "average GPU utilization % over the window", sources="metrics", minimum=0, maximum=100
    )
    gpu_p95: float | None = canonical(
        "95th percentile GPU utilization %", sources="metrics", minimum=0, maximum=100
    )
    window_hours: float | None = canonical(
        "the utilization window", unit="hours", sources="metrics", minimum=0
    )


@record
class DataRef:
    """The data a resource reads and writes, and where it lives."""

    uris: tuple[str, ...] | None = canonical(
        "buckets or URIs the resource reads and writes",
        sources="tag or label, job config",
        anchored=True,
    )
    regions: tuple[str, ...] | None = canonical(
        "the regions of those buckets", sources="bucket look-up, job config"
    )


@record
class Checkpoint:
    """Where and how often a job checkpoints."""

    uri: str | None = canonical("where the job checkpoints", sources="job config", anchored=True)
    interval_minutes: float | None = canonical(
        "how often the job checkpoints", unit="minutes", sources="job config", minimum=0
    )


@record
class Limits:
    """A job's runtime cap."""

    max_runtime_hours: float | None = canonical(
        "runtime cap", unit="hours", sources="job config", minimum=0, anchored=True
    )
    budget_usd: float | None = canonical("budget cap in USD", sources="job config, tag", minimum=0)
    idle_stop_hours: float | None = canonical(
        "idle time after which the job's capacity stops itself (SkyPilot `autostop` with "
        "`down: true`, dstack `inactivity_duration`)",
        unit="hours",
        sources="job config",
        minimum=0,
    )
    release_hours: float | None = canonical(
        "time after the work ends, or after the capacity goes idle, at which its GPUs are "
        "released (SkyPilot `autostop`, stop or down; 0 for a Kubernetes Job whose pods end with "
        "the work)",
        unit="hours",
        sources="job config",
        minimum=0,
    )
    max_retries: int | None = canonical(
        "times a failed run is retried (Kubernetes `backoffLimit`)", sources="job config", minimum=0
    )


@record
class Hpo:
    """A tuning sweep's trial cap, parallelism, time caps and early stopping."""

    max_trials: int | None = canonical(
        "tuning-job trial cap", sources="job config", minimum=0, anchored=True
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
    )
    timeout_hours: float | None = canonical(
        "a sweep's wall-clock cap over all its trials (SageMaker `ResourceLimits."
        "MaxRuntimeInSeconds`, Azure ML `limits.timeout`, Optuna `timeout`)",
        unit="hours",
        sources="job config",
        minimum=0,
    )
    attempts: int | None = canonical(
        "runs one trial may take, each with a fresh runtime cap (a Katib trial whose deadline is "
        "the pod's: 1 + the Job's `backoffLimit`); unset where one cap covers every attempt",
        sources="job config",
        minimum=1,
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
class Run:
    """What a managed training job or tuning sweep cost in a period, as it ran (`scan --since`)."""

    since: str | None = canonical(
        "start of the period read, ISO 8601 (`scan --since`, default 90 days back)",
        sources="API",
    )
    billable_hours: float | None = canonical(
        "instance-hours billed in the period (SageMaker `BillableTimeInSeconds` × instances; "
        "Vertex AI: wall clock × replicas)",
        unit="hours",
        sources="API",
        minimum=0,
    )
    training_hours: float | None = canonical(
        "instance-hours spent training (SageMaker `TrainingTimeInSeconds` × instances)",
        unit="hours",
        sources="API",
        minimum=0,
    )
    cost_usd: float | None = canonical(
        "what the billable hours cost, at the rate card's on-demand rate (SageMaker bills managed "
        "spot as fewer billable seconds) or the Vertex AI rate of the capacity",
        sources="API, catalog",
        minimum=0,
    )
    spot_savings: float | None = canonical(
        "percent of the training time not billed, as managed spot realised it "
        "((1 − billable ÷ training) × 100)",
        sources="API",
        minimum=0,
        maximum=100,
    )
    interruptions: int | None = canonical(
        "spot interruptions (SageMaker secondary status `Interrupted`); absent where the API "
        "does not say (Vertex AI)",
        sources="API",
        minimum=0,
    )
    restarts: int | None = canonical(
        "restarts (SageMaker secondary status `Restarting`); absent where the API does not say",
        sources="API",
        minimum=0,
    )
    lost_usd: float | None = canonical(
        "cost of the training time that ended in an interruption, which a restart from zero "
        "spends again",
        sources="API, catalog",
        minimum=0,
    )
    trials: int | None = canonical(
        "trials of a tuning sweep that ran in the period", sources="API", minimum=0
    )
    completed: int | None = canonical("trials that completed", sources="API", minimum=0)
    failed: int | None = canonical("trials that failed", sources="API", minimum=0)
    failed_usd: float | None = canonical(
        "what the failed trials cost", sources="API, catalog", minimum=0
    )
    failed_share: float | None = canonical(
        "percent of the sweep's cost spent on failed trials",
        sources="derived",
        minimum=0,
        maximum=100,
    )
    cost_per_success_usd: float | None = canonical(
        "the cost of all trials ÷ the completed ones", sources="derived", minimum=0
    )


@record
class Price:
    """The resource's hourly prices, from the catalog."""

    hourly_usd: float | None = canonical(
        "hourly price at the resource's capacity", sources="catalog", minimum=0
    )
    on_demand_hourly_usd: float | None = canonical(
        "on-demand hourly price", sources="catalog", minimum=0
    )
    spot_hourly_usd: float | None = canonical("spot hourly price", sources="catalog", minimum=0)
    as_of: str | None = canonical("the date the price is effective from", sources="catalog")
    source: str | None = canonical("where the price comes from (API or table)", sources="catalog")


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


@record
class SourceRef:
    """Where a resource came from: a job file and line, or a provider/account/region/id path.

    `key_lines` maps a canonical field (`capacity`, `gpu.count`) to the line of the key it was read
    from, so a finding can point at `use_spot: false` rather than the top of the file.
    `suppressions` maps a line to {rule id: reason} from inline comments
    `# gpu-audit: ignore[rule-id] reason`; rule id `*` stands for every rule. A comment on the
    document's first line (`line`) covers the whole document.
    """

    path: str | None = None
    line: int | None = None
    document: int | None = None
    key_lines: Mapping[str, int] = field(default_factory=dict)
    suppressions: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    note: str | None = None
    # fields the file sets with a value filled in at deploy time (`${VAR}`, `{{ .Values.x }}`):
    # missing to a rule, but never "absent" (a presence check on one is not evaluated)
    templated: frozenset[str] = frozenset()


_API = "API, inventory"


@record(kw_only=True)
class Resource:
    """One unit of GPU capacity: a running instance, or a job that would launch some.

    Every field but `source` is canonical: its declaration here is the field table's entry.
    """

    kind: Kind = canonical(
        "`instance`, `job`, `pod`, `billed`, `reservation` or `run`",
        sources="collector, job parser or billing export",
        required=True,
    )
    provider: str = canonical(
        "the live provider (`aws`, `azure`, `gcp`, `kubernetes`) or the job format (`azureml`, "
        "`batch`, `determined`, `dstack`, `hydra`, `kubernetes`, `ray`, `sagemaker`, `skypilot`, "
        "`vertex`, `wandb`)",
        sources="collector or job parser",
        required=True,
    )
    id: str = canonical("instance id, self link or job name", sources=_API, required=True)
    service: str | None = canonical(
        "the service that bills the capacity: `ec2`, `sagemaker`, `gce`, `vertex`, `kubernetes`, …",
        sources="collector, job parser",
    )
    name: str | None = canonical("instance or job name", sources=_API)
    account: str | None = canonical(
        "AWS account id, GCP project or Azure subscription", sources=_API
    )
    cluster: str | None = canonical(
        "Kubernetes context or cluster name", sources="Kubernetes collector"
    )
    region: str | None = canonical("region as the provider names it", sources=_API, anchored=True)
    zone: str | None = canonical("availability zone or GCP zone", sources=_API)
    instance_type: str | None = canonical(
        "`p4d.24xlarge`, `a2-highgpu-1g`, `ml.g5.xlarge`", sources=_API
    )
    state: State | None = canonical(
        "`running`, `stopped`, `pending`, `terminated`; `defined` for jobs", sources=_API
    )
    capacity: Capacity | None = canonical(
        "`spot`, `on-demand`, `reserved`, `unknown`", sources="API, job config", anchored=True
    )
    gpu: Gpu = Gpu()
    tags: Mapping[str, str] = canonical(
        "tag or label values, one flat map: `tags.<key>`",
        type="tag",
        sources="tags, labels",
        factory=dict,
    )
    workload: Workload = canonical(
        "`training`, `inference`, `batch-inference`, `benchmark`, `notebook` (a dev box too), "
        "`unknown`",
        sources="tag, job kind, what a job file runs",
        default=Workload.UNKNOWN,
    )
    role: str | None = canonical(
        "a node's part in a cluster job: `head` (a Ray head node, never a spot candidate)",
        sources="job parser",
    )
    retired: str | None = canonical(
        "what the resource asks for that is no longer sold on its cloud (a GPU, machine family "
        "or platform) and since when; absent while it is still offered",
        sources="catalog lifecycle table (derived when judged)",
    )
    retiring: str | None = canonical(
        "what the resource asks for that stops being sold on a date still ahead, and that date",
        sources="catalog lifecycle table (derived when judged)",
    )
    launched_at: datetime | None = canonical("launch time (ISO 8601)", sources="API")
    uptime_hours: float | None = canonical(
        "hours since launch (derived when judged)", unit="hours", sources="derived", minimum=0
    )
    min_nodes: int | None = canonical(
        "nodes an autoscaling cluster keeps however idle (Azure ML `minNodeCount`)",
        sources="API",
        minimum=0,
    )
    utilization: Utilization = Utilization()
    data: DataRef = DataRef()
    checkpoint: Checkpoint = Checkpoint()
    limits: Limits = Limits()
    hpo: Hpo = Hpo()
    served_model: ServedModel = ServedModel()
    price: Price = Price()
    estimate: Estimate = Estimate()
    billing: Billing = Billing()
    reservation: Reservation = Reservation()
    run: Run = Run()
    monthly_cost_usd: float | None = canonical(
        "hourly price × 730 while running (0 when stopped, but for an Azure VM stopped and "
        "still allocated)",
        sources="derived",
        minimum=0,
    )
    share: Share = Share()
    source: SourceRef = SourceRef()

    @property
    def location(self) -> str:
        """A human path to the resource: file:line for jobs, provider/account/region/id else."""
        if self.kind is Kind.JOB and self.source.path:
            line = f":{self.source.line}" if self.source.line else ""
            return f"{self.source.path}{line}"
        parts = [self.provider, self.account or "-", self.region or "-", self.id]
        return "/".join(parts)
