"""The savings arithmetic every total shares: per resource its largest saving; the summary."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Literal

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Severity
from gpu_audit.core.results import Finding, ScanResult


@record
class Summary:
    """The counts and totals every format's summary shows."""

    resources: int
    findings_open: int
    findings_waived: int
    findings_suppressed: int
    by_severity: dict[str, int]  # open findings, every severity present (zeros included)
    by_rule: dict[str, int]  # open findings
    not_evaluated: int
    not_evaluated_resources: int
    monthly_cost_usd: float  # GPU spend covered per month (resources with a known price)
    unpriced_resources: int
    monthly_savings_usd: float  # open findings; per resource the largest saving counts
    coverage_gaps: int
    skipped: int
    input_errors: int
    partial: bool
    # Job findings are priced per run (never added to a monthly figure): the sum over jobs of
    # each job's largest per-run saving, and how many jobs that covers.
    run_savings_usd: float = 0.0
    jobs_with_run_savings: int = 0
    # Jobs with no runtime cap save per GPU-hour: per job its largest saving × its GPUs, summed
    # per hour (as `diff` totals an unbounded job's hourly change); never added to a run figure.
    hourly_savings_usd: float = 0.0
    jobs_with_hourly_savings: int = 0
    # GPUs of the unpriced resources by model, most first (`(("H200", 8), ("B200", 8))`); a
    # resource whose model is unknown counts under "unknown", one whose count is unknown as 0.
    unpriced_gpus: tuple[tuple[str, int], ...] = ()
    # A check of job files: nothing runs, so its figures are per hour and per run, never per
    # month (the jobs' summed hourly rate; one run of each job with a runtime cap).
    jobs: bool = False
    hourly_cost_usd: float = 0.0
    run_cost_usd: float = 0.0
    jobs_with_run_cost: int = 0
    # Every provider asked for failed and no file was read: not a clean result, nothing was read
    nothing_scanned: bool = False

    @property
    def unpriced_gpu_count(self) -> int:
        """How many GPUs no price covers (summed over the unpriced models)."""
        return sum(count for _, count in self.unpriced_gpus)


def summarize(result: ScanResult) -> Summary:
    """Two passes over the findings (a 100k-resource scan has ~200k): counts, then best savings."""
    severities: Counter[Severity] = Counter()
    rules: Counter[str] = Counter()
    opened: list[Finding] = []
    waived = suppressed = 0
    for finding in result.findings:
        if finding.waiver is not None:
            waived += 1
        if finding.suppressed is not None:
            suppressed += 1
        if finding.waiver is not None or finding.suppressed is not None:
            continue
        opened.append(finding)
        severities[finding.severity] += 1
        rules[finding.rule_id] += 1
    monthly, per_run = _best_per_resource(opened)  # jobs: a saving per run, never /month
    per_hour = _best_per_hour(opened)
    by_severity = {s.label: severities[s] for s in sorted(Severity, reverse=True)}
    by_rule = dict(rules.most_common())
    # A pod's GPUs are part of its node's cost: spend counts nodes and instances, never both.
    # A finished run (`scan --since`) spent its money already: the sweeps section says what.
    billed = [r for r in result.resources if r.kind is not Kind.POD and r.kind is not Kind.RUN]
    costs = [c for r in billed if _usable(c := r.monthly_cost_usd) and c is not None]
    hourly = [h for r in billed if _usable(h := r.price.hourly_usd) and h is not None]
    runs = [c for r in billed if _usable(c := r.estimate.run_usd) and c is not None]
    unpriced: Counter[str] = Counter()
    for resource in billed:
        if not _usable(resource.monthly_cost_usd):
            unpriced[resource.gpu.model or "unknown"] += resource.gpu.count or 0
    return Summary(
        resources=len(result.resources) - sum(r.kind is Kind.RUN for r in result.resources),
        findings_open=len(opened),
        findings_waived=waived,
        findings_suppressed=suppressed,
        by_severity=by_severity,
        by_rule=by_rule,
        not_evaluated=len(result.not_evaluated),
        not_evaluated_resources=len({id(n.resource) for n in result.not_evaluated}),
        monthly_cost_usd=round(sum(costs), 2),
        unpriced_resources=len(billed) - len(costs),
        monthly_savings_usd=round(sum(monthly.values()), 2),
        coverage_gaps=len(result.coverage_gaps),
        skipped=len(result.skipped),
        input_errors=len(result.input_errors),
        partial=result.partial,
        run_savings_usd=round(sum(per_run.values()), 2),
        jobs_with_run_savings=len(per_run),
        hourly_savings_usd=round(sum(per_hour.values()), 2),
        jobs_with_hourly_savings=len(per_hour),
        unpriced_gpus=tuple(sorted(unpriced.items(), key=lambda item: (-item[1], item[0]))),
        jobs=result.scope.command == "check",
        hourly_cost_usd=round(sum(hourly), 2),
        run_cost_usd=round(sum(runs), 2),
        jobs_with_run_cost=len(runs),
        nothing_scanned=nothing_scanned(result),
    )


