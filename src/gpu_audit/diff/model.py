"""The values a diff is made of: one side's cost of a job, a job's change, the totals."""

from __future__ import annotations

from gpu_audit.core.frozen import record
from gpu_audit.core.results import RuleInfo


@record
class Cost:
    """One job on one side: its GPUs, capacity and cap, and one run as `estimate` prices it."""

    file: str  # repository-relative
    line: int | None
    provider: str
    gpu_model: str | None
    gpu_count: int | None
    capacity: str | None  # as the config states it (spot, on-demand, reserved); None: unstated
    priced_as: str  # the capacity the run is priced at: `spot`, else `on-demand`
    runtime_cap_hours: float | None
    hourly_usd: float | None  # the whole job at `priced_as`; None: unpriced
    run_usd: float | None  # hourly × cap; None: no cap (unbounded) or unpriced
    gpu_hours: float | None
    instance_type: str | None  # what the price is of
    region: str | None
    price_as_of: str | None
    price_source: str | None
    trials: int | None = None  # a tuning sweep's trial cap: `run_usd` is then its ceiling
    sweep: bool = False  # a tuning sweep: `runtime_cap_hours` is per trial, `run_usd` the ceiling
    knobs: str = ""  # the training knobs it states (`precision=bf16; batch=4`), docs/knobs.md

    @property
    def unbounded(self) -> bool:
        """Priced, but with no bound: a run with no runtime cap, a sweep with no ceiling; it
        costs the hourly rate for as long as it runs."""
        return self.hourly_usd is not None and self.run_usd is None


@record
class FindingNote:
    """A finding new or resolved by the change: its rule, severity and message, where it is."""

    rule_id: str
    severity: str
    message: str
    location: str  # file:line on its side


@record
class JobChange:
    """A job paired across the two sides: `added`, `removed`, `modified` or `unchanged`."""

    file: str  # the file at head (at base for a removed job)
    name: str
    change: str
    before: Cost | None
    after: Cost | None
    delta_usd: float | None  # per run; None when either side is unbounded or unpriced
    delta_percent: float | None  # of the before run; None when before is zero or unknown
    delta_hourly_usd: float | None  # the hourly rates' difference (absent side: 0)
    findings_new: tuple[FindingNote, ...] = ()
    findings_resolved: tuple[FindingNote, ...] = ()
    notes: tuple[str, ...] = ()  # a rename, a file that holds no GPU job on one side

    @property
    def unbounded(self) -> bool:
        """True when either side has no runtime cap (no per-run cost)."""
        return any(c is not None and c.unbounded for c in (self.before, self.after))

    @property
    def unpriced(self) -> bool:
        """True when either side has no hourly price."""
        return any(c is not None and c.hourly_usd is None for c in (self.before, self.after))


@record
class Total:
    """Changed jobs only. Per-run sums cover the jobs with a run cost on each side they exist on;
    an unbounded or unpriced job is left out of them (counted, and its hourly delta summed)."""

    before_run_usd: float
    after_run_usd: float
    delta_usd: float
    delta_percent: float | None  # None when the before sum is zero
    changed_jobs: int
    unbounded_jobs: int
    unbounded_hourly_delta_usd: float
    unpriced_jobs: int


@record
class DiffResult:
    base: str  # the base revision as named, and its commit
    base_commit: str
    head: str  # a revision, or `working tree`
    head_commit: str | None
    jobs: tuple[JobChange, ...]
    total: Total
    prices_as_of: tuple[str, ...]  # every price date used, oldest first
    errors: tuple[str, ...] = ()  # located lines: files not compared, the reason each
    read: tuple[str, ...] = ()  # worktree files read (a report never replaces one)
    rules: tuple[RuleInfo, ...] = ()  # the policies judged by: titles and help for SARIF

    @property
    def changed(self) -> tuple[JobChange, ...]:
        """The jobs added, removed or changed (every job whose change is not `unchanged`)."""
        return tuple(j for j in self.jobs if j.change != "unchanged")
