"""What the CLI commands do, between parsing options and rendering: sources → audit()."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from gpu_audit.audit import audit
from gpu_audit.core.frozen import record
from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.redact import redact_urls
from gpu_audit.core.resource import Kind, Resource
from gpu_audit.core.results import CoverageGap, ScanResult, Scope, Skipped
from gpu_audit.errors import ConfigError, GpuAuditError, InputError, InputErrors, one_line
from gpu_audit.node_join import join_nodes
from gpu_audit.policy.loader import load_policy
from gpu_audit.settings import Settings

if TYPE_CHECKING:  # `check` reads no provider: the registry is imported by `scan` alone
    from gpu_audit.collectors.interface import Progress
    from gpu_audit.collectors.provider import Provider
    from gpu_audit.collectors.workitems import Shard
    from gpu_audit.core.runs import Sweep
    from gpu_audit.history.sweeps import SweepEstimate

T = TypeVar("T")


@record
class ScanRequest:
    """What `scan` was asked, as typed values (the CLI builds it; nothing here knows click)."""

    inventories: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    flags: tuple[tuple[str, Any], ...] = ()  # (provider flag, value) given on the command line
    now: datetime | None = None
    policies: tuple[str, ...] = ()
    config_path: str | None = None
    history: str | None = None  # record in this database and compare with the previous audit
    baseline: str | None = None  # or compare with this saved JSON report
    shard: Shard | None = None  # scan only this shard's work items (workitems.py)
    run_id: str | None = None  # names the sharded run, so `merge` refuses other runs' shards
    argv: tuple[str, ...] = ()  # the invocation, redacted: recorded with the audit's scope


@record
class CheckRequest:
    """What `check` was asked, as typed values."""

    files: tuple[str, ...] = ()  # files, directories (walked) and globs, as given
    policies: tuple[str, ...] = ()
    config_path: str | None = None
    baseline: str | None = None
    excludes: tuple[str, ...] = ()  # gitwildmatch patterns, beside the settings' `exclude`
    history: str | None = None  # record the check (and each sweep file's bound) in this database


def run_scan(request: ScanRequest, settings: Settings) -> ScanResult:
    """Read the inventories and the selected providers, then judge it all."""
    # keeps collectors.registry off check's start-up
    from gpu_audit.collectors.registry import PROVIDERS

    settings = with_flags(settings, request)
    if request.shard is not None:
        # keeps shards.reports off check's start-up
        from gpu_audit.shards.reports import check_shard_request

        check_shard_request(request.shard, request.providers, request.inventories, request.history)
    if request.history or request.baseline:
        # keeps history.remember off check's start-up
        from gpu_audit.history.remember import preflight

        preflight(request.history, request.baseline)
    policy = load_policy(request.policies or settings.policies)
    if not request.inventories and not request.providers:
        raise ConfigError(
            "nothing to scan: give --inventory FILE or --provider " + "|".join(PROVIDERS)
        )
    resources: list[Resource] = []
    gaps: list[CoverageGap] = []
    captured: list[datetime] = []
    unreadable: list[Skipped] = []
    for path in request.inventories:
        from gpu_audit.collectors.inventory import load_inventory  # a cloud scan reads none

        try:
            inventory = load_inventory(path)
        except InputError as exc:  # judged without it, reported, and the run exits 2
            messages = exc.messages if isinstance(exc, InputErrors) else (str(exc),)
            messages = _job_config(path) or messages
            shown = redact_urls(path)  # a URL given as a path keeps no secret in any report
            unreadable.extend(
                Skipped(path=shown, reason=redact_urls(m), error=True, line=_line_in(m, path))
                for m in messages
            )
            continue
        resources.extend(inventory.resources)
        gaps.extend(inventory.coverage_gaps)
        if inventory.captured_at:
            captured.append(inventory.captured_at)
        del inventory  # `resources` holds them, and lets each go once it is enriched
    scanned: list[Scope] = []
    universe: list[str] = []
    sweeps: list[Sweep] = []
    for name in request.providers:
        scanned.append(
            _read_provider(name, settings, resources, gaps, request.shard, universe, sweeps)
        )
    if sweeps and request.history:  # held to the GPU-hours their files allowed
        # keeps history.remember off check's start-up
        from gpu_audit.history.remember import sweep_ceilings

        sweeps = sweep_ceilings(sweeps, request.history)
    if sweeps:  # finished runs are judged by the runbook's `run` rules
        from gpu_audit.core.runs import sweep_resource  # keeps core.runs off `scan`'s start-up

        resources.extend(sweep_resource(s) for s in sweeps)
    resources = join_nodes(resources)  # a cluster node the cloud also listed is one resource
    if request.now is not None:
        now = request.now
    elif captured and not request.providers:
        now = max(captured)  # a saved snapshot is judged as of its capture time
    else:
        now = datetime.now(UTC)
    scope = Scope(
        command="scan",
        providers=unique([*(r.provider for r in resources), *request.providers]),
        accounts=unique(
            [
                *(a for s in scanned for a in s.accounts),
                *(r.account or "" for r in resources),
                *(g.account or "" for g in gaps),
            ]
        ),
        regions=unique(
            sorted({*(x for s in scanned for x in s.regions), *(r.region or "" for r in resources)})
        ),
        files=tuple(map(redact_urls, request.inventories)),
        argv=request.argv,
    )
    if request.shard is not None:
        from gpu_audit.shards.reports import stamp  # keeps shards.reports off check's start-up

        scope = replace(scope, shard=stamp(request.shard, universe, policy, request.run_id))
    patterns = settings.workload_patterns
    result = audit(
        handed_over(resources),  # at a million resources, the unenriched ones are ~0.8 GB
        policy,
        now,
        scope,
        skipped=unreadable,
        coverage_gaps=gaps,
        workload_patterns=patterns,
        reservation_idle=_reservation_idle(resources, request.history, now),
    )
    if sweeps:
        result = replace(result, sweeps=tuple(sweeps))
    if unreadable:  # an audit missing a whole inventory would read as resolved findings
        return result
    return _compared(result, request.history, request.baseline)


def _reservation_idle(
    resources: list[Resource], history: str | None, now: datetime
) -> dict[tuple[str, str], float] | None:
    """With a history and reservations scanned: how long each has been empty."""
    if not history or not any(r.kind is Kind.RESERVATION for r in resources):
        return None
    from gpu_audit.history.remember import reservation_idle  # sqlite3: only when asked

    return reservation_idle(history, now)


def handed_over(items: list[T]) -> Iterator[T]:
    """The list's items in order, each let go by the list as it is yielded (the list ends
    empty): what the consumer does not keep is freed while it works."""
    items.reverse()
    while items:
        yield items.pop()


def _line_in(message: str, path: str) -> int | None:
    """The line of a `path:line: …` message, so a report's `skipped[].line` keeps it."""
    head, _, rest = message.partition(f"{path}:") if message.startswith(path) else ("", "", "")
    number = rest.split(":", 1)[0]
    return int(number) if not head and number.isdigit() else None


