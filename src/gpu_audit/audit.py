"""The shared right half of the pipeline: enrich, evaluate, assemble a ScanResult."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from gpu_audit.catalog.enrich import enrich
from gpu_audit.catalog.shares import split_shares
from gpu_audit.core.fingerprint import fingerprints
from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.reserved import join_reservations
from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import (
    CoverageGap,
    Finding,
    NotEvaluated,
    ScanResult,
    Scope,
    Skipped,
)
from gpu_audit.core.workload import DEFAULT_PATTERNS, infer_workloads
from gpu_audit.errors import PolicyError
from gpu_audit.policy.conditions import Leaf
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import Policy
from gpu_audit.policy.operators import ordered_operand


def audit(
    resources: Iterable[Resource],
    policy: Policy,
    now: datetime,
    scope: Scope,
    skipped: Iterable[Skipped] = (),
    coverage_gaps: Iterable[CoverageGap] = (),
    workload_patterns: Mapping[str, Iterable[str]] = DEFAULT_PATTERNS,
    reservation_idle: Mapping[tuple[str, str], float] | None = None,
) -> ScanResult:
    """Judge resources as of `now`: the one function `scan` and `check` both call."""
    with paused_gc():
        enriched = tuple(enrich(r, now) for r in infer_workloads(resources, workload_patterns))
        enriched = _with_lost_work(enriched, policy, now)
        enriched = join_reservations(enriched, now, reservation_idle)
        enriched = split_shares(enriched)  # pods on shared GPU nodes: their share of its cost
    evaluation = evaluate(enriched, policy, now)
    scope = replace(scope, policy_files=policy.files, policy_versions=policy.versions)
    findings = with_fixes(evaluation.findings)
    return ScanResult(
        generated_at=now,
        scope=scope,
        rules=tuple(rule.info for rule in policy.rules),
        resources=enriched,
        findings=findings,
        not_evaluated=evaluation.not_evaluated,
        skipped=tuple(skipped),
        coverage_gaps=tuple(coverage_gaps),
        waivers=evaluation.waivers,
        fingerprints=fingerprints(findings),
        hints=source_hints(evaluation.not_evaluated),
    )


RESUME_RULE = "spot-resume-time"  # its bound on `run.resume_minutes` is the runbook's resume time


def resume_bound(policy: Policy) -> float:
    """The runbook's resume time in minutes: the bound `spot-resume-time` holds measured resumes
    to (a pack may change it), else 5 minutes."""
    # keeps catalog.lostwork off check's start-up
    from gpu_audit.catalog.lostwork import DEFAULT_RESUME_MINUTES

    for rule in policy.rules:
        require = rule.require
        if rule.info.id != RESUME_RULE or not isinstance(require, Leaf):
            continue
        if require.field.name == "run.resume_minutes" and require.operator in ("lte", "lt"):
            return _minutes(require.field, require.operand_text)
    return DEFAULT_RESUME_MINUTES


def _minutes(spec: Any, text: str) -> float:
    """A rule's operand as minutes: `5`, `5m`, `0.1h`."""
    # keeps catalog.lostwork off check's start-up
    from gpu_audit.catalog.lostwork import DEFAULT_RESUME_MINUTES

    def fail(message: str) -> PolicyError:
        return PolicyError(message)

    try:
        return float(text)
    except ValueError:
        pass
    try:
        return float(ordered_operand(spec, text, fail))
    except PolicyError:
        return DEFAULT_RESUME_MINUTES


def _with_lost_work(
    resources: tuple[Resource, ...], policy: Policy, now: datetime
) -> tuple[Resource, ...]:
    """Training job files with their expected spot lost work, GPU pods with their start-up in
    dollars (docs/spot.md)."""
    jobs = any(r.kind is Kind.JOB or r.kind is Kind.RUN for r in resources)
    pods = any(r.kind is Kind.POD and r.run.startup_minutes is not None for r in resources)
    if not jobs and not pods:
        return resources
    # keeps catalog.lostwork off check's start-up
    from gpu_audit.catalog.lostwork import with_lost_work, with_pod_startup

    resume = resume_bound(policy)
    return tuple(with_pod_startup(with_lost_work(r, resume), now) for r in resources)


def with_fixes(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Each job finding with its fix in the key its format uses (`resources.use_spot: true`);
    instances, and fields the format names no key for, as they are."""
    if not any(f.resource.kind is Kind.JOB for f in findings):
        return findings  # a fleet scan: the job formats' registry is never imported
    from gpu_audit.jobs import format_fix  # keeps gpu_audit.jobs off a cloud scan's start-up

    fixed: list[Finding] = []
    for finding in findings:
        resource = finding.resource
        fix = None
        if resource.kind is Kind.JOB and finding.field is not None:
            fix = format_fix(resource.provider, finding.field, resource.service)
        fixed.append(finding if fix is None else replace(finding, fix=fix))
    return tuple(fixed)


def source_hints(records: Iterable[NotEvaluated]) -> dict[tuple[str, str], Mapping[str, str]]:
    """The own hints of each provider and job format that made a not-evaluated resource: a
    job's provider is its format (`kubernetes` is both)."""
    hints: dict[tuple[str, str], Mapping[str, str]] = {}
    for key in {(n.resource.kind.value, n.resource.provider) for n in records}:
        kind, provider = key
        if kind == Kind.JOB.value:  # the job formats' registry: only a `check` has jobs
            from gpu_audit.jobs import format_hints  # keeps gpu_audit.jobs off a cloud scan

            hints[key] = format_hints(provider)
        else:  # a live provider's: `check` never gets here, nor imports the registry
            # keeps collectors.registry off check's start-up
            from gpu_audit.collectors.registry import PROVIDERS

            if provider in PROVIDERS:
                hints[key] = PROVIDERS[provider].hints
    return hints
