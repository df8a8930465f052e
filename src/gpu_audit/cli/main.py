"""Command line: parse options, build objects, call one function, render, exit with a named code."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from gpu_audit import __version__
from gpu_audit.cli.history import COMPARISON_OPTIONS, history_group, needs_comparison
from gpu_audit.cli.tools import catalog, estimate, policies
from gpu_audit.collectors.provider import Option
from gpu_audit.collectors.registry import PROVIDERS
from gpu_audit.core.gcpause import one_shot
from gpu_audit.core.redact import redact_urls
from gpu_audit.core.resource import Severity
from gpu_audit.core.results import Change, ScanResult
from gpu_audit.errors import ConfigError, ExitCode, GpuAuditError, one_line
from gpu_audit.report import check_extension, format_for
from gpu_audit.report.escape import escape_unencodable
from gpu_audit.settings import FAIL_ON, Settings, load_settings

F = TypeVar("F", bound=Callable[..., Any])
FORMATS = ("table", "text", "json", "markdown", "sarif", "csv")


ARGV = "gpu_audit.argv"


def exit_code(result: ScanResult, fail_on: str, new_only: bool = False) -> ExitCode:
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
    for index, finding in enumerate(result.findings):
        if not finding.is_open or finding.severity < threshold:
            continue
        if new_only and changes is not None and changes[index].change is not Change.NEW:
            continue
        return True
    return False


class _Group(click.Group):
    """Turns a GpuAuditError anywhere below into one line on stderr and exit code 2."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta.setdefault(ARGV, tuple(args))  # the invocation, for the report header
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GpuAuditError as exc:
            click.echo(f"gpu-audit: error: {redact_urls(str(exc))}", err=True)
            ctx.exit(ExitCode.ERROR)
        except KeyboardInterrupt:  # not 1 ("open findings"): what a shell reports for SIGINT
            click.echo("\ngpu-audit: interrupted", err=True)
            ctx.exit(ExitCode.INTERRUPTED)


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
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpu-audit")
def main() -> None:
    """Keep ML training GPU spend matched to need: audit live fleets and job configs."""


def run() -> None:
    """The `gpu-audit` program: one command per process (see `gcpause.one_shot`), and standard
    streams that escape what their encoding cannot write."""
    one_shot()
    escape_unencodable(sys.stdout, sys.stderr)
    main()


def _provider_flags() -> list[Option]:
    """Every provider's flags once (choices merged); flags several providers share come last."""
    owners: dict[str, list[str]] = {}
    merged: dict[str, Option] = {}
    for name, provider in PROVIDERS.items():
        for option in provider.options:
            owners.setdefault(option.flag, []).append(name)
            known = merged.setdefault(option.flag, option)
            if option.choices:
                choices = tuple(dict.fromkeys([*known.choices, *option.choices]))
                merged[option.flag] = replace(known, choices=choices)
    return sorted(merged.values(), key=lambda o: len(owners[o.flag]) > 1)


def provider_options(func: F) -> F:
    """The `scan` flags the registry's providers declare (no SDK is imported for this)."""
    for option in reversed(_provider_flags()):
        kind: Any = None
        if option.choices:
            kind = click.Choice(option.choices)
        elif option.kind is int:
            low, high = option.bounds or (0, 2**31)
            kind = click.IntRange(int(low), int(high))
        elif option.kind is float:
            kind = click.FloatRange(*(option.bounds or (0.0, float("inf"))))
        func = click.option(
            option.flag,
            option.dest,
            multiple=option.multiple,
            type=kind,
            metavar=option.metavar,
            help=option.help,
        )(func)
    return func