def _compared(
    result: ScanResult, history: str | None, baseline: str | None, check: bool = False
) -> ScanResult:
    """With a history or a baseline: compared with the previous audit (and recorded; a check
    records the bound of each sweep file it read too)."""
    if not history and not baseline:
        return result
    from gpu_audit.history.remember import remember  # sqlite3: only when asked

    found: tuple[SweepEstimate, ...] = ()
    if check and history:
        # keeps history.sweeps off check's start-up
        from gpu_audit.history.sweeps import checked_at, estimates

        found = tuple(estimates(result.resources, checked_at(result.generated_at)))
    return remember(result, history, baseline, found)


def _read_provider(
    name: str,
    settings: Settings,
    resources: list[Resource],
    gaps: list[CoverageGap],
    shard: Shard | None = None,
    universe: list[str] | None = None,
    sweeps: list[Sweep] | None = None,
) -> Scope:
    """One provider's resources and gaps (URLs redacted); no credentials is one gap, not an exit.
    With a shard, only its work items are scanned, and the whole universe is added to `universe`."""
    # keeps collectors.interface off check's start-up
    from gpu_audit.collectors.interface import ProviderUnavailable

    # keeps collectors.registry off check's start-up
    from gpu_audit.collectors.registry import PROVIDERS

    progress = _progress(name) if sys.stderr.isatty() else None
    collector = PROVIDERS[name].create(settings.section(name), progress)
    collector.shard = shard
    try:
        for item in collector.collect():
            if isinstance(item, CoverageGap):
                gaps.append(replace(item, message=redact_urls(item.message)))
            elif isinstance(item, Resource):
                resources.append(item)
            elif sweeps is not None:
                sweeps.append(item)
    except ProviderUnavailable as exc:
        message = str(exc).removeprefix(f"{name}: ")
        gaps.append(
            CoverageGap(
                provider=name, scope="provider", error=exc.code, message=redact_urls(message)
            )
        )
    finally:
        if progress is not None:
            sys.stderr.write("\n")
    if universe is not None:
        universe.extend(collector.work_items())
    return collector.scope()  # every account and region read, GPUs or not


def run_check(request: CheckRequest, settings: Settings) -> ScanResult:
    """`gpu-audit check`: the policy and the named job files (directories expanded, excludes
    applied) audited now, unmatched paths as input errors; checks the history first when one is
    named."""
    from gpu_audit.jobs import load_jobs  # keeps gpu_audit.jobs off a cloud scan's start-up
    from gpu_audit.jobs.discover import expand  # keeps jobs.discover off `scan`'s start-up

    if request.history:
        # keeps history.remember off check's start-up
        from gpu_audit.history.remember import preflight

        preflight(request.history, request.baseline)
    with paused_gc():  # the policy and the files: acyclic trees the collector would walk
        policy = load_policy(request.policies or settings.policies)
        files, unmatched = expand(request.files, (*settings.exclude, *request.excludes))
        loaded = load_jobs(files)
    skipped = (
        *loaded.skipped,
        *(Skipped(path=m.split(": ", 1)[0], reason=m, error=True) for m in unmatched),
    )
    scope = Scope(command="check", providers=(), files=tuple(files))
    now = datetime.now(UTC)
    patterns = settings.workload_patterns
    result = audit(
        loaded.resources, policy, now, scope, skipped=skipped, workload_patterns=patterns
    )
    _warn_unknown_ignores(result)
    if request.history and any(s.error for s in skipped):
        # a check missing a file would read as its findings resolved: said, not recorded
        sys.stderr.write(
            "gpu-audit: warning: a file could not be read, so this check is not recorded in the "
            "history\n"
        )
        return result
    return _compared(result, request.history, request.baseline, check=True)


