"""The bill joined to the scan history: billed GPU resources no scan ever saw (a coverage gap in
the scheduled scan), and what became of the last audit's open findings.

Ids are matched the way both sides write them: the resource's last path segment, lower-case
(`arn:…:instance/i-0abc` and `i-0abc`), and an Azure ARM id whole, lower-case. A GCP bill that
names instances by number where the scan names them by name cannot be matched (docs/billing.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource


@record
class FindingFate:
    rule_id: str
    provider: str
    resource_id: str
    # still billing (to the bill's last day) | billing stopped (before it: resolved on the
    # bill) | not in the bill (no export read names it)
    status: str
    effective_usd: float | None  # billed in the period
    last_charge: datetime | None


@record
class Coverage:
    history: str
    audits: int
    first_scan: datetime | None
    last_scan: datetime | None
    unseen: tuple[Resource, ...]  # billed GPU resources no scan of the history saw
    matched: int  # billed GPU resources a scan saw
    findings: tuple[FindingFate, ...]

    @property
    def unseen_usd(self) -> float:
        """The USD effective cost of the billed resources no scan saw, rounded to the cent (a cost
        not stated counts as 0)."""
        return round(sum(r.billing.effective_usd or 0.0 for r in self.unseen), 2)


def match_key(provider: str, resource_id: str) -> tuple[str, str]:
    """The (cloud, id) a billed resource and a scanned one are matched on: lower-cased, an ARM id
    whole, any other id its last path segment."""
    text = resource_id.strip().lower()
    if provider == "azure" or text.startswith("/subscriptions/"):
        return "azure", text.rstrip("/")
    return provider, text.rstrip("/").rsplit("/", 1)[-1]


def join_history(path: str, billed: Sequence[Resource]) -> Coverage:
    """The billed usage joined to the history at `path`: what no audit saw (costliest first), how
    much was matched, and whether the latest readable audit's open findings still bill (a damaged
    audit is skipped with one line)."""
    # keeps history.damage off `billing`'s start-up
    from gpu_audit.history.damage import DAMAGE, DamagedAudit, describe, skipped

    # keeps history.documents off `billing`'s start-up
    from gpu_audit.history.documents import decode_columns
    from gpu_audit.history.load import load_audit  # keeps history.load off `billing`'s start-up
    from gpu_audit.history.store import HistoryStore  # keeps history.store off `billing`'s start-up

    store = HistoryStore.open(path, create=False)
    try:
        audits = store.audits()
        seen: set[tuple[str, str]] = set()
        with store.errors():
            for audit_id, blob in store.conn.execute(
                "SELECT audit_id, body FROM documents WHERE name = 'resource_index'"
            ).fetchall():
                try:
                    index = decode_columns(blob)
                    seen.update(map(match_key, index["provider"], index["id"]))
                except DAMAGE as exc:  # a damaged audit is left out, said once
                    skipped(describe(path, audit_id, exc))
        latest = None
        for audit in reversed(audits):  # the latest audit that reads back
            try:
                latest = load_audit(store, audit.id)
                break
            except DamagedAudit as exc:
                skipped(str(exc))
    finally:
        store.close()
    open_findings = [
        (f.rule_id, f.resource.provider, f.resource.id)
        for f in (latest.findings if latest else ())
        if f.is_open
    ]
    first_scan = audits[0].generated_at if audits else None
    last_scan = audits[-1].generated_at if audits else None
    usage = [
        r
        for r in billed
        if not (r.billing.unused_usd or 0) and not r.id.startswith(("unused:", "unattributed:"))
    ]
    by_key = {match_key(r.provider, r.id): r for r in usage}
    unseen = tuple(r for r in usage if match_key(r.provider, r.id) not in seen)
    fates = []
    for rule_id, provider, rid in open_findings:
        found = by_key.get(match_key(provider, rid))
        if found is None:
            fates.append(FindingFate(rule_id, provider, rid, "not in the bill", None, None))
            continue
        status = "billing stopped" if found.billing.ended else "still billing"
        fates.append(
            FindingFate(
                rule_id,
                provider,
                rid,
                status,
                found.billing.effective_usd,
                found.billing.last_charge,
            )
        )
    return Coverage(
        history=path,
        audits=len(audits),
        first_scan=first_scan,
        last_scan=last_scan,
        unseen=tuple(sorted(unseen, key=lambda r: -(r.billing.effective_usd or 0))),
        matched=len(usage) - len(unseen),
        findings=tuple(fates),
    )
