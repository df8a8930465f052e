"""The commands that read no fleet: `estimate`, `policies validate|list` and `catalog lookup`.

`cli/main.py` adds them to the program's group, as it adds `history`.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

import click

from gpu_audit.cli.prices import (
    diff,
    interruptions_option,
    prices_option,
    refresh,
    use_interruptions,
    use_prices,
)
from gpu_audit.core.redact import redact_urls
from gpu_audit.errors import ExitCode, GpuAuditError, one_line
from gpu_audit.report import format_for
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.formats import offered
from gpu_audit.settings import load_settings


@click.command(short_help="What a run costs: job files, or the options for a GPU request.")
@click.argument("files", nargs=-1, metavar="[FILES]...")  # files, directories, globs: as check
@click.option("--gpu", metavar="MODEL:N", help="GPUs per node to price, e.g. A100-80GB:8.")
@click.option("--instance-type", metavar="TYPE", help="Price the GPUs of this instance type.")
@click.option("--hours", type=float, help="Runtime (overrides a job's runtime cap).")
@click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--cloud", type=click.Choice(["aws", "gcp", "azure"]), help="Only this cloud.")
@click.option(
    "--max-usd", type=float, metavar="USD", help="Mark options over this budget (needs --hours)."
)
@click.option("--format", "fmt", type=click.Choice(offered("estimate")), default=None)
@click.option("--output", "-o", metavar="PATH", help="Write the estimate here (atomically).")
@prices_option
@interruptions_option
def estimate(files: tuple[str, ...], **options: Any) -> None:
    """Cost of one run of each job in FILES (files, directories and quoted globs, as `check`
    takes them; on-demand and spot, with the price's source and date), or
    every instance type offering --gpu / --instance-type, cheapest run first. No network.
    Exit 1 when a job's run costs more than the budget it declares, or when the run has no end
    (no runtime cap, no --hours) so its budget is not evaluated.

    \b
    Examples:
      gpu-audit estimate train/finetune.json
      gpu-audit estimate --gpu A100-80GB:8 --hours 12 --max-usd 300
    """
    from gpu_audit.estimate.run import (  # keeps estimate.run off --help
        EstimateRequest,
        run_estimate,
    )

    output = options.pop("output")
    given = options.pop("fmt")
    fmt = format_for("estimate", output, given, sys.stdout.isatty())  # before any work
    inputs = [*files, *_prices(options.pop("prices"), output, files)]
    rates = options.pop("interruption_rates")
    if rates:
        from gpu_audit.core.inputs import refuse_input  # keeps core.inputs off --help

        if output:
            refuse_input(output, [rates])
        inputs.append(rates)
    use_interruptions(rates)

    excludes = load_settings(None).exclude if files else ()  # as `check` skips them
    report = run_estimate(EstimateRequest(files=files, fmt=fmt, excludes=excludes, **options))
    if output:
        from gpu_audit.core.writer import write_atomic  # keeps core.writer off --help

        write_atomic(output, report.text, inputs=inputs)  # never over a file it read
        click.echo(f"gpu-audit: wrote the {fmt} estimate to {one_line(output)}", err=True)
    else:
        click.echo(report.text, nl=False)
    for line in report.unbounded:  # the budget gate cannot pass a run with no end
        click.echo(f"gpu-audit: budget: {one_line(line)}", err=True)
    for error in report.errors:
        click.echo(f"gpu-audit: error: {redact_urls(error)}", err=True)
    gate = report.over_budget > 0 or bool(report.unbounded)
    sys.exit(ExitCode.ERROR if report.errors else ExitCode(int(gate)))


@click.group()
def policies() -> None:
    """Validate and list policies."""


@policies.command("validate", short_help="Validate policy files.")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def policies_validate(files: tuple[str, ...]) -> None:
    """Validate policy files: schema, then fields, operators, GPU classes and ids.

    \b
    Example:
      gpu-audit policies validate team.yaml
    """
    from gpu_audit.policy.loader import load_policy  # keeps policy.loader off --help

    failed = False
    for path in files:
        try:
            policy = load_policy([path])
        except GpuAuditError as exc:  # every problem of the file, one located line each
            for line in getattr(exc, "messages", None) or (str(exc),):
                click.echo(f"gpu-audit: error: {line}", err=True)
            failed = True
            continue
        click.echo(f"{path}: ok ({len(policy.rules)} rules, {len(policy.waivers)} waivers)")
    sys.exit(ExitCode.ERROR if failed else ExitCode.OK)


@policies.command("list")
@click.option("--policy", "paths", multiple=True, metavar="FILE", help="Policy file (repeatable).")
def policies_list(paths: tuple[str, ...]) -> None:
    """List rules: id, severity, title and targets.

    \b
    Example:
      gpu-audit policies list --policy team.yaml
    """
    from gpu_audit.policy.loader import load_policy  # keeps policy.loader off --help
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off --help

    policy = load_policy(list(paths))
    rows = [
        [r.info.id, r.info.severity.label, r.info.title, ",".join(t.value for t in r.info.targets)]
        for r in policy.rules
    ]
    # fits the terminal as every table does: the title is clipped first, never the id
    headers = ["id", "severity", "title", "targets"]
    click.echo(fitted(headers, rows, terminal_width(), keep=("id", "severity")))


def _prices(flag: str | None, output: str | None = None, files: tuple[str, ...] = ()) -> list[str]:
    """--prices, else the settings file's `prices:` (found as scan finds it), laid over the
    catalog; the files read (settings, prices), after `output` is checked against them and
    `files` (before any work)."""
    settings = load_settings(None)
    path = flag or settings.prices
    read = [p for p in (settings.source, path) if p]
    if output:
        from gpu_audit.core.inputs import refuse_input  # keeps core.inputs off --help

        refuse_input(output, [*read, *files])
    use_prices(path, settings.prices_max_age_days, datetime.now(UTC))
    return read


@click.group(short_help="Look up instance types; refresh and compare prices.")
def catalog() -> None:
    """Look up instance types and GPU classes; refresh prices from the clouds' price APIs."""


@catalog.command("lookup", short_help="GPU, memory, class and prices of instance types.")
@click.argument("names", nargs=-1, required=True)
@click.option("--region", help="Price in this region (default: the cloud's reference region).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(offered("catalog lookup")),
    default="table",
    show_default=True,
    help="A table, or JSON for scripts (prices as numbers, with their date and source).",
)
@prices_option
def catalog_lookup(
    names: tuple[str, ...], region: str | None, prices: str | None, fmt: str
) -> None:
    """GPU, count, memory, class and prices of instance types (or GPU names).

    \b
    Examples:
      gpu-audit catalog lookup p4d.24xlarge a2-ultragpu-8g --region us-east-1
      gpu-audit catalog lookup H100
    """
    _prices(prices)
    from gpu_audit.cli.lookup import ended_lines, lookup_rows  # keeps cli.lookup off --help
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off --help

    if fmt == "json":
        import json  # keeps json off --help

        from gpu_audit.cli.lookup import lookup_entries  # keeps cli.lookup off --help

        entries, unknown = lookup_entries(names, region)
        data = {"version": 1, "kind": "catalog-lookup", "items": entries, "unknown": unknown}
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        sys.exit(ExitCode.ERROR if unknown else ExitCode.OK)
    rows, unknown = lookup_rows(names, region)
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
            "source",
        ]
        rows = [
            [*row[:-2], f"as of {row[-2]}: {row[-1]}" if row[-1] != "unpriced" else "-"]
            for row in rows
        ]
        drop = ("class rank", "count", "cloud", "GiB/GPU")  # the GPU, region and prices stay
        click.echo(fitted(headers, rows, terminal_width(), drop, footnotes="source"))
    for line in ended_lines(names):
        click.echo(terminal_safe(line))
    for name in unknown:
        click.echo(f"gpu-audit: {terminal_safe(name)}: not in the catalog", err=True)
    sys.exit(ExitCode.ERROR if unknown else ExitCode.OK)


catalog.add_command(refresh)
catalog.add_command(diff)
