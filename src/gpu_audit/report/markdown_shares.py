"""The Markdown report's shared GPUs: each shared node's cost, held and idle, and the cost by team
(docs/shared-gpus.md); amounts in cents, so the rows add up to the total."""

from __future__ import annotations

from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import ScanResult
from gpu_audit.report.markdown_text import inline, table
from gpu_audit.report.values import money

TEAM_LABEL = "team"
IDLE = "idle (unallocated shares)"


def shared_gpus(result: ScanResult) -> list[str]:
    """The "Shared GPUs" section: each shared node's monthly cost held by pods and idle, and the
    cost by team; no lines without a shared node."""
    nodes = {
        r.share.node: r
        for r in result.resources
        if r.kind is Kind.INSTANCE and r.share.node and r.share.idle_usd is not None
    }
    if not nodes:
        return []
    pods = [r for r in result.resources if r.kind is Kind.POD and r.share.node in nodes]
    rows, teams = [], {IDLE: 0}
    for ref, node in nodes.items():
        held = [p for p in pods if p.share.node == ref]
        held_cents = sum(_cents(p.monthly_cost_usd) for p in held)
        idle = _cents(node.share.idle_usd)
        teams[IDLE] += idle
        for pod in held:
            team = _team(pod)
            teams[team] = teams.get(team, 0) + _cents(pod.monthly_cost_usd)
        sharing = _sharing(node)
        rows.append(
            [
                inline(node.name or node.id, 60),
                inline(sharing, 80),
                _dollars(_cents(node.monthly_cost_usd)),
                f"{len(held)}: {_dollars(held_cents)}",
                f"{_count(node.share.free)} of {_count(node.share.units)}: {_dollars(idle)}",
            ]
        )
    order = [*sorted((t for t in teams if t != IDLE), key=str.casefold), IDLE]
    by_team = [[inline(t, 60), _dollars(teams[t])] for t in order]
    by_team.append(["**total**", _dollars(sum(teams.values()))])
    return [
        "## Shared GPUs",
        "",
        "Each shared node's monthly cost split over the pods holding its MIG slices, replicas or "
        "HAMi fractions, to the cent; the free shares are its idle cost.",
        "",
        *table(["Node", "Sharing", "Monthly cost", "Pods: cost", "Free shares: idle"], rows),
        "",
        f"Cost by team (the pods' `{TEAM_LABEL}` label, else their namespace):",
        "",
        *table(["Team", "Monthly cost"], by_team, "lr"),
    ]


def _count(shares: float | None) -> str:
    """A count of shares, `?` where the node does not say (an inventory may give its idle cost
    alone)."""
    return "?" if shares is None else f"{shares:g}"


def _sharing(node: Resource) -> str:
    """`mig: 1g.10gb×4, 3g.40gb×1`, `time-slicing, 4 per GPU`, `hami, % of memory`."""
    share = node.share
    if share.profile:
        return f"{share.mode}: {share.profile}"
    if share.mode == "hami":
        return "hami, % of memory"
    return f"{share.mode}, {share.per_gpu} per GPU"


def _team(pod: Resource) -> str:
    stated = pod.tags.get(TEAM_LABEL)
    if stated:
        return stated
    parts = pod.id.split("/")  # context/namespace/name
    return parts[-2] if len(parts) >= 3 else "–"


def _cents(value: float | None) -> int:
    return 0 if value is None else round(value * 100)


def _dollars(cents: int) -> str:
    """Whole cents (so the rows add up) as every Markdown amount: `\\$1,434.97` (`money`)."""
    return money(cents / 100, "markdown")
