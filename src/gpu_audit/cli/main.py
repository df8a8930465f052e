"""Command line: parse options, build objects, call one function, render, exit with a named code."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

import click

from gpu_audit import __version__
from gpu_audit.cli.group import ARGV, Group
from gpu_audit.cli.history import COMPARISON_OPTIONS, needs_comparison
from gpu_audit.cli.prices import interruptions_option, prices_option, use_interruptions, use_prices
from gpu_audit.core.gcpause import one_shot
from gpu_audit.core.redact import redact_urls
from gpu_audit.core.resource import Severity
from gpu_audit.core.results import ScanResult
from gpu_audit.errors import ConfigError, ExitCode, one_line
from gpu_audit.report import check_extension, format_for, write_report
from gpu_audit.report.escape import escape_unencodable, terminal_safe
from gpu_audit.report.formats import offered
from gpu_audit.settings import FAIL_ON, Settings, load_settings

F = TypeVar("F", bound=Callable[..., Any])
FORMATS = offered("scan")  # the one format list (report/formats.py); check and merge alike


def exit_code(result: ScanResult, fail_on: str, new_only: bool = False) -> ExitCode:
    """The exit code of a run: ERROR for an input error, INCOMPLETE for a partial scan, FINDINGS
    when an open finding (a new one with `new_only`) is at or above `fail_on`, else OK."""
    if result.input_errors:
        return ExitCode.ERROR
    if result.partial:
        return ExitCode.INCOMPLETE
    if fail_on != "none" and _failing(result, Severity.parse(fail_on), new_only):
        return ExitCode.FINDINGS
    return ExitCode.OK


def _failing(result: ScanResult, threshold: Severity, new_only: bool) -> bool:
    """Any open finding at or above `threshold` (with `new_only`: new since the last audit).
    Here, not in history/: every `check` on every commit asks, and needs no sqlite3 for it."""
    changes = result.since.changes if result.since else None
    if new_only and changes is None:
        raise ConfigError("--new-only and --fail-on-new need --baseline REPORT.json or --history")
    if new_only and changes is not None:  # a comparison was made: its module is imported
        from gpu_audit.core.comparison import Change  # keeps core.comparison off check's start-up

        return any(
            f.is_open and not f.severity < threshold and changes[index].change is Change.NEW
            for index, f in enumerate(result.findings)
        )
    return any(f.is_open and not f.severity < threshold for f in result.findings)


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
            help="Output format (default: from the --output extension, else table on a "
            "terminal and text otherwise).",
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
            "-v",
            "--verbose",
            is_flag=True,
            help="Also list each skipped input and why (on stderr).",
        ),
        *COMPARISON_OPTIONS,
        prices_option,
        interruptions_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpu-audit")
@click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    help="On an internal error (exit 4), print the full trace (taken anywhere on the line).",
)
def main() -> None:
    """Keep ML training GPU spend matched to need: audit live fleets and job configs."""


def run() -> None:
    """The `gpu-audit` program: one command per process (see `gcpause.one_shot`), and standard
    streams that escape what their encoding cannot write."""
    one_shot()
    escape_unencodable(sys.stdout, sys.stderr)
    main()


@main.command(short_help="Lint ML job configs before they launch (pre-commit hook).")
@click.argument("files", nargs=-1, type=click.Path())
@click.option(
    "--exclude",
    "excludes",
    multiple=True,
    metavar="GLOB",
    help="Skip files under directories and globs matching this .gitignore-style pattern "
    "(repeatable).",
)
@click.option(
    "--history",
    metavar="PATH",
    help="Record the check in this SQLite database, with each sweep file's GPU-hours bound and "
    "commit (for scan --since), and compare with the previous check.",
)
@output_options
def check(
    files: tuple[str, ...], excludes: tuple[str, ...], history: str | None, **options: Any
) -> None:
    """Lint ML job configs before they launch: spot, GPU class, runtime caps, tags, budgets.

    Formats: AWS Batch, Azure ML, Determined, dstack, Hydra Optuna, Kubernetes, Ray, SageMaker,
    SkyPilot, Slurm, Vertex AI, W&B.

    FILES may be files (always read), directories (walked for .yaml/.yml/.json files, honouring
    .gitignore) and quoted globs ('jobs/**/*.yaml').

    \b
    Examples:
      gpu-audit check jobs/
      gpu-audit check 'jobs/**/*.yaml' --format markdown -o check.md
      gpu-audit check sweeps/ --history audits.db
    """
    from gpu_audit.cli.runners import CheckRequest, run_check  # keeps cli.runners off --help

    settings = run_settings(options)
    request = CheckRequest(
        files, options["policies"], options["config_path"], options["baseline"], excludes, history
    )
    needs_comparison(options, history)
    options["history"] = history
    result = run_check(request, settings)
    if not result.scope.files and not result.skipped:
        given = "no files given" if not files else "no job file found in the paths given"
        click.echo(f"gpu-audit: check: {given}: nothing was checked", err=True)
    if os.environ.get("PRE_COMMIT") and not options["output"]:
        # pre-commit may split a very large commit into several runs, each printing a summary.
        noun = "file" if len(files) == 1 else "files"
        click.echo(f"gpu-audit check: this run covers {len(files)} staged {noun}", err=True)
    finish(result, options, settings)


def run_settings(options: dict[str, Any]) -> Settings:
    """The settings file, read (and every error in it raised) before any work starts, as is an
    output path no format writes; then the price file (--prices, else the file's `prices:`) laid
    over the catalog."""
    outputs = [*options["reports"], (options["fmt"] or "", options["output"] or "")]
    for name, path in outputs:
        check_extension(path, name)
    if any(format_for("scan", path, name or None) == "sarif" for name, path in outputs):
        from gpu_audit.report.pipeline import detect  # keeps report.pipeline off check's start-up

        detect(os.environ)  # a half-set Azure Pipelines identity: refused before any work
    settings = load_settings(options["config_path"])
    flag = options.pop("prices")
    price_file = flag or settings.prices
    from gpu_audit.policy.loader import policy_path  # `check` loads policies anyway

    policies = map(policy_path, options["policies"] or settings.policies)
    rates = options.pop("interruption_rates", None)
    read = (settings.source, price_file, rates, options["baseline"], *policies)
    options["inputs"] = [*options.get("inputs", ()), *filter(None, read)]
    refuse_inputs(options)  # before any work: a run never replaces what it reads
    now = datetime.now(UTC)
    options["prices"] = use_prices(price_file, settings.prices_max_age_days, now)
    options["interruptions"] = use_interruptions(rates)
    return settings


def refuse_inputs(options: dict[str, Any]) -> None:
    """Every output path (`-o`, `--report`) checked against the run's inputs (`options["inputs"]`:
    settings, price file, baseline, policies, and what a command adds: inventories, shards)."""
    from gpu_audit.core.inputs import refuse_input  # keeps core.inputs off --help

    outputs = [path for _, path in options["reports"]]
    for path in [*outputs, *filter(None, [options["output"]])]:
        refuse_input(path, options["inputs"])


def invocation() -> tuple[str, ...]:
    """The invocation after `gpu-audit`, secrets redacted (the Markdown header's command)."""
    from gpu_audit.report.command import redact_argv  # keeps report.command off --help

    return redact_argv(click.get_current_context().meta.get(ARGV, ()))


def _write_files(
    result: ScanResult, outputs: list[tuple[str, str]], options: dict[str, Any]
) -> None:
    """Each (format, path) written atomically, after every path's extension is checked (a
    refused one writes none), each said on stderr unless -q."""
    from gpu_audit.core.writer import write_atomic  # tempfile: ~15 ms a hook need not pay

    for name, path in outputs:
        warning = check_extension(path, name)
        if warning:
            click.echo(f"gpu-audit: warning: {one_line(warning)}", err=True)
    scope = result.scope  # a report never replaces a file the run read
    read = [options.get("history"), *scope.policy_files]  # the policies `extends:` named too
    inputs = [*scope.files, *options["inputs"], *filter(None, read)]
    for name, path in outputs:
        write_atomic(path, partial(write_report, name, result), inputs=inputs)
        if not options["quiet"]:
            click.echo(f"gpu-audit: wrote the {name} report to {one_line(path)}", err=True)


def finish(result: ScanResult, options: dict[str, Any], settings: Settings) -> None:
    """Write the report to its files and stdout (or the `-q` summary line), the incomplete-scan
    notice before a text report, `-v`'s skipped files and the stderr notes, then exit with the run's
    code (`--fail-on`, `--fail-on-new`)."""
    from gpu_audit.core.savings import nothing_scanned, summarize  # keeps core.savings off --help

    scope = replace(result.scope, argv=invocation(), prices=options["prices"])
    result = replace(result, scope=scope)
    command = click.get_current_context().info_name or "scan"
    fmt = format_for(command, options["output"], options["fmt"], sys.stdout.isatty())
    outputs = [*options["reports"], *([(fmt, options["output"])] if options["output"] else [])]
    if outputs:
        _write_files(result, outputs, options)
    if options["quiet"] and not options["output"]:
        from gpu_audit.report.summary import summary_line  # keeps report.summary off --help

        click.echo(summary_line(summarize(result)))
    elif not options["output"]:  # else the report went to its file, and stdout stays empty
        if result.coverage_gaps and fmt in ("table", "text") and not nothing_scanned(result):
            click.echo(incomplete_notice(result))  # before any "No open findings"
        write_report(fmt, result, sys.stdout)
    if options["verbose"]:
        for skipped in result.skipped:
            if not skipped.error:
                where = f"{skipped.path}:{skipped.line}" if skipped.line else skipped.path
                click.echo(
                    f"gpu-audit: skipped: {terminal_safe(where)}: {terminal_safe(skipped.reason)}",
                    err=True,
                )
    if options["prices"]:
        from gpu_audit.report.prices import prices_text  # keeps report.prices off check's start-up

        click.echo(f"gpu-audit: prices: {terminal_safe(prices_text(result))}", err=True)
    if options.get("interruptions"):
        click.echo(
            f"gpu-audit: interruption rates: {terminal_safe(options['interruptions'])}", err=True
        )
    for skipped in result.input_errors:
        click.echo(f"gpu-audit: error: {one_line(redact_urls(skipped.reason))}", err=True)
    in_report = not options["output"] and not options["quiet"] and fmt in ("table", "text")
    for gap in [] if in_report else result.coverage_gaps:  # said once: the report has them
        line = f"{gap.location}: {gap.error}: {gap.message}"
        click.echo(f"gpu-audit: incomplete: {one_line(redact_urls(line))}", err=True)
    new_only = options["new_only"] or options["fail_on_new"]
    configured = None if options["fail_on_new"] else settings.fail_on  # --fail-on-new: any severity
    fail_on = options["fail_on"] or configured or ("info" if options["fail_on_new"] else "high")
    sys.exit(exit_code(result, fail_on, new_only))


def incomplete_notice(result: ScanResult) -> str:
    """The one-line INCOMPLETE SCAN notice: how many coverage gaps, by provider."""
    gaps = result.coverage_gaps
    by_provider = ", ".join(
        f"{p}: {n}" for p, n in sorted(Counter(g.provider for g in gaps).items())
    )
    noun = "coverage gap" if len(gaps) == 1 else "coverage gaps"
    return (
        f"INCOMPLETE SCAN: {len(gaps)} {noun} ({by_provider}); what follows covers only "
        "what could be read (the gaps are listed at the end)."
    )


def now_from(text: str | None) -> datetime | None:
    """The `--now` time (ISO 8601, UTC), None when not given; ConfigError for an unreadable one."""
    if not text:
        return None
    # keeps core.canonical off check's start-up
    from gpu_audit.core.canonical import FieldProblem, parse_time

    try:
        return parse_time("--now", text)
    except FieldProblem as exc:
        raise ConfigError(f"--now: {exc}") from None
