"""Frozen dataclasses that travel between stages; field names are the policy language's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any

from gpu_audit import __version__


class Kind(StrEnum):
    INSTANCE = "instance"
    JOB = "job"
    POD = "pod"  # a Kubernetes pod holding GPUs on a node


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
    NOTEBOOK = "notebook"
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
    default: Any = None,
    factory: Any = None,
) -> Any:
    """Declare a canonical field: the one line that the field table (`gpu_audit.fields`), the
    policy loader, the inventory reader, the JSON report schema and the docs derive from.

    `type` overrides the type read from the annotation (`gpu` for a GPU class); `unit` makes
    durations (`24h`, `30m`) convert to it; `ordered` lets rules compare by GPU class order;
    `sources` says what fills the field; `minimum` and `maximum` bound a number (a value out of
    them is impossible, and refused where it enters).
    """
    meta = {
        "doc": doc,
        "sources": sources,
        "type": type,
        "unit": unit,
        "ordered": ordered,
        "minimum": minimum,
        "maximum": maximum,
    }
    if required:
        return field(metadata=meta)
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True, slots=True)
class Gpu:
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


@dataclass(frozen=True, slots=True)
class Utilization:
    gpu_avg: float | None = canonical(
        "average GPU utilization % over the window", sources="metrics", minimum=0, maximum=100
    )
    gpu_p95: float | None = canonical(
        "95th percentile GPU utilization %", sources="metrics", minimum=0, maximum=100
    )
    window_hours: float | None = canonical(
        "the utilization window", unit="hours", sources="metrics", minimum=0
    )


@dataclass(frozen=True, slots=True)
class DataRef:
    uris: tuple[str, ...] | None = canonical(
        "buckets or URIs the resource reads and writes", sources="tag or label, job config"
    )
    regions: tuple[str, ...] | None = canonical(
        "the regions of those buckets", sources="bucket look-up, job config"
    )


@dataclass(frozen=True, slots=True)
class Checkpoint:
    uri: str | None = canonical("where the job checkpoints", sources="job config")
    interval_minutes: float | None = canonical(
        "how often the job checkpoints", unit="minutes", sources="job config", minimum=0
    )


@dataclass(frozen=True, slots=True)
class Limits:
    max_runtime_hours: float | None = canonical(
        "runtime cap", unit="hours", sources="job config", minimum=0
    )
    budget_usd: float | None = canonical("budget cap in USD", sources="job config, tag", minimum=0)


@dataclass(frozen=True, slots=True)
class Hpo:
    max_trials: int | None = canonical("tuning-job trial cap", sources="job config", minimum=0)
    early_stopping: bool | None = canonical("tuning-job early stopping", sources="job config")


@dataclass(frozen=True, slots=True)
class Estimate:
    gpu_hours: float | None = canonical(
        "GPU-hours of one run at the job's runtime cap", sources="derived", minimum=0
    )
    run_usd: float | None = canonical(
        "cost of one run at the runtime cap, on the job's own capacity",
        sources="derived",
        minimum=0,
    )
    tuning_usd: float | None = canonical(
        "worst-case cost of a tuning job (trials × one run)", sources="derived", minimum=0
    )


@dataclass(frozen=True, slots=True)
class Price:
    hourly_usd: float | None = canonical(
        "hourly price at the resource's capacity", sources="catalog", minimum=0
    )
    on_demand_hourly_usd: float | None = canonical(
        "on-demand hourly price", sources="catalog", minimum=0
    )
    spot_hourly_usd: float | None = canonical("spot hourly price", sources="catalog", minimum=0)


@dataclass(frozen=True, slots=True)
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


_API = "API, inventory"


@dataclass(frozen=True, slots=True)
class Resource:
    """One unit of GPU capacity: a running instance, or a job that would launch some.

    Every field but `source` is canonical: its declaration here is the field table's entry.
    """

    kind: Kind = canonical(
        "`instance`, `job` or `pod`", sources="collector or job parser", required=True
    )
    provider: str = canonical(
        "`aws`, `gcp`, … or the job format (`skypilot`, `kubernetes`, `sagemaker`, `vertex`, "
        "`batch`, `ray`, `dstack`)",
        sources="collector or job parser",
        required=True,
    )
    id: str = canonical("instance id, self link or job name", sources=_API, required=True)
    service: str | None = canonical(
        "the service that bills the capacity: `ec2`, `sagemaker`, `gce`, `vertex`, `kubernetes`, …",
        sources="collector, job parser",
    )
    name: str | None = canonical("instance or job name", sources=_API)
    account: str | None = canonical("AWS account id or GCP project", sources=_API)
    cluster: str | None = canonical(
        "Kubernetes context or cluster name", sources="Kubernetes collector"
    )
    region: str | None = canonical("region as the provider names it", sources=_API)
    zone: str | None = canonical("availability zone or GCP zone", sources=_API)
    instance_type: str | None = canonical(
        "`p4d.24xlarge`, `a2-highgpu-1g`, `ml.g5.xlarge`", sources=_API
    )
    state: State | None = canonical(
        "`running`, `stopped`, `pending`, `terminated`; `defined` for jobs", sources=_API
    )
    capacity: Capacity | None = canonical(
        "`spot`, `on-demand`, `reserved`, `unknown`", sources="API, job config"
    )
    gpu: Gpu = Gpu()
    tags: Mapping[str, str] = canonical(
        "tag or label values, one flat map: `tags.<key>`",
        type="tag",
        sources="tags, labels",
        factory=dict,
    )
    workload: Workload = canonical(
        "`training`, `inference`, `notebook`, `unknown`",
        sources="tag, job kind",
        default=Workload.UNKNOWN,
    )
    launched_at: datetime | None = canonical("launch time (ISO 8601)", sources="API")
    uptime_hours: float | None = canonical(
        "hours since launch (derived when judged)", unit="hours", sources="derived", minimum=0
    )
    utilization: Utilization = Utilization()
    data: DataRef = DataRef()
    checkpoint: Checkpoint = Checkpoint()
    limits: Limits = Limits()
    hpo: Hpo = Hpo()
    price: Price = Price()
    estimate: Estimate = Estimate()
    monthly_cost_usd: float | None = canonical(
        "hourly price × 730 while running (0 when stopped)", sources="derived", minimum=0
    )
    source: SourceRef = SourceRef()

    @property
    def location(self) -> str:
        """A human path to the resource: file:line for jobs, provider/account/region/id else."""
        if self.kind is Kind.JOB and self.source.path:
            line = f":{self.source.line}" if self.source.line else ""
            return f"{self.source.path}{line}"
        parts = [self.provider, self.account or "-", self.region or "-", self.id]
        return "/".join(parts)


@dataclass(frozen=True, slots=True)
class Waiver:
    rule: str
    reason: str
    owner: str
    expires: datetime | None
    where: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None  # "file:line" of the waiver entry


class WaiverState(StrEnum):
    ACTIVE = "active"
    EXPIRING = "expiring"  # active, but expires within 30 days
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class RuleInfo:
    id: str
    title: str
    severity: Severity
    targets: tuple[Kind, ...]
    remediation: str | None
    savings: str | None
    description: str | None = None
    source: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule a resource fails, as plain values: the engine works out what was expected and what
    was found, so reporters only read (and a result can be pickled or stored)."""

    rule_id: str
    severity: Severity
    title: str
    resource: Resource
    field: str | None
    expected: str
    actual: str
    line: int | None
    monthly_savings_usd: float | None  # live capacity only: never set on a job's finding
    remediation: str | None = None
    waiver: Waiver | None = None
    suppressed: str | None = None  # reason of an inline ignore comment
    # The saving in its own unit: "month" (live capacity, = monthly_savings_usd), "run" (a job,
    # at its runtime cap) or "gpu-hour" (a job with no runtime cap). Amounts of different units
    # are never added together.
    saving_usd: float | None = None
    saving_unit: str | None = None

    @property
    def is_open(self) -> bool:
        """A finding that counts: neither waived nor suppressed inline."""
        return self.waiver is None and self.suppressed is None

    @property
    def message(self) -> str:
        return f"{self.title}: expected {self.expected}; found {self.actual}"

    @property
    def saving_per(self) -> str | None:
        """The unit in words: `per month`, `per run at the 24 h cap`, `per GPU-hour`."""
        if self.saving_unit == "run":
            cap = self.resource.limits.max_runtime_hours
            return f"per run at the {cap:g} h cap" if cap is not None else "per run"
        return {"month": "per month", "gpu-hour": "per GPU-hour"}.get(self.saving_unit or "")


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    """A rule that could not judge a resource, because a field it needs is missing."""

    rule_id: str
    resource: Resource
    missing: str


