"""`gpu-audit billing`: the period's GPU spend from FOCUS billing exports, judged and reported."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import click

from gpu_audit.cli.main import now_from
from gpu_audit.errors import ExitCode

FORMATS = ("table", "json", "csv", "markdown")
FAIL_ON = ("none", "info", "low", "medium", "high", "critical")


@click.command(short_help="The period's GPU spend from FOCUS billing exports, judged.")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--period", metavar="2026-Q3", help="A quarter (2026-Q3) or a month (2026-08).")
@click.option("--from", "start", metavar="DATE", help="First day (with --to), instead of --period.")
@click.option("--to", "end", metavar="DATE", help="Last day, included (with --from).")
@click.option(
    "--tag", "tags", multiple=True, metavar="KEY",
    help="A tag to break spend down by (repeatable; default: team, project, owner).",
)  # fmt: skip
@click.option(
    "--policy",
    "policies",
    multiple=True,
    metavar="FILE",
    help="Policy file(s) (default: the runbook pack).",
)
@click.option(
    "--history",
    metavar="PATH",
    help="Join with this scan history: what no scan saw, what became of findings.",
)
@click.option(
    "--write-prices",
    metavar="FILE",
    help="Write the billed effective rates as a price file for --prices.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="Output format (default: table on a terminal, else JSON).",
)
@click.option(
    "--output",
    "-o",
    metavar="FILE",
    help="Write the report to FILE (atomically) instead of stdout.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="none",
    show_default=True,
    help="Exit 1 on open findings at or above this severity.",
)
@click.option(
    "--now",
    "now_text",
    metavar="ISO-TIME",
    help="The report's time (reproducible reports); default: now.",
)
def billing(
    paths: tuple[str, ...],
    period: str | None,
    start: str | None,
    end: str | None,
    tags: tuple[str, ...],
    policies: tuple[str, ...],
    history: str | None,
    write_prices: str | None,
    fmt: str | None,
    output: str | None,
    fail_on: str,
    now_text: str | None,
) -> None:
    """Read each PATH (a local copy of one cloud's FOCUS export folder: AWS Data Exports,
    Azure FocusCost, or GCP's FOCUS table written as Parquet) and report the period's GPU
    spend, GPU-hours, capacity mix, tags and unused reservations, with findings from the bill.

    \b
    gpu-audit billing exports/aws exports/azure exports/gcp --period 2026-Q3
    gpu-audit billing exports/aws --period 2026-08 --format markdown -o q3-bill.md
    gpu-audit billing exports/aws --period 2026-Q3 --history audits.db --write-prices billed.json
    """
    from gpu_audit.billing.period import parse_period
    from gpu_audit.billing.render import RENDERERS
    from gpu_audit.billing.report import DEFAULT_TAGS, judge, read_groups
    from gpu_audit.core.resource import Severity
    from gpu_audit.core.writer import write_atomic
    from gpu_audit.policy.loader import load_policy

    when = parse_period(period, start, end)
    now = now_from(now_text) or datetime.now(UTC)
    policy = load_policy(list(policies) or None)
    summary, groups = read_groups(paths, when, tags or DEFAULT_TAGS)
    report = judge(summary, groups, policy, now, history)
    inputs = [*paths, *policies, *([history] if history else [])]
    if write_prices:
        from gpu_audit.billing.rates import billed_rates
        from gpu_audit.prices.pricefile import dumps

        write_atomic(write_prices, dumps(billed_rates(groups, when, now)), inputs=inputs)
    chosen = fmt or ("table" if sys.stdout.isatty() and not output else "json")
    text = RENDERERS[chosen](report)
    if output:
        write_atomic(output, text, inputs=inputs)
        click.echo(f"wrote the {chosen} billing report to {output}", err=True)
    else:
        click.echo(text, nl=False)
    threshold = None if fail_on == "none" else Severity.parse(fail_on)
    failing = threshold is not None and any(
        not f.severity < threshold for f in report.open_findings
    )
    sys.exit(ExitCode.FINDINGS if failing else ExitCode.OK)
