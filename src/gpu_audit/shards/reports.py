"""Shard reports: the stamp a `scan --shard K/N` report carries, and reading shards back to merge.

Each shard report is read once (the inventory reader, which reads a JSON report as an inventory),
checked against the first one (run, shard count, universe, policies, prices), and only its
resources, gaps and scope are kept, so `merge` holds one parsed file at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Set
from datetime import UTC, datetime
from typing import Any

from gpu_audit.catalog.basis import price_basis
from gpu_audit.collectors.inventory import Inventory, line_in_file, load_report
from gpu_audit.collectors.workitems import MAX_SHARDS, Shard, shard_of, universe_digest
from gpu_audit.core.canonical import OUT_OF_RANGE, in_utc_range
from gpu_audit.core.frozen import record
from gpu_audit.core.results import CoverageGap, ShardStamp
from gpu_audit.core.runs import Sweep
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError, InputError
from gpu_audit.policy.digest import policy_digest
from gpu_audit.policy.loader import Policy
from gpu_audit.shards.sweeps import read_sweeps

SHARD_GAP = "ShardMissing"
FIRST = 5  # missing shards and unread items named in a gap; the rest are counted


def check_shard_request(
    shard: Shard, providers: Sequence[str], inventories: Sequence[str], history: str | None
) -> None:
    """ConfigError for a `--shard` that cannot split: without `--provider`, with `--inventory`, or
    with `--history` (only merge records a sharded audit)."""
    if not providers or inventories:
        raise ConfigError(
            "--shard splits a live scan's work items: give --provider, not --inventory"
        )
    if history:
        raise ConfigError(
            "--shard with --history: only `gpu-audit merge --history DB` records a sharded audit "
            "(one writer)"
        )


def stamp(shard: Shard, universe: Sequence[str], policy: Policy, run_id: str | None) -> ShardStamp:
    """The stamp a shard's report carries: its index and count, the universe and its digest, the
    policy's digest, the price basis, the run id and the work items it held."""
    keys = tuple(sorted(set(universe)))
    return ShardStamp(
        index=shard.index,
        count=shard.count,
        universe_digest=universe_digest(keys),
        universe=keys,
        policy_digest=policy_digest(policy),
        price_basis=price_basis(),
        run_id=run_id,
        held=tuple(key for key in keys if shard.holds(key)),
    )


@record
class ShardReport:
    path: str
    stamp: ShardStamp
    inventory: Inventory
    scope: Mapping[str, Any]
    generated_at: datetime | None  # when the shard was judged (UTC)
    sweeps: tuple[Sweep, ...] = ()  # finished runs the shard read back (`scan --since`)


def read_shards(paths: Sequence[str]) -> Iterator[ShardReport]:
    """Each shard report in turn, checked against the first; a stranger is one ConfigError."""
    first: ShardReport | None = None
    seen: dict[int, str] = {}
    for path in paths:
        inventory, header = load_report(path)
        raw = header.get("scope")
        scope: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        report = ShardReport(
            path,
            _stamp(path, scope),
            inventory,
            scope,
            _judged(path, header),
            tuple(read_sweeps(path, header.get("sweeps"))),
        )
        index = report.stamp.index
        if index in seen:
            raise ConfigError(f"merge: {path}: shard {index} given twice (also {seen[index]})")
        seen[index] = path
        first = first or report
        _same_run(first, report)
        yield report


def _stamp(path: str, scope: Mapping[str, Any]) -> ShardStamp:
    raw = scope.get("shard")
    if not isinstance(raw, dict):
        line = line_in_file(path, ("scope", "shard"))
        raise InputError(
            f"{path}:{line}: not a shard report (no scope.shard): scan with --shard K/N"
        )

    def text(key: str) -> str:
        value = raw.get(key)
        if not isinstance(value, str) or not value:
            raise _bad(path, raw, key, f"expected text, got {_shown(value)}")
        return value

    index, count = _int(path, raw, "index"), _int(path, raw, "count")
    universe = raw.get("universe")
    if not isinstance(universe, list) or not all(isinstance(k, str) for k in universe):
        raise _bad(path, raw, "universe", "expected a list of work items (text)")
    run_id = raw.get("run_id")
    if run_id is not None and not isinstance(run_id, str):
        raise _bad(path, raw, "run_id", f"expected text, got {_shown(run_id)}")
    held = raw.get("held")
    if held is not None:
        if not isinstance(held, list) or not all(isinstance(k, str) for k in held):
            raise _bad(path, raw, "held", "expected a list of work items (text)")
        known = set(universe)
        stray = next((k for k in held if k not in known), None)
        if stray is not None:
            raise _bad(path, raw, "held", f"{_shown(stray)} is not in the universe")
    stamp = ShardStamp(
        index=index,
        count=count,
        universe_digest=text("universe_digest"),
        universe=tuple(universe),
        policy_digest=text("policy_digest"),
        price_basis=text("price_basis"),
        run_id=run_id,
        held=tuple(held) if held is not None else None,
    )
    if not 1 <= stamp.index <= stamp.count:
        raise _bad(path, raw, "index", f"{stamp.index} is not in 1..{stamp.count}")
    if universe_digest(stamp.universe) != stamp.universe_digest:
        raise _bad(path, raw, "universe", "does not match universe_digest")
    return stamp