@dataclass(frozen=True, slots=True)
class CoverageGap:
    """Something the scan was meant to see and could not: a region, account, project."""

    provider: str
    scope: str
    error: str
    message: str
    account: str | None = None
    region: str | None = None

    @property
    def location(self) -> str:
        """What could not be read: `aws 123456789012/us-west-2`, `gcp project ml-prod`."""
        if self.account and self.region:
            return f"{self.provider} {self.account}/{self.region}"
        named = [v for v in (self.account, self.region) if v and v not in self.scope]
        return " ".join([self.provider, self.scope, *named])


@dataclass(frozen=True, slots=True)
class Skipped:
    """An input that was not understood as GPU capacity, with the reason; or one that failed."""

    path: str
    reason: str
    error: bool = False
    line: int | None = None


@dataclass(frozen=True, slots=True)
class WaiverStatus:
    waiver: Waiver
    state: WaiverState
    matched: int


@dataclass(frozen=True, slots=True)
class ShardStamp:
    """What a shard report carries so `merge` can join it with its siblings (and refuse strangers).

    `universe` holds every work-item key of the whole scan (all shards), sorted; `merge` names a
    missing shard's items from it."""

    index: int  # 1-based
    count: int
    universe_digest: str
    universe: tuple[str, ...]
    policy_digest: str
    price_basis: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class Scope:
    """What the run looked at, for report headers."""

    command: str
    providers: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    policy_files: tuple[str, ...] = ()
    policy_versions: tuple[str, ...] = ()
    # The invocation after `gpu-audit` (`scan --inventory x.yaml ...`), secrets redacted; set by
    # the CLI for the Markdown header, kept out of JSON and SARIF.
    argv: tuple[str, ...] = ()
    shard: ShardStamp | None = None  # `scan --shard K/N` only


