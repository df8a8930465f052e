"""The history store: one SQLite file (WAL), one transaction per recorded audit."""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from gpu_audit.core.comparison import TrendPoint
from gpu_audit.core.fingerprint import resource_key
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import ScanResult, Scope
from gpu_audit.errors import InputError
from gpu_audit.history import past, reservations, rows, schema, sweeps
from gpu_audit.history.compare import TREND_AUDITS, Previous, compare
from gpu_audit.history.damage import DAMAGE, DamagedAudit, decoding, describe, numbers, skipped
from gpu_audit.history.documents import encode_checks, pack, unpack
from gpu_audit.history.rows import iso, waiver_mapping


@record
class AuditRow:
    """One recorded audit, as `history list` shows it."""

    id: int
    generated_at: datetime
    scope: Scope
    resources: int
    findings_open: int
    new: int | None
    persisting: int | None
    resolved: int | None
    monthly_cost_usd: float
    monthly_savings_usd: float
    savings_realised_usd: float


def scope_key(scope: Scope) -> str:
    """Audits compare with the previous audit of the same command and providers."""
    return json.dumps([scope.command, sorted(scope.providers)])


def parse_iso(text: str) -> datetime:
    """A stored ISO 8601 time as a datetime (`Z` read as UTC)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class HistoryStore:
    """Open with `HistoryStore.open(path)`; a bad file raises InputError and is left untouched."""

    def __init__(self, path: str, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    @classmethod
    def open(cls, path: str, create: bool = True) -> HistoryStore:
        """The store at `path`, migrated to the current schema in WAL mode (created unless `create`
        is False); InputError naming the file when it cannot be opened or read."""
        schema.check_file(path, create)
        if not create and not os.path.exists(path):
            raise InputError(f"{path}: history: no such database")
        try:
            conn = sqlite3.connect(path, timeout=60, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(f"{path}: history: cannot open: {exc}") from None
        store = cls(path, conn)
        try:
            with store.errors():
                conn.execute("PRAGMA cache_size = -65536")  # 64 MiB: an audit is written at once
                schema.migrate(path, conn)
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        return store

    def close(self) -> None:
        """Close the SQLite connection."""
        self.conn.close()

    @contextmanager
    def errors(self) -> Iterator[None]:
        """A damaged file surfaces as one located message, never a traceback."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.path}: history: unreadable database: {exc}") from None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE), rolled back on any exception; SQLite errors as
        located InputErrors."""
        with self.errors():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def previous_resources(self, result: ScanResult) -> list[Resource]:
        """Every resource of the latest audit of the same scope before `result`, in full (its
        stored documents); [] when there is none."""
        with self.errors():
            row = self.conn.execute(
                "SELECT resource_documents FROM audits WHERE scope_key = ? AND generated_at < ? "
                "ORDER BY generated_at DESC, id DESC LIMIT 1",
                (scope_key(result.scope), iso(result.generated_at)),
            ).fetchone()
        return unpack(row[0]) if row else []

    def previous(self, result: ScanResult) -> Previous | None:
        """The latest audit of the same scope before `result`, with the trend up to it."""
        with self.errors():
            rows = self.conn.execute(
                "SELECT id, generated_at, monthly_cost_usd, monthly_savings_usd, "
                "savings_realised_usd, findings_open, rules FROM audits "
                "WHERE scope_key = ? AND generated_at < ? ORDER BY generated_at DESC, id DESC "
                "LIMIT ?",
                (scope_key(result.scope), iso(result.generated_at), TREND_AUDITS - 1),
            ).fetchall()
        points, damaged = [], set()
        for r in reversed(rows):
            try:
                points.append(TrendPoint(parse_iso(r[1]), *numbers(r[2:6], "fffi")))
            except DAMAGE as exc:
                skipped(describe(self.path, r[0], exc))
                damaged.add(r[0])
        for audit_id, generated_at, cost, savings, *_, rules in rows:  # newest first
            if audit_id in damaged:
                continue  # said once, above
            try:
                with decoding(self.path, audit_id), self.errors():
                    cost, savings = numbers((cost, savings), "ff")
                    titles = {rule["id"]: rule["title"] for rule in json.loads(rules)}
                    blobs = dict(
                        self.conn.execute(
                            "SELECT name, body FROM documents WHERE audit_id = ? "
                            "AND name IN ('fingerprints', 'finding_index', 'resource_index')",
                            (audit_id,),
                        ).fetchall()
                    )
                    return past.previous(
                        parse_iso(generated_at), cost, savings, tuple(points), titles, blobs
                    )
            except DamagedAudit as exc:  # compared with the audit before it instead
                skipped(str(exc))
        return None

    def record(
        self,
        result: ScanResult,
        keys: Sequence[str] | None = None,
        estimates: Sequence[sweeps.SweepEstimate] = (),
    ) -> int:
        """Record `result` (compared or not) in one transaction; returns the audit id. `keys`:
        the resources' stable ids, when the caller has them already; `estimates`: the sweep
        files a check read."""
        keys = keys if keys is not None else list(map(resource_key, result.resources))
        compared = result.since
        since = compared or compare(result, None, "", keys)
        point = since.trend[-1]  # this audit: spend, savings found, open findings
        seq = {id(r): i for i, r in enumerate(result.resources)}
        documents = pack(result.resources)
        checked = result.not_evaluated
        rules, missing = rows.column("rule_id", checked), rows.column("missing", checked)
        resource_rows = list(map(seq.__getitem__, map(id, rows.column("resource", checked))))
        bodies = rows.documents(result, keys, seq, since.changes)
        bodies["not_evaluated"] = encode_checks(rules, resource_rows, missing)
        with self.transaction() as conn:
            audit_id = conn.execute(
                "INSERT INTO audits (generated_at, recorded_at, scope_key, scope, rules, "
                "coverage_gaps, skipped, waivers, resources, findings_open, not_evaluated, new, "
                "persisting, resolved, removed, monthly_cost_usd, monthly_savings_usd, "
                "savings_realised_usd, resource_documents) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    iso(result.generated_at),
                    iso(datetime.now(UTC)),
                    scope_key(result.scope),
                    json.dumps(asdict(result.scope)),
                    json.dumps([_rule(r) for r in result.rules]),
                    json.dumps([asdict(g) for g in result.coverage_gaps]),
                    json.dumps([asdict(s) for s in result.skipped]),
                    json.dumps([_waiver_status(w) for w in result.waivers], default=str),
                    len(result.resources),
                    point.findings_open,
                    len(checked),
                    compared.new if compared else None,
                    compared.persisting if compared else None,
                    len(compared.resolved) if compared else None,
                    len(compared.removed) if compared else None,
                    point.monthly_cost_usd,
                    point.monthly_savings_usd,
                    compared.savings_realised_usd if compared else 0.0,
                    documents,
                ),
            ).lastrowid
            assert audit_id is not None
            conn.executemany(
                "INSERT INTO documents VALUES (?,?,?)",
                ((audit_id, name, body) for name, body in bodies.items()),
            )
            conn.executemany(
                "INSERT INTO not_evaluated VALUES (?,?,?,?)",
                ((audit_id, *check, n) for check, n in _counted(rules, missing).items()),
            )
            reservations.insert(conn, audit_id, result.resources)
            sweeps.insert(conn, audit_id, estimates)
        return audit_id

    def audits(self) -> list[AuditRow]:
        """Every audit's summary row, oldest first; a damaged row is skipped with one line."""
        with self.errors():
            rows = self.conn.execute(
                "SELECT id, generated_at, scope, resources, findings_open, new, persisting, "
                "resolved, monthly_cost_usd, monthly_savings_usd, savings_realised_usd "
                "FROM audits ORDER BY generated_at, id"
            ).fetchall()
        audits = []
        for r in rows:
            try:
                counted = numbers(r[3:], "iiIIIfff")
                audits.append(AuditRow(r[0], parse_iso(r[1]), _scope(r[2]), *counted))
            except DAMAGE as exc:
                skipped(describe(self.path, r[0], exc))
        return audits

    def trend(self, audit_id: int | None = None) -> list[TrendPoint]:
        """The trend of the scope of `audit_id` (default: the latest audit), oldest first."""
        with self.errors():
            row = self.conn.execute(
                "SELECT scope_key, generated_at FROM audits WHERE (? IS NULL OR id = ?) "
                "ORDER BY generated_at DESC, id DESC LIMIT 1",
                (audit_id, audit_id),
            ).fetchone()
            if row is None:
                return []
            rows = self.conn.execute(
                "SELECT id, generated_at, monthly_cost_usd, monthly_savings_usd, "
                "savings_realised_usd, findings_open FROM audits "
                "WHERE scope_key = ? AND generated_at <= ? ORDER BY generated_at, id",
                row,
            ).fetchall()
        points = []
        for r in rows:
            try:
                points.append(TrendPoint(parse_iso(r[1]), *numbers(r[2:], "fffi")))
            except DAMAGE as exc:
                skipped(describe(self.path, r[0], exc))
        return points

    def reservation_uses(self) -> list[reservations.Use]:
        """Each recorded reservation use across audits; a damaged row is skipped with one line."""
        with self.errors():
            return reservations.uses(
                self.conn, lambda audit, exc: skipped(describe(self.path, audit, exc))
            )

    def reservation_idle(self, now: datetime) -> dict[tuple[str, str], float]:
        """Hours each (provider, id) reservation has stood unused up to `now` (see
        reservations.idle_hours)."""
        with self.errors():
            return reservations.idle_hours(self.conn, now)

    def sweep_estimates(self, names: Iterable[str]) -> dict[tuple[str, str], sweeps.SweepEstimate]:
        """The latest estimate of each (name, format) among the sweep names."""
        with self.errors():
            return sweeps.latest(self.conn, names)

    def prune(self, keep: int) -> int:
        """Delete all but the latest `keep` audits of each scope; returns how many went."""
        with self.transaction() as conn:
            doomed = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY scope_key "
                    "ORDER BY generated_at DESC, id DESC) AS n FROM audits) WHERE n > ?",
                    (keep,),
                )
            ]
            for statement in _PRUNE:
                conn.executemany(statement, ((i,) for i in doomed))
        return len(doomed)


_PRUNE = (
    reservations.PRUNE,
    sweeps.PRUNE,
    "DELETE FROM not_evaluated WHERE audit_id = ?",
    "DELETE FROM documents WHERE audit_id = ?",
    "DELETE FROM audits WHERE id = ?",
)


def _scope(text: str) -> Scope:
    raw: dict[str, Any] = json.loads(text)
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    return Scope(**values)


def _rule(rule: Any) -> dict[str, Any]:
    out = asdict(rule)
    out["severity"] = int(rule.severity)
    out["targets"] = [t.value for t in rule.targets]
    return out


def _waiver_status(status: Any) -> dict[str, Any]:
    return {**waiver_mapping(status.waiver), "state": status.state.value, "matched": status.matched}


def _counted(rules: list[str], missing: list[str]) -> Counter[tuple[str, str]]:
    """Not-evaluated checks per (rule, missing field)."""
    return Counter(zip(rules, missing, strict=True))
