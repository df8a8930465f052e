"""What every format says about the comparison with the previous audit (`ScanResult.since`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_audit.core.results import ScanResult
from gpu_audit.report.markdown_text import shown_path
from gpu_audit.report.values import money

if TYPE_CHECKING:  # the text report is on every commit's path; a comparison is not
    from gpu_audit.core.comparison import Comparison, FindingHistory


def iso(moment: Any) -> str | None:
    """A time as ISO 8601 with `Z` for UTC, None for none."""
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def counts_line(since: Comparison, jobs: bool = False) -> str:
    """`since 2026-11-20: 4 new, 22 persisting, 3 resolved (savings realised $24,622/month), …`
    (`jobs`: a check of job files, whose savings are per run: the counts only)."""
    if since.previous_at is None:
        return f"first audit ({since.source}): {since.new} new"
    if jobs:
        return (
            f"since {since.previous_at:%Y-%m-%d}: {since.new} new, {since.persisting} "
            f"persisting, {len(since.resolved)} resolved"
        )
    removed = ""
    ended = sum(1 for r in since.resolved if r.gone_with_resource)
    if ended:
        removed = f"; {ended} of them gone with {'its' if ended == 1 else 'their'} resource"
    if since.removed:
        cost = sum(r.monthly_cost_usd or 0.0 for r in since.removed)
        removed += f", {len(since.removed)} resources removed ({money(cost)}/month)"
    return (
        f"since {since.previous_at:%Y-%m-%d}: {since.new} new, {since.persisting} persisting, "
        f"{len(since.resolved)} resolved (savings realised {money(since.savings_realised_usd)}"
        f"/month){removed}"
    )


def new_findings(result: ScanResult) -> set[int]:
    """`id()` of each finding new since the previous audit (none without a comparison)."""
    if result.since is None:
        return set()
    from gpu_audit.core.comparison import Change  # a comparison was made: already imported

    return {
        id(f)
        for f, c in zip(result.findings, result.since.changes, strict=True)
        if c.change is Change.NEW
    }


def finding_history(change: FindingHistory | None) -> dict[str, Any]:
    """The JSON report's per-finding keys (null without a comparison)."""
    if change is None:
        return {"change": None, "first_seen": None, "audits_open": None}
    return {
        "change": change.change.value,
        "first_seen": iso(change.first_seen),
        "audits_open": change.audits_open,
    }


def summary_block(since: Comparison | None, jobs: bool = False) -> dict[str, Any] | None:
    """The JSON report's `summary.since` (`jobs`: a check's, whose money is never monthly: its
    spend, savings and trend amounts are null, its counts and findings as a scan's)."""
    if since is None:
        return None
    block = _block(since)
    if jobs:
        block.update(monthly_cost_usd=None, monthly_savings_usd=None, savings_realised_usd=None)
        block["trend"] = [{**point, **_NO_MONEY} for point in block["trend"]]
    return block


_NO_MONEY = {"monthly_cost_usd": None, "monthly_savings_usd": None, "savings_realised_usd": None}


def _block(since: Comparison) -> dict[str, Any]:
    block = _base_block(since)
    if since.knob_changes:  # with a history: knobs changed since (docs/knobs.md)
        block["knob_changes"] = [
            {
                "location": c.location,
                "knob": c.knob,
                "then": c.was,
                "now": c.now,
                "busy_then_pct": c.busy_before,
                "busy_now_pct": c.busy_after,
            }
            for c in since.knob_changes
        ]
    return block


def _base_block(since: Comparison) -> dict[str, Any]:
    kind, _, path = since.source.partition(" ")
    return {
        "source": f"{kind} {shown_path(path)}" if path else since.source,  # no machine paths
        "previous_at": iso(since.previous_at),
        "new": since.new,
        "persisting": since.persisting,
        "resolved": len(since.resolved),
        "removed": len(since.removed),
        "monthly_cost_usd": {
            "now": since.trend[-1].monthly_cost_usd,
            "then": since.previous_cost_usd,
        },
        "monthly_savings_usd": {
            "now": since.trend[-1].monthly_savings_usd,
            "then": since.previous_savings_usd,
        },
        "savings_realised_usd": since.savings_realised_usd,
        "resolved_findings": [
            {
                "fingerprint": r.fingerprint,
                "rule_id": r.rule_id,
                "severity": r.severity.label,
                "title": r.title,
                "resource_id": r.resource_id,
                "location": r.location,
                "monthly_savings_usd": r.monthly_savings_usd,
                "first_seen": iso(r.first_seen),
            }
            for r in since.resolved
        ],
        "removed_resources": [
            {
                "resource_id": r.resource_id,
                "provider": r.provider,
                "location": r.location,
                "monthly_cost_usd": r.monthly_cost_usd,
            }
            for r in since.removed
        ],
        "trend": [
            {
                "generated_at": iso(p.generated_at),
                "monthly_cost_usd": p.monthly_cost_usd,
                "monthly_savings_usd": p.monthly_savings_usd,
                "savings_realised_usd": p.savings_realised_usd,
                "findings": p.findings_open,
            }
            for p in since.trend
        ],
    }
