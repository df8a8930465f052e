"""`gpu-audit history list|show|trend|reservations|prune`: read and tend the audit history."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from gpu_audit.errors import ConfigError, one_line
from gpu_audit.report import render
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.formats import offered
from gpu_audit.report.values import MISSING, money
from gpu_audit.settings import load_settings

if TYPE_CHECKING:  # the store's module is imported where a database is opened
    from gpu_audit.history.store import HistoryStore

_DATABASE = click.option(
    "--history",
    "path",
    metavar="PATH",
    help="The history database (default: `history:` in .gpu-audit.yaml).",
)
_CONFIG = click.option(
    "--config", "config_path", metavar="FILE", help="Settings file (default: found upwards)."
)


COMPARISON_OPTIONS = (  # scan's and check's
    click.option(
        "--baseline",
        metavar="REPORT.json",
        help="Compare with this saved JSON report (no database): new, persisting, resolved.",
    ),
    click.option(
        "--fail-on-new",
        is_flag=True,
        help="Exit 1 on any open finding not in the baseline or the last audit.",
    ),
    click.option(
        "--new-only",
        is_flag=True,
        help="--fail-on counts only findings not in the baseline or the last audit.",
    ),
)


def needs_comparison(options: dict[str, Any], history: str | None) -> None:
    """--new-only and --fail-on-new mean nothing without something to compare with."""
    if (options["new_only"] or options["fail_on_new"]) and not (history or options["baseline"]):
        raise ConfigError("--new-only and --fail-on-new need --baseline REPORT.json or --history")


def _open(path: str | None, config: str | None = None) -> HistoryStore:
    from gpu_audit.history.store import HistoryStore  # keeps history.store off check's start-up

    path = path or load_settings(config).history
    if not path:
        raise ConfigError("no history database: give --history PATH or set history: in the config")
    return HistoryStore.open(path, create=False)


@click.group("history", short_help="Recorded audits: list, show, trend, reservations, prune.")
def history_group() -> None:
    """Recorded audits: list them, show one again, the trend, how full each reservation ran,
    prune old ones."""


_LISTED = click.option(
    "--format",
    "fmt",
    type=click.Choice(offered("history list")),  # list, trend and reservations alike
    default="table",
    show_default=True,
    help="A table, or JSON for scripts (amounts as numbers).",
)


def _json(kind: str, key: str, items: list[dict[str, Any]]) -> None:
    import json  # keeps json off check's start-up

    click.echo(json.dumps({"version": 1, "kind": kind, key: items}, indent=2, ensure_ascii=False))


@history_group.command("list", short_help="The audits recorded.")
@_DATABASE
@_CONFIG
@_LISTED
def history_list(path: str | None, config_path: str | None, fmt: str) -> None:
    """Audits: when, scope, counts, spend and savings.

    \b
    Example:
      gpu-audit history list --history audits.db
    """
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off check's start-up

    store = _open(path, config_path)
    if fmt == "json":
        audits = store.audits()
        store.close()
        _json("audits", "audits", [_audit_json(a) for a in audits])
        return
    rows = [
        (
            a.id,
            a.generated_at.strftime("%Y-%m-%d %H:%M"),
            " ".join(a.scope.providers) or a.scope.command,
            a.resources,
            a.findings_open,
            _count(a.new),
            _count(a.persisting),
            _count(a.resolved),
            *_monthly(a.scope.command, a),
        )
        for a in store.audits()
    ]
    store.close()
    headers = ["id", "when (UTC)", "scope", "resources", "open", "new", "persisting"]
    headers += ["resolved", "spend/mo", "found/mo", "realised/mo"]  # savings found, realised
    drop = ("persisting", "resolved", "new", "resources")  # spend and savings stay
    click.echo(fitted(headers, [list(map(str, r)) for r in rows], terminal_width(), drop))


@history_group.command("show", short_help="Render a recorded audit again.")
@click.argument("audit_id", type=int)
@_DATABASE
@_CONFIG
@click.option(
    "--format",
    "fmt",
    type=click.Choice(offered("history show")),
    help="Report format (default: the one -o's extension names, else text).",
)
@click.option("--output", "-o", metavar="PATH", help="Write the report here (atomically).")
def history_show(
    audit_id: int, path: str | None, config_path: str | None, fmt: str | None, output: str | None
) -> None:
    """Render a recorded audit again, in any format, with what had changed.

    \b
    Example:
      gpu-audit history show 2 --history audits.db --format markdown -o audit.md
    """
    from gpu_audit.audit import source_hints  # keeps audit off --help
    from gpu_audit.history.load import load_audit  # keeps history.load off check's start-up
    from gpu_audit.report import format_for

    fmt = format_for("history show", output, fmt)  # before any work; text by default
    store = _open(path, config_path)
    try:
        result = load_audit(store, audit_id)
        text = render(fmt, replace(result, hints=source_hints(result.not_evaluated)))
    finally:
        store.close()
    if output:
        from gpu_audit.core.writer import write_atomic  # keeps core.writer off check's start-up

        write_atomic(output, text, inputs=[store.path, *filter(None, [config_path])])
        click.echo(f"gpu-audit: wrote the {fmt} report to {one_line(output)}", err=True)
    else:
        click.echo(text, nl=False)


@history_group.command("trend", short_help="Spend and savings per audit.")
@_DATABASE
@_CONFIG
@click.option("--audit", "audit_id", type=int, help="The trend up to this audit (default: latest).")
@_LISTED
def history_trend(
    path: str | None, config_path: str | None, audit_id: int | None, fmt: str
) -> None:
    """Spend, savings found and savings realised over the audits of one scope.

    \b
    Example:
      gpu-audit history trend --history audits.db --format json
    """
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off check's start-up

    store = _open(path, config_path)
    points = store.trend(audit_id)
    audits = store.audits()
    store.close()
    chosen = [a for a in audits if audit_id is None or a.id == audit_id][-1:]
    command = chosen[0].scope.command if chosen else "scan"
    if fmt == "json":
        _json("trend", "points", [_point_json(p, command) for p in points])
        return
    rows = [
        [
            p.generated_at.strftime("%Y-%m-%d"),
            *_monthly(command, p),
            str(p.findings_open),
        ]
        for p in points
    ]  # the same money as `history list` and the reports: `$600,020`, `$734.38`
    headers = ["audit", "spend/mo", "found/mo", "realised/mo", "open"]  # savings found, realised
    click.echo(fitted(headers, rows, terminal_width()))


def _audit_json(audit: Any) -> dict[str, Any]:
    return {
        "id": audit.id,
        "generated_at": audit.generated_at.isoformat(),
        "command": audit.scope.command,
        "providers": list(audit.scope.providers),
        "resources": audit.resources,
        "findings_open": audit.findings_open,
        "new": audit.new,
        "persisting": audit.persisting,
        "resolved": audit.resolved,
        **_monthly_json(audit.scope.command, audit),
    }


def _point_json(point: Any, command: str) -> dict[str, Any]:
    return {
        "generated_at": point.generated_at.isoformat(),
        **_monthly_json(command, point),
        "findings_open": point.findings_open,
    }


_MONEY = ("monthly_cost_usd", "monthly_savings_usd", "savings_realised_usd")


def _monthly_json(command: str, row: Any) -> dict[str, Any]:
    """Spend, savings found and realised per month; null for a `check` (job files run
    nothing: their savings are per run or per GPU-hour, never a month)."""
    return {key: None if command == "check" else getattr(row, key) for key in _MONEY}


def _monthly(command: str, row: Any) -> list[str]:
    """The monthly amounts of a row; a `check` has none (job files run nothing)."""

    return [money(None if command == "check" else getattr(row, key), "table") for key in _MONEY]


@history_group.command("reservations", short_help="How full each reservation ran.")
@_DATABASE
@_CONFIG
@_LISTED
def history_reservations(path: str | None, config_path: str | None, fmt: str) -> None:
    """Each reservation and Capacity Block per audit: used of total, and the dollars its
    unused instances cost (to its end, at most a month).

    \b
    Example:
      gpu-audit history reservations --history audits.db
    """
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off check's start-up

    store = _open(path, config_path)
    uses = store.reservation_uses()
    audits = len(store.audits()) if not uses else 0
    store.close()
    if fmt == "json":
        _json("reservations", "reservations", [_use_json(u) for u in uses])
        return
    if not uses:  # a history of fleets without one (the demo's): a sentence, not a bare header
        recorded = f"{audits} audit{'' if audits == 1 else 's'} recorded"
        where = terminal_safe(store.path)
        click.echo(f"no reservation or Capacity Block in {where} ({recorded})")
        return
    rows = [
        [
            u.generated_at.strftime("%Y-%m-%d %H:%M"),
            u.provider,
            u.name or u.id,  # fitted() makes every cell terminal-safe
            u.instance_type or "-",
            f"{_count(u.used)}/{_count(u.total)}",
            _full(u.used, u.total),
            money(u.unused_usd, "table"),
        ]
        for u in uses
    ]
    headers = ["audit (UTC)", "provider", "reservation", "type", "used", "full", "unused"]
    click.echo(fitted(headers, rows, terminal_width(), ("type", "provider")))


def _use_json(use: Any) -> dict[str, Any]:
    return {
        "generated_at": use.generated_at.isoformat(),
        "audit_id": use.audit_id,
        "provider": use.provider,
        "id": use.id,
        "name": use.name,
        "type": use.type,
        "instance_type": use.instance_type,
        "zone": use.zone,
        "total": use.total,
        "used": use.used,
        "unused_usd": use.unused_usd,
    }


def _full(used: int | None, total: int | None) -> str:
    return "-" if used is None or not total else f"{round(100 * used / total)}%"


@history_group.command("prune", short_help="Keep the latest N audits.")
@_DATABASE
@_CONFIG
@click.option("--keep", type=click.IntRange(1), required=True, help="Audits to keep per scope.")
def history_prune(path: str | None, config_path: str | None, keep: int) -> None:
    """Delete all but the latest N audits of each scope.

    \b
    Example:
      gpu-audit history prune --history audits.db --keep 8
    """
    store = _open(path, config_path)
    try:
        removed = store.prune(keep)
    finally:
        store.close()
    click.echo(f"pruned {removed} audit{'s' if removed != 1 else ''}; kept the latest {keep}")


def _count(value: int | None) -> str:

    return MISSING["table"] if value is None else str(value)
