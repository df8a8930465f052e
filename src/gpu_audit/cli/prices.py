"""`catalog refresh` and `catalog diff`, and the `--prices FILE` option of scan, check, estimate
and `catalog lookup` (added to the `catalog` group and the commands in clitools.py and cli.py)."""

from __future__ import annotations

import sys
from datetime import datetime
from functools import partial

import click

from gpu_audit.errors import ConfigError, ExitCode
from gpu_audit.report.escape import terminal_safe
from gpu_audit.report.formats import offered

prices_option = click.option(
    "--prices",
    metavar="FILE",
    help="Lay this price file (from `gpu-audit catalog refresh`) over the bundled prices.",
)


interruptions_option = click.option(
    "--interruption-rates",
    "interruption_rates",
    metavar="FILE",
    help="Lay this interruption-rate file (gpu_audit_interruptions: 1) over the bundled rates "
    "that price spot lost work.",
)


def use_interruptions(path: str | None) -> str:
    """Lay the rate file over the bundled rates; its description ('' for the bundled ones alone,
    which a hook then never reads unless a job needs them)."""
    if not path and "gpu_audit.catalog.interruptions" not in sys.modules:
        return ""
    # keeps catalog.interruptions off check's start-up
    from gpu_audit.catalog.interruptions import describe, use_rates

    used = use_rates(path)
    return describe(used) if path else ""


def use_prices(path: str | None, max_age_days: int, now: datetime) -> str:
    """Lay the price file over the catalog; print its age warning (one line); its description,
    '' for the bundled catalog alone."""
    if not path and "gpu_audit.prices.overlay" not in sys.modules:
        return ""  # no price file was ever laid in this process: a hook pays nothing
    from gpu_audit.prices.overlay import stale_warning  # keeps prices.overlay off check's start-up

    # keeps prices.overlay off check's start-up
    from gpu_audit.prices.overlay import use_prices as lay

    used = lay(path)
    warning = stale_warning(used, now, max_age_days)
    if warning:
        click.echo(terminal_safe(warning), err=True)
    return used.describe() if used.path else ""


@click.command("refresh", short_help="Fetch current prices from a cloud's own price API.")
@click.option("--provider", required=True, type=click.Choice(["aws", "gcp", "azure"]))
@click.option(
    "--region", "regions", multiple=True, help="Region (repeatable; default: the catalog's)."
)
@click.option("--output", "-o", required=True, metavar="PRICES.json", help="The price file.")
@click.option(
    "--interruptions",
    is_flag=True,
    help="Write spot interruption rates instead (AWS: the Spot Instance Advisor feed; Azure: "
    "Resource Graph's SpotResources eviction rates; GCP: capacity advice in --project), in the "
    "shape --interruption-rates reads.",
)
@click.option(
    "--project",
    metavar="PROJECT",
    help="With --provider gcp --interruptions: the project whose capacity advice is read.",
)
def refresh(
    provider: str,
    regions: tuple[str, ...],
    output: str,
    interruptions: bool,
    project: str | None = None,
) -> None:
    """Read the cloud's own price API for the instance types the catalog knows and write them,
    dated and sourced, into PRICES.json (atomically; other providers' rows are kept). Nothing
    is written when any request fails. AWS: pricing:GetProducts and
    ec2:DescribeSpotPriceHistory; GCP: the Cloud Billing Catalog; Azure: the Retail Prices API.

    With --interruptions: AWS, the Spot Instance Advisor's public feed; Azure, Resource
    Graph's SpotResources eviction rates (Microsoft.ResourceGraph/resources/read, tenant
    scope); GCP, Compute Engine capacity advice for Spot VMs in --project; converted as
    docs/spot.md says, written atomically with the other providers' rows of OUTPUT kept.

    \b
    Examples:
      gpu-audit catalog refresh --provider aws --region us-east-1 -o prices.json
      gpu-audit catalog refresh --provider aws --interruptions -o interruptions.json
      gpu-audit catalog refresh --provider azure --interruptions -o interruptions.json
      gpu-audit catalog refresh --provider gcp --interruptions --project ml-prod -o rates.json
    """
    if interruptions:
        _refresh_interruptions(provider, regions, output, project)
        return
    if project:
        raise ConfigError("catalog refresh: --project is for --provider gcp --interruptions")
    from gpu_audit.prices.run import refresh as run_refresh  # keeps prices.run off check's start-up

    done = run_refresh(provider, regions, output)
    click.echo(
        terminal_safe(
            f"{output}: {done.rows} {provider} prices in {len(done.regions)} regions "
            f"({', '.join(done.regions)}), {done.requests} requests"
        )
    )
    if done.unpriced:
        click.echo(
            f"gpu-audit: {len(done.unpriced)} type-region pairs have no on-demand price at the "
            "source (not offered there); the bundled price, if any, stays in use",
            err=True,
        )


