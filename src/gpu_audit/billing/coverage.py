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
    status: str  # still billing | billing stopped | not in the bill
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
        return round(sum(r.billing.effective_usd or 0.0 for r in self.unseen), 2)


def match_key(provider: str, resource_id: str) -> tuple[str, str]:
    text = resource_id.strip().lower()
    if provider == "azure" or text.startswith("/subscriptions/"):
        return "azure", text.rstrip("/")
    return provider, text.rstrip("/").rsplit("/", 1)[-1]


def join_history(path: str, billed: Sequence[Resource]) -> Coverage:
    from gpu_audit.history.store import HistoryStore, parse_iso

    store = HistoryStore.open(path, create=False)
    try:
        with store.errors():
            conn = store.conn
            audits = conn.execute(
                "SELECT COUNT(*), MIN(generated_at), MAX(generated_at) FROM audits"
            ).fetchone()
            seen = {
                match_key(p, i)
                for p, i in conn.execute("SELECT DISTINCT provider, id FROM resources")
            }
            last_id = conn.execute(
                "SELECT id FROM audits ORDER BY generated_at DESC, id DESC LIMIT 1"
            ).fetchone()
            open_findings = (
                conn.execute(
                    "SELECT f.rule_id, r.provider, r.id FROM findings AS f JOIN resources AS r "
                    "ON r.audit_id = f.audit_id AND r.seq = f.resource_seq WHERE f.audit_id = ? "
                    "AND f.waiver IS NULL AND f.suppressed IS NULL ORDER BY f.seq",
                    (last_id[0],),
                ).fetchall()
                if last_id
                else []
            )
    finally:
        store.close()
    last_scan = parse_iso(audits[2]) if audits[2] else None
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
            status, amount, last = "not in the bill", None, None
        else:
            last = found.billing.last_charge
            status = (
                "still billing" if last and last_scan and last > last_scan else "billing stopped"
            )
            amount = found.billing.effective_usd
        fates.append(FindingFate(rule_id, provider, rid, status, amount, last))
    return Coverage(
        history=path,
        audits=int(audits[0]),
        first_scan=parse_iso(audits[1]) if audits[1] else None,
        last_scan=last_scan,
        unseen=tuple(sorted(unseen, key=lambda r: -(r.billing.effective_usd or 0))),
        matched=len(usage) - len(unseen),
        findings=tuple(fates),
    )
