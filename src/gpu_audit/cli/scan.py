"""`gpu-audit scan`: its options come from the provider registry, so it is imported only when
run or listed (`cli/main.py` registers it by name), never on `check`'s path."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from gpu_audit.cli.history import needs_comparison
from gpu_audit.cli.main import F, finish, invocation, now_from, output_options, run_settings
from gpu_audit.cli.shard import shard_options, shard_request
from gpu_audit.collectors.provider import Option
from gpu_audit.collectors.registry import PROVIDERS


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


@click.command(short_help="Audit live GPU capacity or a saved inventory.")
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
@shard_options
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
    shard_text: str | None,
    run_id: str | None,
    **options: Any,
) -> None:
    """Enumerate running GPU capacity (or a saved inventory) and judge it.

    \b
    Examples:
      gpu-audit scan --provider aws --region us-east-1 -o audit.md
      gpu-audit scan --inventory fleet.yaml --history audits.db
    """
    from gpu_audit.cli.runners import ScanRequest, run_scan  # keeps cli.runners off --help

    options["inputs"] = list(inventories)
    settings = run_settings(options)
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
        argv=invocation(),
        **shard_request(shard_text, run_id),
    )
    needs_comparison(options, request.history)
    options["history"] = request.history
    finish(run_scan(request, settings), options, settings)
