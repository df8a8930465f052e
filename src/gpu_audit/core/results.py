"""What judging produces: findings, not-evaluated checks, gaps, skips, scope, comparisons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from gpu_audit import __version__
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Resource, Severity

if TYPE_CHECKING:
    from gpu_audit.core.comparison import Comparison
    from gpu_audit.core.runs import Sweep

# What a comparison with a previous audit holds lives in core/comparison.py, imported when first
# named (`from gpu_audit.core.results import Comparison` still works): `check` without a
# baseline builds none, and creating its five dataclasses was ~2 ms of every commit.
_COMPARISON = frozenset(
    {"Change", "Comparison", "FindingHistory", "Removed", "Resolved", "TrendPoint"}
)


def __getattr__(name: str) -> Any:  # Any: what Comparison's attribute is
    if name in _COMPARISON:
        from gpu_audit.core import comparison  # keeps core.comparison off check's start-up

        return getattr(comparison, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@record
class Waiver:
    """An accepted exception to a rule, with its owner and expiry."""

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


@record(kw_only=True)
class RuleInfo:
    """What a report says about a rule."""

    id: str
    title: str
    severity: Severity
    targets: tuple[Kind, ...]
    remediation: str | None
    savings: str | None
    description: str | None = None
    source: str | None = None
    aliases: tuple[str, ...] = ()
    # `severity-by-saving`: (severity, dollars) the finding's saving raises it to, highest first
    by_saving: tuple[tuple[Severity, float], ...] = ()

    def severity_for(self, saving: float | None) -> Severity:
        """The rule's severity, raised to the highest one whose floor the saving reaches."""
        if saving is not None:
            for severity, floor in self.by_saving:
                if saving >= floor:
                    return max(severity, self.severity)
        return self.severity


@record(kw_only=True)
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
    # What to change, in the key the job's own format uses (`resources.use_spot: true`):
    # set by `audit` from the job format's `fixes`; None for instances and unknown fields.
    fix: str | None = None

    @property
    def is_open(self) -> bool:
        """A finding that counts: neither waived nor suppressed inline."""
        return self.waiver is None and self.suppressed is None

    @property
    def message(self) -> str:
        """The finding's one-line message: title, expected and found (the keys named once for absent
        tags), then the fix when there is one."""
        expected, actual = str(self.expected), str(self.actual)  # as an f-string shows them
        if expected.endswith(" present") and actual == expected[: -len("present")] + "absent":
            text = f"{self.title}: {actual}"  # the keys named once: `tags.team, tags.owner absent`
        else:
            text = f"{self.title}: expected {expected}; found {actual}"
        return text if self.fix is None else f"{text}; fix: {self.fix}"

    @property
    def saving_per(self) -> str | None:
        """The unit in words: `per month`, `per run at the 24 h cap`, `per GPU-hour`."""
        if self.saving_unit == "run":
            cap = self.resource.limits.max_runtime_hours
            return f"per run at the {cap:g} h cap" if cap is not None else "per run"
        units = {"month": "per month", "gpu-hour": "per GPU-hour", "period": "over the period"}
        return units.get(self.saving_unit or "")


@record
class NotEvaluated:
    """A rule that could not judge a resource, because a field it needs is missing."""

    rule_id: str
    resource: Resource
    missing: str


@record(kw_only=True)
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

    @property
    def where(self) -> str:
        """`location` without its provider: `account 123456789012, region us-west-2` where the
        scope is a kind (`account/region`), never the kind's name alone."""
        if self.account and self.region:
            return f"account {self.account}, region {self.region}"
        return self.location.removeprefix(f"{self.provider} ")


@record(kw_only=True)
class Skipped:
    """An input that was not understood as GPU capacity, with the reason; or one that failed."""

    path: str
    reason: str
    error: bool = False
    line: int | None = None


@record(kw_only=True)
class WaiverStatus:
    """A waiver as of the scan: its state and how many findings it matched."""

    waiver: Waiver
    state: WaiverState
    matched: int


@record(kw_only=True)
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
    # The keys this shard held (sorted), so `merge` finds a missing shard's items as the rest of
    # the universe in linear time; None in a report from an earlier gpu-audit.
    held: tuple[str, ...] | None = None


@record(kw_only=True)
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
    # The prices laid over the bundled catalog (`--prices`), as the report headers name them.
    prices: str = ""
    shard: ShardStamp | None = None  # `scan --shard K/N` only


@record(kw_only=True)
class ScanResult:
    """One audit: what was judged, found and left out; every report renders it."""

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
    # How to supply a missing field, from the provider or job format that made the resources:
    # (kind, provider) -> {field: hint}. Set by whoever assembles the result (audit, history).
    hints: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    # What finished tuning sweeps and training jobs cost in the period (`scan --since`).
    sweeps: tuple[Sweep, ...] = ()

    @property
    def partial(self) -> bool:
        """True when any provider, account or region could not be read (a coverage gap): the scan is
        incomplete."""
        return bool(self.coverage_gaps)

    @property
    def input_errors(self) -> tuple[Skipped, ...]:
        """The skipped inputs that are errors (exit 2), not notes."""
        return tuple(s for s in self.skipped if s.error)
