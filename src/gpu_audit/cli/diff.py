"""`gpu-audit diff --base REF [PATHS...]`: what a change to job configs does to a run's cost."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from gpu_audit.diff.git import git_directories, repository
from gpu_audit.diff.render import render
from gpu_audit.report import format_for
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.formats import offered
from gpu_audit.settings import FAIL_ON, load_settings


@click.command("diff", short_help="Cost of a change to job configs, for code review.")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--base", required=True, metavar="REF", help="The revision to compare with (main, HEAD~1)."
)
@click.option("--head", metavar="REF", help="Compare this revision (default: the working tree).")
@click.option(
    "--exclude",
    "excludes",
    multiple=True,
    metavar="GLOB",
    help="Skip files matching this .gitignore-style pattern, as `check` does (repeatable).",
)
@click.option(
    "--policy",
    "policies",
    multiple=True,
    metavar="FILE",
    help="Policy file (repeatable; layered in order). Default: the runbook pack.",
)
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    help="Settings file (default: .gpu-audit.yaml found upwards).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(offered("diff")),
    default=None,
    help="Output format (default: from the --output extension, else table on a terminal and "
    "text otherwise; markdown is the pull-request comment, sarif the new findings for code "
    "scanning).",
)
@click.option("--output", "-o", metavar="PATH", help="Write the report here (atomically).")
@click.option(
    "--fail-on-increase",
    metavar="USD|PCT%",
    help="Exit 1 when a run of the changed jobs costs more by this (500, or 20%).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Exit 1 on a new finding at or above this severity.",
)
@click.option("--fail-on-new", is_flag=True, help="Exit 1 on any new finding.")
def diff_command(paths: tuple[str, ...], **options: Any) -> None:
    """Compare the GPU jobs of PATHS (default: the repository; files, directories and globs, as
    `check` takes them) at --base with the working tree (or --head): per job, the GPUs,
    capacity, runtime cap and cost of one run before and after, and findings new and resolved.
    Reads git itself: no checkout, no network. Exit 1 when a gate trips, 2 on bad input.

    \b
    Examples:
      gpu-audit diff --base main --format markdown -o gpu-cost.md
      gpu-audit diff --base HEAD~1 jobs/ --fail-on-increase 20%
    """
    from gpu_audit.core.inputs import refuse_input  # keeps core.inputs off --help
    from gpu_audit.diff.gate import Increase, verdict  # keeps diff.gate off --help
    from gpu_audit.diff.run import DiffRequest, run_diff  # keeps diff.run off --help
    from gpu_audit.policy.loader import policy_path  # keeps policy.loader off --help

    # before any work: a format diff does not write, or an extension naming another, is refused
    fmt = format_for("diff", options["output"], options["fmt"], sys.stdout.isatty())
    settings = load_settings(options["config_path"])
    policies = map(policy_path, options["policies"] or settings.policies)
    read = [*paths, *filter(None, [settings.source]), *policies]
    folders = git_directories(repository(os.getcwd())) if options["output"] else ()
    if options["output"]:  # before any work: never over a file or the git directory it reads
        refuse_input(options["output"], read, folders)
    threshold = options["fail_on_increase"]
    increase = Increase.parse(threshold) if threshold is not None else None
    if fmt == "sarif":  # before any work: a half-set Azure Pipelines identity is refused
        from gpu_audit.report.pipeline import detect  # keeps report.pipeline off --help

        detect(os.environ)
    request = DiffRequest(
        options["base"], options["head"], paths, options["excludes"], options["policies"]
    )
    result = run_diff(request, settings)
    text = render(result, fmt)
    if options["output"]:
        from gpu_audit.core.writer import write_atomic  # keeps core.writer off --help

        write_atomic(options["output"], text, inputs=(*read, *result.read), folders=folders)
        shown = terminal_safe(options["output"])
        click.echo(f"gpu-audit: wrote the {fmt} report to {shown}", err=True)
    else:
        click.echo(text, nl=False)
    code, reasons = verdict(result, increase, options["fail_on"], options["fail_on_new"])
    for error in result.errors:
        click.echo(f"gpu-audit: error: {terminal_safe(error)}", err=True)
    for reason in reasons:
        click.echo(f"gpu-audit: gate: {terminal_safe(reason)}", err=True)
    sys.exit(code)