def nothing_scanned(result: ScanResult) -> bool:
    """No resource, and every provider the scan read live is a coverage gap (a saved inventory
    with no resources was read: it is an incomplete result, not nothing)."""
    gaps = {gap.provider for gap in result.coverage_gaps}
    asked = set(result.scope.providers)
    return not result.resources and not result.scope.files and bool(asked) and gaps >= asked


def _usable(amount: float | None) -> bool:
    """A price or saving a total can add: not missing, negative, NaN or infinite (the input edge
    refuses those; a total never turns into one)."""
    return amount is not None and 0 <= amount < math.inf


def total_savings(findings: list[Finding], unit: Literal["month", "run"] = "month") -> float:
    """Savings do not add up on one resource (stopping it saves what spot would): take the max.
    Only savings of one unit are added: monthly (live capacity) or per run (jobs).

    A pod's saving stays on its finding but out of the total: its GPUs are part of its node's
    cost, and releasing them saves money once the node shrinks (the node's findings count that).
    """
    monthly, per_run = _best_per_resource(findings)
    return round(sum((monthly if unit == "month" else per_run).values()), 2)


def _best_per_resource(findings: list[Finding]) -> tuple[dict[int, float], dict[int, float]]:
    """Per resource (pods left out), its largest monthly saving and its largest per-run saving,
    in one pass."""
    monthly: dict[int, float] = {}
    per_run: dict[int, float] = {}
    for finding in findings:
        if finding.resource.kind is Kind.POD:
            continue
        saving = finding.monthly_savings_usd
        if saving is not None and _usable(saving):
            key = id(finding.resource)
            monthly[key] = max(monthly.get(key, 0.0), saving)
        saving = finding.saving_usd
        if saving is not None and finding.saving_unit == "run" and _usable(saving):
            key = id(finding.resource)
            per_run[key] = max(per_run.get(key, 0.0), saving)
    return monthly, per_run


def _best_per_hour(findings: list[Finding]) -> dict[int, float]:
    """Per job with no runtime cap, its largest saving per GPU-hour times its GPUs: $ per hour."""
    per_hour: dict[int, float] = {}
    for finding in findings:
        saving, gpus = finding.saving_usd, finding.resource.gpu.count
        if finding.saving_unit != "gpu-hour" or saving is None or not _usable(saving) or not gpus:
            continue
        key = id(finding.resource)
        per_hour[key] = max(per_hour.get(key, 0.0), saving * gpus)
    return per_hour


def _run_saving(finding: Finding) -> float | None:
    return finding.saving_usd if finding.saving_unit == "run" else None


def best_savings(findings: list[Finding], unit: Literal["month", "run"] = "month") -> list[Finding]:
    """Per resource, the open finding with the largest priced saving (> 0), largest first.

    Charts, top-N lists and group headings attribute each resource's saving to this one
    finding, so their parts add up to `monthly_savings_usd` (`unit="run"`: to a job check's
    savings per run).
    """
    if unit == "run":
        jobs = [f for f in findings if f.is_open and (_run_saving(f) or 0) > 0]
        return _best(jobs, _run_saving)
    return _best(findings, lambda f: f.monthly_savings_usd)


def _best(findings: list[Finding], amount: Callable[[Finding], float | None]) -> list[Finding]:
    best: dict[int, Finding] = {}
    for finding in findings:
        saving = amount(finding)
        if not finding.is_open or not saving or saving <= 0 or finding.resource.kind is Kind.POD:
            continue
        key = id(finding.resource)
        current = best.get(key)
        if current is None or saving > (amount(current) or 0.0):
            best[key] = finding
    # Ties keep the findings' (deterministic) order: a location per key costs ~1 s at 100,000.
    return sorted(best.values(), key=lambda f: -(amount(f) or 0.0))
