"""Frozen dataclasses that travel between stages; field names are the policy language's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any, Protocol

from gpu_audit import __version__


class Kind(StrEnum):
    INSTANCE = "instance"
    JOB = "job"


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


@dataclass(frozen=True, slots=True)
class Gpu:
    model: str | None = None
    count: int | None = None
    memory_gib: float | None = None


@dataclass(frozen=True, slots=True)
class Utilization:
    gpu_avg: float | None = None
    gpu_p95: float | None = None
    window_hours: float | None = None


@dataclass(frozen=True, slots=True)
class DataRef:
    uris: tuple[str, ...] | None = None
    regions: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    uri: str | None = None
    interval_minutes: float | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    max_runtime_hours: float | None = None
    budget_usd: float | None = None


@dataclass(frozen=True, slots=True)
class Hpo:
    max_trials: int | None = None
    early_stopping: bool | None = None


@dataclass(frozen=True, slots=True)
class Price:
    hourly_usd: float | None = None
    on_demand_hourly_usd: float | None = None
    spot_hourly_usd: float | None = None


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


@dataclass(frozen=True, slots=True)
class Resource:
    """One unit of GPU capacity: a running instance, or a job that would launch some."""

    kind: Kind
    provider: str
    id: str
    name: str | None = None
    account: str | None = None
    region: str | None = None
    zone: str | None = None
    instance_type: str | None = None
    state: State | None = None
    capacity: Capacity | None = None
    gpu: Gpu = Gpu()
    tags: Mapping[str, str] = field(default_factory=dict)
    workload: Workload = Workload.UNKNOWN
    launched_at: datetime | None = None
    uptime_hours: float | None = None
    utilization: Utilization = Utilization()
    data: DataRef = DataRef()
    checkpoint: Checkpoint = Checkpoint()
    limits: Limits = Limits()
    hpo: Hpo = Hpo()
    price: Price = Price()
    monthly_cost_usd: float | None = None
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


class Explainer(Protocol):
    """A compiled requirement, which says on demand what it expected and what it found."""

    def describe(self) -> str: ...

    def failures(self, resource: Resource) -> list[tuple[str, str, str]]: ...


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule a resource fails. What was expected and found is worked out when a report asks,
    so a scan of 100k resources does not build strings that only a count will use."""

    rule: RuleInfo
    requirement: Explainer
    resource: Resource
    line: int | None
    monthly_savings_usd: float | None
    waiver: Waiver | None = None
    suppressed: str | None = None  # reason of an inline ignore comment
    _explained: tuple[str | None, str, str] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def rule_id(self) -> str:
        return self.rule.id

    @property
    def severity(self) -> Severity:
        return self.rule.severity

    @property
    def title(self) -> str:
        return self.rule.title

    @property
    def remediation(self) -> str | None:
        return self.rule.remediation

    @property
    def is_open(self) -> bool:
        """A finding that counts: neither waived nor suppressed inline."""
        return self.waiver is None and self.suppressed is None

    def _explain(self) -> tuple[str | None, str, str]:
        """(field, expected, actual), worked out on first use and kept: a pure function of the
        finding's own values, so memoizing it does not change the frozen finding."""
        if self._explained is None:
            failures = self.requirement.failures(self.resource)
            explained = (
                failures[0][0] if failures else None,
                "; ".join(f[1] for f in failures) or self.requirement.describe(),
                "; ".join(f[2] for f in failures) or "condition does not hold",
            )
            object.__setattr__(self, "_explained", explained)
            return explained
        return self._explained

    @property
    def field(self) -> str | None:
        return self._explain()[0]

    @property
    def expected(self) -> str:
        return self._explain()[1]

    @property
    def actual(self) -> str:
        return self._explain()[2]

    @property
    def message(self) -> str:
        _, expected, actual = self._explain()
        return f"{self.title}: expected {expected}; found {actual}"


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
class Scope:
    """What the run looked at, for report headers."""

    command: str
    providers: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    policy_files: tuple[str, ...] = ()
    policy_versions: tuple[str, ...] = ()


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

    @property
    def partial(self) -> bool:
        return bool(self.coverage_gaps)

    @property
    def input_errors(self) -> tuple[Skipped, ...]:
        return tuple(s for s in self.skipped if s.error)
