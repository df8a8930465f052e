"""Command line: parse options, build objects, call one function, render, exit with a named code."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any, TypeVar

import click

from gpu_audit import __version__
from gpu_audit.errors import ConfigError, GpuAuditError
from gpu_audit.history.cli import history_group
from gpu_audit.model import ScanResult, Severity

F = TypeVar("F", bound=Callable[..., Any])
FORMATS = ("table", "text", "json", "markdown", "sarif", "csv")
FAIL_ON = ("info", "low", "medium", "high", "critical", "none")


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1  # open findings at or above --fail-on
    ERROR = 2  # usage, policy or input error (other inputs are still checked and reported)
    INCOMPLETE = 3  # a region, account or project could not be read; takes precedence over 1


def exit_code(result: ScanResult, fail_on: str, new_only: bool = False) -> ExitCode:
    if result.input_errors:
        return ExitCode.ERROR
    if result.partial:
        return ExitCode.INCOMPLETE
    if fail_on != "none":
        from gpu_audit.history.remember import failing

        if failing(result, Severity.parse(fail_on), new_only):
            return ExitCode.FINDINGS
    return ExitCode.OK


class _Group(click.Group):
    """Turns a GpuAuditError anywhere below into one line on stderr and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GpuAuditError as exc:
            click.echo(f"gpu-audit: error: {exc}", err=True)
            ctx.exit(ExitCode.ERROR)


