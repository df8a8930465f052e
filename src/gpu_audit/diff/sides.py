"""One side of a diff, judged as `check` judges it and priced as `estimate` prices it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gpu_audit.audit import audit
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import Finding, Scope
from gpu_audit.diff.model import Cost, FindingNote
from gpu_audit.estimate.compute import estimate_job
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.loader import Policy
from gpu_audit.report.knobs import knobs_text


@record
class Job:
    """A GPU job on one side, keyed for pairing: (file, name, occurrence of that name)."""

    file: str
    name: str
    occurrence: int
    cost: Cost
    findings: tuple[FindingNote, ...]  # open findings only (not waived, not suppressed)


@record
class Side:
    label: str  # `HEAD~1`, `working tree`
    jobs: tuple[Job, ...]
    files: frozenset[str]  # every file read on this side, repository-relative
    no_gpu: Mapping[str, str]  # file → why it holds no GPU job (not an error)
    errors: Mapping[str, str]  # file → the located line of why it could not be read


def judge(
    label: str,
    files: Mapping[str, str],
    contents: Mapping[str, bytes] | None,
    policy: Policy,
    patterns: Mapping[str, tuple[str, ...]],
    now: datetime,
) -> Side:
    """Load the files (load path → repository-relative file), judge and price every job."""
    loaded = load_jobs(list(files), contents)
    scope = Scope(command="diff", files=tuple(files))
    result = audit(loaded.resources, policy, now, scope, workload_patterns=patterns)
    by_resource: dict[int, list[FindingNote]] = {}
    for finding in result.findings:
        if finding.is_open:  # shown as `REV:file:line`, or repository-relative in the worktree
            path = finding.resource.source.path or ""
            shown = path if contents is not None else files.get(path, path)
            by_resource.setdefault(id(finding.resource), []).append(_note(finding, shown))
    jobs: list[Job] = []
    seen: dict[tuple[str, str], int] = {}
    for resource in result.resources:
        file = files.get(resource.source.path or "", resource.source.path or "")
        name = resource.name or f"document {(resource.source.document or 0) + 1}"
        occurrence = seen[file, name] = seen.get((file, name), 0) + 1
        notes = tuple(by_resource.get(id(resource), ()))
        jobs.append(Job(file, name, occurrence, cost_of(resource, file), notes))
    no_gpu = {files.get(s.path, s.path): s.reason for s in loaded.skipped if not s.error}
    errors = {files.get(s.path, s.path): s.reason for s in loaded.skipped if s.error}
    return Side(label, tuple(jobs), frozenset(files.values()), no_gpu, errors)


def cost_of(resource: Resource, file: str) -> Cost:
    """The job as `gpu-audit estimate` prices it: on its own capacity, at its runtime cap; a
    tuning sweep at its ceiling (every trial to its cap), as `run-within-budget` holds it."""
    estimate = estimate_job(resource)
    rate = estimate.spot if estimate.capacity == "spot" else estimate.on_demand
    return Cost(
        file=file,
        line=resource.source.line,
        provider=resource.provider,
        gpu_model=estimate.gpu_model,
        gpu_count=estimate.gpu_count,
        capacity=resource.capacity.value if resource.capacity else None,
        priced_as=estimate.capacity,
        runtime_cap_hours=estimate.hours,
        hourly_usd=rate.hourly_usd if rate else None,
        run_usd=estimate.ceiling_usd,  # a sweep's run is its ceiling
        # a sweep's GPU-hours are its ceiling's (every trial to its cap), as its run_usd is
        gpu_hours=estimate.sweep.gpu_hours if estimate.sweep is not None else estimate.gpu_hours,
        instance_type=rate.instance_type if rate else resource.instance_type,
        region=rate.region if rate else resource.region,
        price_as_of=rate.as_of if rate else None,
        price_source=rate.source if rate else None,
        trials=estimate.trials,
        sweep=estimate.sweep is not None,
        knobs=knobs_text(resource),
    )


def _note(finding: Finding, shown: str) -> FindingNote:
    line = finding.line or finding.resource.source.line
    where = f"{shown}:{line}" if line else shown
    return FindingNote(finding.rule_id, finding.severity.label, finding.message, where)
