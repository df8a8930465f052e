"""What `gpu-audit merge` does: shard reports → the one audit the unsharded scan would give."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from gpu_audit.audit import audit
from gpu_audit.catalog.basis import price_basis
from gpu_audit.cli.runners import unique
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap, ScanResult, Scope
from gpu_audit.core.runs import Sweep
from gpu_audit.errors import ConfigError
from gpu_audit.history.remember import preflight, remember, reservation_idle, sweep_ceilings
from gpu_audit.node_join import join_nodes
from gpu_audit.policy.digest import policy_digest
from gpu_audit.policy.loader import load_policy
from gpu_audit.settings import Settings
from gpu_audit.shards.reports import check_merger, missing_gaps, read_shards


@record
class MergeRequest:
    shards: tuple[str, ...]
    policies: tuple[str, ...] = ()
    now: datetime | None = None  # default: the latest shard's judging time
    history: str | None = None  # the one writer of a sharded audit's history
    baseline: str | None = None


def run_merge(request: MergeRequest, settings: Settings) -> ScanResult:
    """Read each shard once; keep each resource once; judge the union; missing shards are gaps."""
    if not request.shards:
        raise ConfigError("merge: give the shard reports (SHARD.json ...)")
    if request.history or request.baseline:
        preflight(request.history, request.baseline)
    policy = load_policy(request.policies or settings.policies)
    resources: dict[tuple[str, str], tuple[int, Resource]] = {}
    gaps: dict[tuple[str | None, ...], CoverageGap] = {}
    providers: list[str] = []
    accounts: list[str] = []
    regions: set[str] = set()
    judged: list[datetime] = []
    present: set[int] = set()
    held: set[str] | None = set()  # None once a shard does not say what it held
    first = None
    sweeps: dict[tuple[str, str], Sweep] = {}
    for report in read_shards(request.shards):
        if first is None:
            first = report
            check_merger(report, policy_digest(policy), price_basis())
        present.add(report.stamp.index)
        if held is not None and report.stamp.held is not None:
            held.update(report.stamp.held)
        else:
            held = None
        for resource in report.inventory.resources:  # a resource two shards saw is kept once:
            seen = (resource.provider, resource.id)  # the lowest shard's, whatever the order
            if seen not in resources or report.stamp.index < resources[seen][0]:
                resources[seen] = (report.stamp.index, resource)
        for sweep in report.sweeps:  # a sweep two shards read is kept once: the fuller read
            held_as = (sweep.provider, sweep.id)
            sweeps[held_as] = fuller(sweeps[held_as], sweep) if held_as in sweeps else sweep
        for gap in report.inventory.coverage_gaps:
            key = (gap.provider, gap.scope, gap.error, gap.account, gap.region)
            gaps.setdefault(key, gap)
        providers += _strings(report.scope.get("providers"))
        accounts += _strings(report.scope.get("accounts"))
        regions.update(_strings(report.scope.get("regions")))
        if report.generated_at:
            judged.append(report.generated_at)
    assert first is not None
    found = [*gaps.values(), *missing_gaps(first.stamp, present, held)]
    union = join_nodes(sorted((r for _, r in resources.values()), key=_order))
    scope = Scope(
        command="scan",
        providers=unique(providers),
        accounts=unique(sorted(accounts)),
        regions=unique(sorted(regions)),
        files=request.shards,
    )
    now = request.now or (max(judged) if judged else datetime.now(UTC))
    patterns = settings.workload_patterns
    idle = None
    if request.history:  # the shards judged without it: the merge knows how long one was empty
        idle = reservation_idle(request.history, now)
    result = audit(
        union,
        policy,
        now,
        scope,
        coverage_gaps=found,
        workload_patterns=patterns,
        reservation_idle=idle,
    )
    if sweeps:
        kept = tuple(sweeps[key] for key in sorted(sweeps))
        if request.history:  # the shards read no history: held to their files' bounds here
            kept = tuple(sweep_ceilings(kept, request.history))
        result = replace(result, sweeps=kept)
    if not request.history and not request.baseline:
        return result

    return remember(result, request.history, request.baseline)


def _order(resource: Resource) -> tuple[str, str, str, str]:
    return (resource.provider, resource.account or "", resource.region or "", resource.id)


def fuller(one: Sweep, other: Sweep) -> Sweep:
    """Of two reads of one sweep, the one with more trials (then more GPU-hours, then the later
    state), whatever order the shard files are named in: a merge's cost never depends on it."""

    def rank(sweep: Sweep) -> tuple[int, float, str, str]:
        return (len(sweep.trials), sweep.gpu_hours or 0.0, sweep.since.isoformat(), repr(sweep))

    return max(one, other, key=rank)


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
