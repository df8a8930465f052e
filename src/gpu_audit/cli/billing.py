"""`gpu-audit billing`: the period's GPU spend from FOCUS billing exports, judged and reported."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import click

from gpu_audit.cli.main import now_from
from gpu_audit.core.resource import Severity
from gpu_audit.errors import ConfigError, ExitCode, one_line
from gpu_audit.report import format_for
from gpu_audit.report.formats import offered
from gpu_audit.settings import load_settings

FAIL_ON = ("none", "info", "low", "medium", "high", "critical")
ENGINES = ("duckdb", "athena", "bigquery")

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpu_audit.billing.model import BilledGroup
    from gpu_audit.billing.period import Period
    from gpu_audit.billing.report import BillingReport


@click.command(short_help="The period's GPU spend from FOCUS billing exports, judged.")
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option("--period", metavar="2026-Q3", help="A quarter (2026-Q3) or a month (2026-08).")
@click.option("--from", "start", metavar="DATE", help="First day (with --to), not --period.")
@click.option("--to", "end", metavar="DATE", help="Last day, included (with --from).")
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="KEY",
    help="A tag to break spend down by (repeatable; default: team, project, owner).",
)
@click.option(
    "--policy",
    "policies",
    multiple=True,
    metavar="FILE",
    help="Policy file(s) (default: `policies:` in .gpu-audit.yaml, else the runbook pack).",
)
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    help="Settings file (default: .gpu-audit.yaml found upwards): its policies and waivers.",
)
@click.option(
    "--history",
    metavar="PATH",
    help="Join with this scan history (what no scan saw, what became of its findings); keep "
    "each export file read and each forecast there, so the next run reads only new files.",
)
@click.option(
    "--write-prices",
    metavar="FILE",
    help="Write the billed effective rates as a price file for --prices.",
)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="duckdb",
    show_default=True,
    help="Where the query runs: DuckDB on PATHs, or Athena/BigQuery on --table.",
)
@click.option("--table", metavar="NAME", help="Athena db.table or BigQuery project.dataset.table.")
@click.option("--athena-workgroup", metavar="NAME", help="Athena workgroup (default: primary).")
@click.option(
    "--athena-output", metavar="S3-URI", help="Athena result location, if the workgroup sets none."
)
@click.option("--bigquery-project", metavar="ID", help="The project BigQuery runs the job in.")
@click.option(
    "--sql", "show_sql", is_flag=True, help="Print the query for --engine and exit (run nothing)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(offered("billing")),
    help="Output format (default: from the --output extension, else table on a terminal and "
    "JSON otherwise).",
)
@click.option("--output", "-o", metavar="FILE", help="Write the report to FILE (atomically).")
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="none",
    show_default=True,
    help="Exit 1 on open findings at or above this severity.",
)
@click.option("--now", "now_text", metavar="ISO-TIME", help="The report's time (default: now).")
@click.option(
    "--full",
    is_flag=True,
    help="With --history: read every export file again, not only the new or changed ones.",
)
def billing(
    paths: tuple[str, ...],
    period: str | None,
    start: str | None,
    end: str | None,
    tags: tuple[str, ...],
    policies: tuple[str, ...],
    config_path: str | None,
    history: str | None,
    write_prices: str | None,
    engine: str,
    table: str | None,
    athena_workgroup: str | None,
    athena_output: str | None,
    bigquery_project: str | None,
    show_sql: bool,
    fmt: str | None,
    output: str | None,
    fail_on: str,
    now_text: str | None,
    full: bool,
) -> None:
    """Read each PATH (a local copy of one cloud's FOCUS export folder: AWS Data Exports,
    Azure FocusCost, or GCP's FOCUS table written as Parquet) and report the period's GPU
    spend, GPU-hours, capacity mix, tags and unused reservations, with findings from the bill.

    \b
    Examples:
    gpu-audit billing exports/aws exports/azure exports/gcp --period 2026-Q3
    gpu-audit billing exports/aws --period 2026-08 --format markdown -o aug-bill.md
    gpu-audit billing exports/aws --period 2026-Q3 --history audits.db --write-prices billed.json
    gpu-audit billing --engine athena --table focus_db.aws_focus --period 2026-Q3
    """
    from gpu_audit.billing import report as run  # keeps billing.report off --help
    from gpu_audit.billing.period import parse_period  # keeps billing.period off --help

    fmt = _format(fmt, output)  # before any work: `-o bill.md` is Markdown, `-o bill.sarif` no
    when = parse_period(period, start, end)
    keys = tags or run.DEFAULT_TAGS
    if engine == "duckdb" and (table or not paths):
        raise ConfigError(
            "give the export folders as PATH... (--table is for --engine athena|bigquery)"
        )
    if engine != "duckdb" and (paths or not table):
        raise ConfigError(f"--engine {engine} reads --table NAME, not PATH arguments")
    from gpu_audit.billing.extras import require  # keeps billing.extras off --help

    require(engine, run=not show_sql)  # --sql runs nothing: no Athena or BigQuery client
    if full and not (history and engine == "duckdb"):
        raise ConfigError("--full re-reads the files a --history keeps: give --history DB")
    if show_sql:
        click.echo(_sql(engine, table, paths, when, keys))
        return
    now = now_from(now_text) or datetime.now(UTC)
    from gpu_audit.policy.loader import load_policy, policy_path  # keeps policy.loader off --help

    settings = load_settings(config_path)  # the team's policies and waivers, as scan and check
    named = [policy_path(name) for name in policies or settings.policies]  # `runbook` by name
    policy = load_policy(named or None)
    # Nothing this run reads is replaced: the export folders, the policies, the history
    folders = [path for path in paths if "://" not in path]
    kept = [history, f"{history}.days"] if history else []  # billing/daycache.py
    inputs = [*policy.files, *kept, *filter(None, [settings.source])]
    _refuse_outputs(output, write_prices, inputs, folders)
    daily = None
    reading = None
    if engine == "duckdb":
        summary, groups, daily, reading = run.read_daily(paths, when, keys, history, now, full)
    else:
        where = {
            "workgroup": athena_workgroup,
            "output": athena_output,
            "project": bigquery_project,
        }
        summary, groups, daily = run.read_remote(engine, table or "", when, keys, where)
    report = run.judge(summary, groups, policy, now, history, engine, daily, reading)
    if history and engine == "duckdb":
        # keeps billing.incremental off --help
        from gpu_audit.billing.incremental import past_forecasts, remember_forecast

        report = replace(report, past_forecasts=past_forecasts(history, when))
        remember_forecast(history, report)
    _write(report, groups, when, now, fmt, output, write_prices, (inputs, folders))
    sys.exit(_exit_code(report, fail_on))


def _sql(
    engine: str, table: str | None, paths: tuple[str, ...], when: Period, keys: tuple[str, ...]
) -> str:
    from gpu_audit.billing.report import gpu_types, query_keys  # keeps billing.report off --help

    keys = query_keys(keys)

    if engine == "duckdb":
        from gpu_audit.billing import duck  # keeps billing.duck off --help
        from gpu_audit.billing.exports import discover  # keeps billing.exports off --help
        from gpu_audit.billing.query import (  # keeps billing.query off --help
            aggregate,
            summed_first,
        )

        conn = duck.connect()
        exports = [discover(path, duck.file_system(conn), when) for path in paths]
        found = [summed_first(s, when, keys) for s in duck.sources(conn, exports)]
        return aggregate(found, when, keys, gpu_types())  # as `duck.run` runs it
    from gpu_audit.billing.remote import remote_sql  # keeps billing.remote off --help

    return remote_sql(engine, table or "", when, keys, gpu_types())


def _write(
    report: BillingReport,
    groups: Sequence[BilledGroup],
    when: Period,
    now: datetime,
    fmt: str,
    output: str | None,
    write_prices: str | None,
    read: tuple[list[str], list[str]],
) -> None:
    from gpu_audit.billing.render import RENDERERS  # keeps billing.render off --help
    from gpu_audit.core.writer import write_atomic  # keeps core.writer off --help

    if write_prices:
        from gpu_audit.billing.rates import billed_rates  # keeps billing.rates off --help
        from gpu_audit.prices.pricefile import dumps, readable  # keeps prices.pricefile off --help

        prices, refused = readable(billed_rates(groups, when, now))
        for problem in refused:  # a rate `--prices` would refuse (over $10,000/hour, say)
            click.echo(
                f"gpu-audit: warning: --write-prices: left out {one_line(problem)}", err=True
            )
        write_atomic(write_prices, dumps(prices), *read)
    text = RENDERERS[fmt](report)
    if output:
        write_atomic(output, text, *read)
        shown = one_line(output)
        click.echo(f"gpu-audit: wrote the {fmt} billing report to {shown}", err=True)
    else:
        click.echo(text, nl=False)


def _format(given: str | None, output: str | None) -> str:
    """The format `--format` names, else the one `-o`'s extension names (`format_for`, as
    every command reads it); else table on a terminal, JSON otherwise."""
    return format_for("billing", output, given, sys.stdout.isatty() and not output, "json")


def _refuse_outputs(
    output: str | None, write_prices: str | None, inputs: list[str], folders: list[str]
) -> None:
    from gpu_audit.core.inputs import refuse_input  # keeps core.inputs off --help

    for path in (output, write_prices):
        if path:
            refuse_input(path, inputs, folders)
    if output and write_prices and os.path.realpath(output) == os.path.realpath(write_prices):
        raise ConfigError(f"{output}: -o and --write-prices name the same file; give two")


def _exit_code(report: BillingReport, fail_on: str) -> ExitCode:
    if fail_on == "none":
        return ExitCode.OK
    threshold = Severity.parse(fail_on)
    failing = any(not f.severity < threshold for f in report.open_findings)
    return ExitCode.FINDINGS if failing else ExitCode.OK