@main.command(short_help="Audit live GPU capacity or a saved inventory.")
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
    type=click.Choice(list(PROVIDERS)),
    help="Scan this cloud live (repeatable).",
)
@provider_options
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
def scan(
    inventories: tuple[str, ...],
    providers: tuple[str, ...],
    now_text: str | None,
    history: str | None,
    **options: Any,
) -> None:
    """Enumerate running GPU capacity (or a saved inventory) and judge it."""
    from gpu_audit.cli.runners import ScanRequest, run_scan

    settings = _settings(options)
    flags = []
    for option in _provider_flags():
        value = options.pop(option.dest)
        if value or (value is not None and not option.multiple):
            flags.append((option.flag, tuple(value) if option.multiple else value))
    request = ScanRequest(
        inventories=inventories,
        providers=tuple(dict.fromkeys(providers)),
        flags=tuple(flags),
        now=now_from(now_text),
        policies=options["policies"],
        config_path=options["config_path"],
        history=history or settings.history,
        baseline=options["baseline"],
        argv=_argv(),
    )
    needs_comparison(options, request.history)
    options["history"] = request.history
    _finish(run_scan(request, settings), options, settings)


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
@output_options
def check(files: tuple[str, ...], excludes: tuple[str, ...], **options: Any) -> None:
    """Lint ML job configs: SkyPilot, Kubernetes, SageMaker, Vertex, Batch, Ray, dstack, AzureML.

    FILES may be files (always read), directories (walked for .yaml/.yml/.json files, honouring
    .gitignore) and quoted globs ('jobs/**/*.yaml').
    """
    from gpu_audit.cli.runners import CheckRequest, run_check

    settings = _settings(options)
    request = CheckRequest(
        files, options["policies"], options["config_path"], options["baseline"], excludes
    )
    needs_comparison(options, None)
    result = run_check(request, settings)
    if not result.scope.files and not result.skipped:
        given = "no files given" if not files else "no job file found in the paths given"
        click.echo(f"gpu-audit: check: {given}: nothing was checked", err=True)
    if os.environ.get("PRE_COMMIT") and not options["output"]:
        # pre-commit may split a very large commit into several runs, each printing a summary.
        noun = "file" if len(files) == 1 else "files"
        click.echo(f"gpu-audit check: this run covers {len(files)} staged {noun}", err=True)
    _finish(result, options, settings)


def _settings(options: dict[str, Any]) -> Settings:
    """The settings file, read (and every error in it raised) before any work starts; so is an
    output path no format writes."""
    for name, path in [*options["reports"], (options["fmt"] or "", options["output"] or "")]:
        check_extension(path, name)
    return load_settings(options["config_path"])


def _argv() -> tuple[str, ...]:
    """The invocation after `gpu-audit`, secrets redacted (the Markdown header's command)."""
    from gpu_audit.report.command import redact_argv

    return redact_argv(click.get_current_context().meta.get(ARGV, ()))


def _write_files(
    result: ScanResult, outputs: list[tuple[str, str]], settings: Settings, options: dict[str, Any]
) -> None:
    """Each (format, path) written atomically, after every path's extension is checked (a
    refused one writes none), each said on stderr unless -q."""
    from functools import partial

    from gpu_audit.report import write_report
    from gpu_audit.report.writer import write_atomic  # tempfile: ~15 ms a hook need not pay

    for name, path in outputs:
        warning = check_extension(path, name)
        if warning:
            click.echo(f"gpu-audit: warning: {one_line(warning)}", err=True)
    scope = result.scope  # a report never replaces a file the run read
    read = [settings.source, options["baseline"], options.get("history")]
    inputs = [*scope.files, *scope.policy_files, *filter(None, read)]
    for name, path in outputs:
        write_atomic(path, partial(write_report, name, result), inputs=inputs)
        if not options["quiet"]:
            click.echo(f"gpu-audit: wrote the {name} report to {one_line(path)}", err=True)


def _finish(result: ScanResult, options: dict[str, Any], settings: Settings) -> None:
    from gpu_audit.core.savings import nothing_scanned, summarize
    from gpu_audit.report import write_report
    from gpu_audit.report.table import summary_line

    result = replace(result, scope=replace(result.scope, argv=_argv()))
    fmt = options["fmt"] or format_for(options["output"], sys.stdout.isatty())
    outputs = [*options["reports"], *([(fmt, options["output"])] if options["output"] else [])]
    if outputs:
        _write_files(result, outputs, settings, options)
    if options["quiet"] and not options["output"]:
        click.echo(summary_line(summarize(result)))
    elif not options["output"]:  # else the report went to its file, and stdout stays empty
        if result.coverage_gaps and fmt in ("table", "text") and not nothing_scanned(result):
            click.echo(incomplete_notice(result))  # before any "No open findings"
        write_report(fmt, result, sys.stdout)
    if options["verbose"]:
        from gpu_audit.report.escape import terminal_safe

        for skipped in result.skipped:
            if not skipped.error:
                where = f"{skipped.path}:{skipped.line}" if skipped.line else skipped.path
                click.echo(
                    f"gpu-audit: skipped: {terminal_safe(where)}: {terminal_safe(skipped.reason)}",
                    err=True,
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


main.add_command(history_group)
main.add_command(estimate)
main.add_command(policies)
main.add_command(catalog)


def incomplete_notice(result: ScanResult) -> str:
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
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigError(f"--now: expected an ISO 8601 time, got '{text}'") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