def _bad(path: str, raw: Mapping[str, Any], key: str, what: str) -> InputError:
    line = line_in_file(path, ("scope", "shard", key))
    return InputError(f"{path}:{line}: scope.shard.{key}: {what}")


def _shown(value: Any) -> str:
    return "nothing" if value is None else printable(repr(value), 80)


def _int(path: str, raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_SHARDS:
        raise _bad(path, raw, key, f"expected a shard number 1..{MAX_SHARDS}, got {_shown(value)}")
    return value


def _judged(path: str, header: Mapping[str, Any]) -> datetime | None:
    """The shard's judging time (`generated_at`), in UTC; None when the report has none."""
    value = header.get("generated_at")
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
    except (AttributeError, TypeError, ValueError):
        when = None
    if when is None or not in_utc_range(when):
        said = "expected a time" if when is None else OUT_OF_RANGE
        raise InputError(
            f"{path}:{line_in_file(path, ('generated_at',))}: generated_at: {said}, "
            f"got {_shown(value)}"
        )
    return when


def _same_run(first: ShardReport, other: ShardReport) -> None:
    a, b = first.stamp, other.stamp
    checks = (
        ("run", a.run_id, b.run_id),
        ("shard count", a.count, b.count),
        ("universe", a.universe_digest, b.universe_digest),
        ("policies", a.policy_digest, b.policy_digest),
        ("price basis", a.price_basis, b.price_basis),
    )
    for what, mine, theirs in checks:
        if mine != theirs:
            raise ConfigError(
                f"merge: {other.path} and {first.path} are shards of different runs: "
                f"{what} {printable(theirs, 200)} vs {printable(mine, 200)}"
            )


def check_merger(first: ShardReport, policy_digest: str, price_basis: str) -> None:
    """The merge judges with its own policies and prices: they must be the shards'."""
    if policy_digest != first.stamp.policy_digest:
        raise ConfigError(
            f"merge: the policies differ from those {first.path} was judged with "
            f"({policy_digest} vs {printable(first.stamp.policy_digest, 80)}): "
            "pass the scan's --policy files"
        )
    if price_basis != first.stamp.price_basis:
        raise ConfigError(
            f"merge: the price basis differs from {first.path}'s "
            f"({printable(price_basis, 200)} vs {printable(first.stamp.price_basis, 200)}): "
            "merge with the scan's prices"
        )


def missing_gaps(
    stamp: ShardStamp, present: set[int], held: Set[str] | None = None
) -> list[CoverageGap]:
    """The missing shards, said in a few gaps: one per provider whose work items they held (one
    `gpu-audit` gap when they held none), each with how many shards are missing, the first few
    named, and how many of the provider's items were not read, the first few named.

    `held`: the keys the present shards held (their stamps'); the items not read are the rest of
    the universe, found in time linear in the items. None (a shard from an earlier gpu-audit,
    without `held`): each item's shard is hashed again, items × shards hashes."""
    missing = [index for index in range(1, stamp.count + 1) if index not in present]
    if not missing:
        return []
    if held is not None:
        unread = [key for key in stamp.universe if key not in held]
    else:
        lost = set(missing)
        unread = [key for key in stamp.universe if shard_of(key, stamp.count) in lost]
    by_provider: dict[str, list[str]] = {}
    for key in unread:
        by_provider.setdefault(key.split(":", 1)[0], []).append(key)
    if len(missing) == 1:
        label = f"shard {missing[0]}/{stamp.count}"
        said = f"{label}: report missing"
    else:
        label = f"{len(missing):,} of {stamp.count:,} shards"
        said = f"{label} missing: {_first([f'{i}/{stamp.count}' for i in missing])}"
    if not by_provider:
        return [CoverageGap(provider="gpu-audit", scope=label, error=SHARD_GAP, message=said)]
    gaps = []
    for provider, keys in sorted(by_provider.items()):
        noun = "work item" if len(keys) == 1 else "work items"
        message = f"{said}; {len(keys):,} {noun} not read: {_first(keys)}"
        gaps.append(CoverageGap(provider=provider, scope=label, error=SHARD_GAP, message=message))
    return gaps


def _first(names: Sequence[str]) -> str:
    """The first few names, each clipped, and how many more."""
    shown = ", ".join(printable(name, 80) for name in names[:FIRST])
    more = len(names) - FIRST
    return f"{shown} and {more:,} more" if more > 0 else shown