def _report_spec(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> list[Any]:
    specs = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not path or name not in FORMATS:
            raise click.BadParameter(
                f"expected FORMAT=PATH with FORMAT one of {', '.join(FORMATS)}"
            )
        specs.append((name, path))
    return specs


def output_options(func: F) -> F:
    """Options shared by `scan` and `check`: policies, formats, outputs, failure threshold."""
    options = [
        click.option(
            "--policy",
            "policies",
            multiple=True,
            metavar="FILE",
            help="Policy file (repeatable; layered in order). Default: the runbook pack.",
        ),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(FORMATS),
            default=None,
            help="Output format (default: table on a terminal, text otherwise).",
        ),
        click.option("--output", "-o", metavar="PATH", help="Write the report here (atomically)."),
        click.option(
            "--report",
            "reports",
            multiple=True,
            metavar="FORMAT=PATH",
            callback=_report_spec,
            help="Also write FORMAT to PATH (repeatable).",
        ),
        click.option(
            "--fail-on",
            type=click.Choice(FAIL_ON),
            default=None,
            help="Exit 1 on open findings at or above this severity (default: high).",
        ),
        click.option(
            "--config",
            "config_path",
            metavar="FILE",
            help="Settings file (default: .gpu-audit.yaml found upwards).",
        ),
        click.option("-q", "--quiet", is_flag=True, help="Print the summary line only."),
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
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpu-audit")
def main() -> None:
    """Keep ML training GPU spend matched to need: audit live fleets and job configs."""


@main.command()
@click.option(
    "--inventory",
    "inventories",
    multiple=True,
    metavar="FILE",
    help="A saved inventory (JSON/YAML) to judge instead of, or besides, a live scan.",
)
@click.option(
    "--provider",
    "providers",
    multiple=True,
    type=click.Choice(["aws", "gcp"]),
    help="Scan this cloud live (repeatable).",
)
@click.option("--region", "regions", multiple=True, help="AWS region (default: every enabled one).")
@click.option("--profile", "profiles", multiple=True, help="AWS profile (repeatable).")
@click.option(
    "--role-arn",
    "role_arns",
    multiple=True,
    help="Role to assume (repeatable; may contain {account}).",
)
@click.option("--account", "accounts", multiple=True, help="Account id filling {account}.")
@click.option("--org-role", help="Role name assumed in every AWS Organizations account.")
@click.option("--project", "projects", multiple=True, help="GCP project (repeatable).")
@click.option("--concurrency", type=click.IntRange(1, 64), help="Parallel work items.")
@click.option("--window", type=click.FloatRange(1, 24 * 90), help="Utilization window, hours.")
@click.option(
    "--now",
    "now_text",
    metavar="ISO-TIME",
    help="Judge as of this time (reproducible reports); default: now, or the inventory's.",
)
@click.option(
    "--history",
    metavar="PATH",
    help="Record the audit in this SQLite database and compare with the previous one.",
)
@output_options
def scan(**options: Any) -> None:
    """Enumerate running GPU capacity (or a saved inventory) and judge it."""
    from gpu_audit.commands import run_scan

    result, settings = run_scan(options)
    _finish(result, options, settings.fail_on, options["history"] or settings.history)


@main.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@output_options
def check(files: tuple[str, ...], **options: Any) -> None:
    """Lint ML job configs (SkyPilot, Kubernetes, SageMaker, Vertex, Batch, Ray, dstack)."""
    from gpu_audit.commands import run_check

    result, settings = run_check(files, options)
    _finish(result, options, settings.fail_on, None)


def _finish(
    result: ScanResult, options: dict[str, Any], configured: str | None, history: str | None
) -> None:
    from gpu_audit.report import render
    from gpu_audit.report.summary import summarize
    from gpu_audit.report.table import summary_line

    new_only = options["new_only"] or options["fail_on_new"]
    if new_only and not (history or options["baseline"]):
        raise ConfigError("--new-only and --fail-on-new need --baseline REPORT.json or --history")
    if history or options["baseline"]:
        from gpu_audit.history.remember import remember

        result = remember(result, history, options["baseline"])
    fmt = options["fmt"] or ("table" if sys.stdout.isatty() else "text")
    if options["reports"] or options["output"]:
        from gpu_audit.report.writer import write_atomic  # tempfile: ~15 ms a hook need not pay

        for name, path in options["reports"]:
            write_atomic(path, render(name, result))
    if options["output"]:
        write_atomic(options["output"], render(fmt, result))
    elif options["quiet"]:
        click.echo(summary_line(summarize(result)))
    else:
        click.echo(render(fmt, result), nl=False)
    for skipped in result.input_errors:
        click.echo(f"gpu-audit: error: {skipped.reason}", err=True)
    for gap in result.coverage_gaps:
        click.echo(f"gpu-audit: incomplete: {gap.location}: {gap.error}: {gap.message}", err=True)
    default = "info" if options["fail_on_new"] else "high"
    fail_on = options["fail_on"] or (None if options["fail_on_new"] else configured) or default
    if fail_on not in FAIL_ON:
        raise ConfigError(f"fail_on: '{fail_on}' is not one of {', '.join(FAIL_ON)}")
    sys.exit(exit_code(result, fail_on, new_only))


main.add_command(history_group)


@main.group()
def policies() -> None:
    """Validate and list policies."""


@policies.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def policies_validate(files: tuple[str, ...]) -> None:
    """Validate policy files: schema, then fields, operators, GPU classes and ids."""
    from gpu_audit.policy.loader import load_policy

    failed = False
    for path in files:
        try:
            policy = load_policy([path])
        except GpuAuditError as exc:
            click.echo(f"{exc}", err=True)
            failed = True
            continue
        click.echo(f"{path}: ok ({len(policy.rules)} rules, {len(policy.waivers)} waivers)")
    sys.exit(ExitCode.ERROR if failed else ExitCode.OK)


@policies.command("list")
@click.option("--policy", "paths", multiple=True, metavar="FILE", help="Policy file (repeatable).")
def policies_list(paths: tuple[str, ...]) -> None:
    """List rules: id, severity, title and targets."""
    from tabulate import tabulate

    from gpu_audit.policy.loader import load_policy

    policy = load_policy(list(paths))
    rows = [
        (r.info.id, r.info.severity.label, r.info.title, ",".join(t.value for t in r.info.targets))
        for r in policy.rules
    ]
    click.echo(tabulate(rows, headers=["id", "severity", "title", "targets"]))


@main.group()
def catalog() -> None:
    """Look up instance types and GPU classes."""


@catalog.command("lookup")
@click.argument("names", nargs=-1, required=True)
@click.option("--region", help="Price in this region (default: the cloud's reference region).")
def catalog_lookup(names: tuple[str, ...], region: str | None) -> None:
    """GPU, count, memory, class and prices of instance types (or GPU names)."""
    from gpu_audit.commands import lookup_rows

    rows, unknown = lookup_rows(names, region)
    from tabulate import tabulate

    if rows:
        headers = [
            "type",
            "cloud",
            "GPU",
            "count",
            "GiB/GPU",
            "class rank",
            "region",
            "on-demand $/h",
            "spot $/h",
            "as of",
            "source",
        ]
        click.echo(tabulate(rows, headers=headers, disable_numparse=True))
    for name in unknown:
        click.echo(f"gpu-audit: {name}: not in the catalog", err=True)
    sys.exit(ExitCode.ERROR if unknown else ExitCode.OK)


def now_from(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigError(f"--now: expected an ISO 8601 time, got '{text}'") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))