def _refresh_interruptions(
    provider: str, regions: tuple[str, ...], output: str, project: str | None
) -> None:
    # keeps prices.interruptions off check's start-up
    from gpu_audit.prices.interruptions import refresh_interruptions

    if project and provider != "gcp":
        raise ConfigError("catalog refresh: --project is for --provider gcp --interruptions")
    if provider == "azure":
        from gpu_audit.collectors.azure.evictions import refresh_evictions  # off check's start-up

        rows, pages = refresh_evictions(regions, output)
        click.echo(terminal_safe(f"{output}: {rows} azure interruption rates, {pages} requests"))
        return
    if provider == "gcp":
        from gpu_audit.collectors.gcp.advice import refresh_advice  # off check's start-up

        rows, calls, missing = refresh_advice(project, regions, output)
        said = f"{output}: {rows} gcp interruption rates, {calls} requests"
        if missing:
            said += f" ({missing} type-region pairs with no Spot advice: not evaluated)"
        click.echo(terminal_safe(said))
        return
    rows, sent = refresh_interruptions(regions, output)
    click.echo(terminal_safe(f"{output}: {rows} aws interruption rates, {sent} requests"))


@click.command("diff", short_help="What a price file changes against the bundled prices.")
@click.argument("path", metavar="PRICES.json", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(offered("catalog diff")),
    default="table",
    show_default=True,
    help="A table (prices as the reports write them), or JSON (exact numbers).",
)
def diff(path: str, fmt: str) -> None:
    """Type, region, capacity, bundled price, new price and the change in percent, largest
    change first; prices the bundled catalog lacks are marked new.

    \b
    Example:
      gpu-audit catalog diff prices.json
    """
    # keeps prices.diff off check's start-up
    from gpu_audit.prices.diff import changes, ordered, table_rows
    from gpu_audit.prices.pricefile import (
        read_prices,  # keeps prices.pricefile off check's start-up
    )
    from gpu_audit.report.fit import fitted, terminal_width  # keeps report.fit off check's start-up
    from gpu_audit.report.values import money

    found, same = changes(read_prices(path))
    if fmt == "json":
        import json  # keeps json off check's start-up

        items = [
            {
                "type": c.type,
                "region": c.region,
                "capacity": c.capacity,
                "old_usd_per_hour": c.old,
                "new_usd_per_hour": c.new,
                "change_percent": c.percent,
            }
            for c in ordered(found)
        ]
        data = {"version": 1, "kind": "price-changes", "changes": items, "unchanged": same}
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        sys.exit(ExitCode.OK)
    headers = ["type", "region", "capacity", "old $/h", "new $/h", "change"]
    if found:
        rows = [list(row) for row in table_rows(found, partial(money, fmt="table", places=4))]
        click.echo(fitted(headers, rows, terminal_width(), keep=("old $/h", "new $/h", "change")))
    click.echo(f"{len(found)} prices changed or new, {same} unchanged")
    sys.exit(ExitCode.OK)
