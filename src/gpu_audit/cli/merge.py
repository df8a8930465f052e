"""`gpu-audit merge`: shard reports in, one audit out (the runner is merge.py)."""

from __future__ import annotations

from typing import Any

import click

from gpu_audit.cli.history import needs_comparison
from gpu_audit.cli.main import finish, now_from, output_options, run_settings


@click.command(short_help="Merge the shard reports of a `scan --shard K/N` run into one audit.")
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.json...")
@click.option(
    "--now",
    "now_text",
    metavar="ISO-TIME",
    help="Judge as of this time; default: the latest shard's.",
)
@click.option(
    "--history",
    metavar="PATH",
    help="Record the merged audit in this SQLite database (the shards never do).",
)
@output_options
def merge(
    shards: tuple[str, ...], now_text: str | None, history: str | None, **options: Any
) -> None:
    """Combine shard reports into the audit the unsharded scan would have produced.

    Findings are judged again on the union of the shards' resources (each kept once), so the
    summary is the union's. A missing shard makes the audit partial (exit 3).

    \b
    Example:
      gpu-audit merge shards/shard-*.json --history audits.db -o audit.md
    """
    # keeps cli.merge_runner off --help
    from gpu_audit.cli.merge_runner import MergeRequest, run_merge

    options["inputs"] = list(shards)
    settings = run_settings(options)
    request = MergeRequest(
        shards=shards,
        policies=options["policies"],
        now=now_from(now_text),
        history=history or settings.history,
        baseline=options["baseline"],
    )
    needs_comparison(options, request.history)
    options["history"] = request.history
    finish(run_merge(request, settings), options, settings)