def _warn_unknown_ignores(result: ScanResult) -> None:
    """One located warning per ignore comment naming a rule the policy does not have."""
    from gpu_audit.jobs.suppress import unknown_ignores  # keeps jobs off a cloud scan's start-up

    tables = {
        r.source.path: {line: dict(rules) for line, rules in r.source.suppressions.items()}
        for r in result.resources
        if r.source.suppressions and r.source.path
    }
    known = {name for rule in result.rules for name in (rule.id, *rule.aliases)}
    for path, line, rule, close in unknown_ignores(tables, known):
        hint = f" (did you mean '{close}'?)" if close else ""
        sys.stderr.write(
            f"gpu-audit: warning: {one_line(f'{path}:{line}')}: ignore comment names unknown "
            f"rule '{one_line(rule)}'{hint}; it suppresses nothing\n"
        )


def with_flags(settings: Settings, request: ScanRequest) -> Settings:
    """Each selected provider's section overlaid by the flags it declares; stray flags refused.

    A flag with choices (say `--service`, declared by several providers with their own choices)
    gives each provider the values it knows; a value no selected provider knows is refused.
    """
    # keeps collectors.registry off check's start-up
    from gpu_audit.collectors.registry import PROVIDERS

    given = dict(request.flags)
    sections = dict(settings.providers)
    used: dict[str, set[Any]] = {flag: set() for flag in given}
    for name in request.providers:
        provider = PROVIDERS[name]
        values: dict[str, Any] = {}
        for option in (o for o in provider.options if o.flag in given):
            value = given[option.flag]
            if option.choices:
                value = tuple(v for v in value if v in option.choices)
                if not value:
                    continue
            values[option.setting] = value
            used[option.flag].update(value if option.multiple else (value,))
        section = replace(sections[name], **values)
        if provider.values is not None:  # a flag's value: the file's were checked when read
            _check_flags(provider, section, given)
        if provider.check is not None:
            provider.check(section)
        sections[name] = section
    for flag, value in given.items():
        stray = [
            v for v in (value if isinstance(value, tuple) else (value,)) if v not in used[flag]
        ]
        if stray:
            owners = [n for n, p in PROVIDERS.items() if _knows(p, flag, stray[0])]
            what = flag if not used[flag] else f"{flag} {stray[0]}"
            raise ConfigError(
                f"{what} applies to "
                + " or ".join(f"--provider {n}" for n in owners)
                + ", which this scan does not read"
            )
    return replace(settings, providers=sections)


def _check_flags(provider: Provider, section: Any, given: dict[str, Any]) -> None:
    """`provider.values` on the section with the flags laid over it; a refused value a flag
    gave is named by its flag (`--timeout nan: ...`), not its setting."""
    assert provider.values is not None
    try:
        provider.values(section)
    except ConfigError as exc:
        setting, _, rest = str(exc).partition(": ")
        for option in provider.options:
            if option.flag in given and setting == f"{provider.name}.{option.setting}":
                raise ConfigError(f"{option.flag} {rest}") from None
        raise


def _knows(provider: Provider, flag: str, value: Any) -> bool:
    return any(o.flag == flag and (not o.choices or value in o.choices) for o in provider.options)


def unique(values: Iterable[str]) -> tuple[str, ...]:
    """The non-empty values, first occurrence kept, in order."""
    return tuple(dict.fromkeys(v for v in values if v))


def _progress(provider: str) -> Callable[[Progress], None]:
    """A one-line status on a terminal's stderr, rewritten in place from the first call on."""

    def show(progress: Progress) -> None:
        text = f"[{provider}] {progress.done}/{progress.total} work items"
        text += f", {progress.found} GPU instances"
        if progress.phase:
            text += f"; {progress.phase}"
        sys.stderr.write(f"\r\x1b[K{text}")
        sys.stderr.flush()

    return show


def _job_config(path: str) -> tuple[str, ...]:
    """One line for a job config given as an inventory (`scan --inventory train.yaml`): it is
    `check`'s to judge; () for anything else, whose own errors are said instead."""
    from gpu_audit.jobs import load_jobs  # keeps gpu_audit.jobs off a cloud scan's start-up

    try:
        loaded = load_jobs([path])
    except GpuAuditError:
        return ()
    if not loaded.resources:
        return ()
    what = loaded.resources[0].provider
    return (
        f"{path}: a {what} job config, not an inventory: judge it with `gpu-audit check {path}`",
    )
