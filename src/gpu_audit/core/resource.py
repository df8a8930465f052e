"""The resource: one unit of GPU capacity, and its parts; field names are the policy language's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from datetime import datetime
from enum import IntEnum, StrEnum

from gpu_audit.core.declare import canonical
from gpu_audit.core.frozen import record
from gpu_audit.core.sections import (
    Billing,
    Estimate,
    Hpo,
    Reservation,
    ServedModel,
    Share,
)
from gpu_audit.core.training import Activity, Interruption, Run, Training


class Kind(StrEnum):
    INSTANCE = "instance"
    JOB = "job"
    POD = "pod"  # a Kubernetes pod holding GPUs on a node
    BILLED = "billed"  # GPU capacity as a billing export saw it over a period (`gpu-audit billing`)
    RESERVATION = "reservation"  # capacity bought ahead: a reservation or Capacity Block (`scan`)
    RUN = "run"  # a finished training job or tuning sweep over a period (`scan --since`)
    SPEND = "spend"  # a team's daily GPU spend as the bill shows it (`gpu-audit billing`)


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
        """The severity as the policy and reports spell it (`high`)."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """The severity named `text` (any case, spaces trimmed); KeyError for an unknown name."""
        return cls[text.strip().upper()]


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
        maximum=10**9,
    )
    memory_gib: float | None = canonical("memory per GPU in GiB", sources="catalog", minimum=0)
    allocated: int | None = canonical(
        "GPUs requested by the pods on a Kubernetes node", sources="Kubernetes API", minimum=0
    )
    precisions: tuple[str, ...] | None = canonical(
        "training precisions the GPU runs: `fp32`, `fp16`, `tf32`, `bf16`, `fp8` "
        "(from its compute capability)",
        sources="catalog",
    )
    tensor_cores: bool | None = canonical(
        "the GPU has tensor cores (Volta, compute capability 7.0, and later)", sources="catalog"
    )
    compute_capability: float | None = canonical(
        "the GPU's CUDA compute capability (7.0 V100, 8.0 A100, 9.0 H100)",
        sources="catalog",
        minimum=0,
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
        "runtime cap",
        unit="hours",
        sources="job config",
        minimum=0,
        maximum=10**6,
        anchored=True,
    )
    budget_usd: float | None = canonical(
        "budget cap in USD", sources="job config, tag", minimum=0, maximum=10**15
    )
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
        "times a failed run is retried (Kubernetes `backoffLimit`)",
        sources="job config",
        minimum=0,
        maximum=10**6,
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
        "`instance`, `job`, `pod`, `billed`, `reservation`, `run` or `spend`",
        sources="collector, job parser or billing export",
        required=True,
    )
    provider: str = canonical(
        "the live provider (`aws`, `azure`, `gcp`, `kubernetes`) or the job format (`azureml`, "
        "`batch`, `determined`, `dstack`, `hydra`, `kubernetes`, `ray`, `sagemaker`, `skypilot`, "
        "`slurm`, `vertex`, `wandb`)",
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
    training: Training = Training()
    activity: Activity = Activity()
    interruption: Interruption = Interruption()
    source: SourceRef = SourceRef()

    @property
    def location(self) -> str:
        """A human path to the resource: file:line for jobs, provider/account/region/id else."""
        if self.kind is Kind.JOB and self.source.path:
            line = f":{self.source.line}" if self.source.line else ""
            return f"{self.source.path}{line}"
        parts = [self.provider, self.account or "-", self.region or "-", self.id]
        return "/".join(parts)