class Change(StrEnum):
    NEW = "new"
    PERSISTING = "persisting"


@dataclass(frozen=True, slots=True)
class FindingHistory:
    """A finding against the previous audit: `new`, or `persisting` since `first_seen`."""

    change: Change
    first_seen: datetime
    audits_open: int  # audits this finding has been in, this one included


@dataclass(frozen=True, slots=True)
class Resolved:
    """A finding of the previous audit that is gone now, with the saving it stood for."""

    fingerprint: str
    rule_id: str
    severity: Severity
    title: str
    resource_id: str
    location: str
    monthly_savings_usd: float | None
    first_seen: datetime


@dataclass(frozen=True, slots=True)
class Removed:
    """A resource of the previous audit that is gone now, with what it cost."""

    resource_id: str
    provider: str
    location: str
    monthly_cost_usd: float | None


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """One audit in the trend: spend, savings found (open) and savings realised (resolved)."""

    generated_at: datetime
    monthly_cost_usd: float
    monthly_savings_usd: float
    savings_realised_usd: float
    findings_open: int


@dataclass(frozen=True, slots=True)
class Comparison:
    """What changed since the previous audit of the same scope, as plain data reporters read.

    `changes` runs parallel to `ScanResult.findings`. With no previous audit, `previous_at` is
    None and every finding is new.
    """

    source: str  # "history FILE" or "baseline FILE"
    previous_at: datetime | None
    changes: tuple[FindingHistory, ...]
    new: int = 0  # open findings only, as every count
    persisting: int = 0
    resolved: tuple[Resolved, ...] = ()
    removed: tuple[Removed, ...] = ()
    previous_cost_usd: float | None = None
    previous_savings_usd: float | None = None
    savings_realised_usd: float = 0.0
    trend: tuple[TrendPoint, ...] = ()  # oldest first, this audit last


@dataclass(frozen=True, slots=True)
class ScanResult:
    generated_at: datetime
    scope: Scope
    rules: tuple[RuleInfo, ...]
    resources: tuple[Resource, ...]
    findings: tuple[Finding, ...]
    not_evaluated: tuple[NotEvaluated, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    coverage_gaps: tuple[CoverageGap, ...] = ()
    waivers: tuple[WaiverStatus, ...] = ()
    tool_version: str = __version__  # the gpu-audit that judged, as every report names it
    fingerprints: tuple[str, ...] = ()  # parallel to findings: rule id + the resource's stable id
    since: Comparison | None = None  # with a history or a baseline

    @property
    def partial(self) -> bool:
        return bool(self.coverage_gaps)

    @property
    def input_errors(self) -> tuple[Skipped, ...]:
        return tuple(s for s in self.skipped if s.error)
