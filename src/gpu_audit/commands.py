"""What the CLI commands do, between parsing options and rendering: sources → audit()."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gpu_audit.audit import audit
from gpu_audit.errors import ConfigError
from gpu_audit.model import CoverageGap, Resource, ScanResult, Scope
from gpu_audit.settings import Settings, load_settings

# provider → (module, class, the module its extra provides, extra name)
COLLECTORS: dict[str, tuple[str, str, str, str]] = {
    "aws": ("gpu_audit.collectors.aws", "AwsCollector", "boto3", "aws"),
    "gcp": ("gpu_audit.collectors.gcp", "GcpCollector", "google.cloud.compute_v1", "gcp"),
}


def run_scan(options: dict[str, Any]) -> tuple[ScanResult, Settings]:
    from gpu_audit.cli import now_from, unique
    from gpu_audit.collectors.inventory import load_inventory
    from gpu_audit.policy.loader import load_policy

    settings = _with_flags(load_settings(options["config_path"]), options)
    policy = load_policy(options["policies"] or settings.policies)
    if not options["inventories"] and not options["providers"]:
        raise ConfigError("nothing to scan: give --inventory FILE or --provider aws|gcp")
    resources: list[Resource] = []
    gaps: list[CoverageGap] = []
    captured: list[datetime] = []
    for path in options["inventories"]:
        inventory = load_inventory(path)
        resources.extend(inventory.resources)
        gaps.extend(inventory.coverage_gaps)
        if inventory.captured_at:
            captured.append(inventory.captured_at)
    scanned: list[Scope] = []
    for provider in options["providers"]:
        collector = _collector(provider, settings)
        for item in collector.collect():
            (gaps if isinstance(item, CoverageGap) else resources).append(item)
        scanned.append(collector.scope())  # every account and region read, GPUs or not
    if options["now_text"]:
        now = now_from(options["now_text"])
    elif captured and not options["providers"]:
        now = max(captured)  # a saved snapshot is judged as of its capture time
    else:
        now = datetime.now(UTC)
    scope = Scope(
        command="scan",
        providers=unique([*(r.provider for r in resources), *options["providers"]]),
        accounts=unique(
            [
                *(a for s in scanned for a in s.accounts),
                *(r.account or "" for r in resources),
                *(g.account or "" for g in gaps),
            ]
        ),
        regions=unique(
            sorted({*(x for s in scanned for x in s.regions), *(r.region or "" for r in resources)})
        ),
        files=tuple(options["inventories"]),
    )
    return audit(resources, policy, now, scope, coverage_gaps=gaps), settings


def run_check(files: tuple[str, ...], options: dict[str, Any]) -> tuple[ScanResult, Settings]:
    from gpu_audit.jobs import load_jobs
    from gpu_audit.policy.loader import load_policy

    settings = load_settings(options["config_path"])
    policy = load_policy(options["policies"] or settings.policies)
    loaded = load_jobs(files)
    scope = Scope(command="check", providers=(), files=tuple(files))
    now = datetime.now(UTC)
    return audit(loaded.resources, policy, now, scope, skipped=loaded.skipped), settings


def _with_flags(settings: Settings, options: dict[str, Any]) -> Settings:
    aws, gcp = settings.aws, settings.gcp
    if options["regions"]:
        aws = replace(aws, regions=tuple(options["regions"]))
    if options["profiles"]:
        aws = replace(aws, profiles=tuple(options["profiles"]))
    if options["role_arns"]:
        aws = replace(aws, role_arns=tuple(options["role_arns"]))
    if options["accounts"]:
        if not any("{account}" in arn for arn in aws.role_arns):
            raise ConfigError(
                "--account fills the {account} placeholder of a --role-arn template "
                "(for example arn:aws:iam::{account}:role/gpu-audit); none was given"
            )
        aws = replace(aws, accounts=tuple(options["accounts"]))
    if options["org_role"]:
        aws = replace(aws, organization_role=options["org_role"])
    if options["projects"]:
        gcp = replace(gcp, projects=tuple(options["projects"]))
    if options["concurrency"]:
        aws = replace(aws, concurrency=options["concurrency"])
        gcp = replace(gcp, concurrency=options["concurrency"])
    if options["window"]:
        aws = replace(aws, window_hours=options["window"])
        gcp = replace(gcp, window_hours=options["window"])
    return replace(settings, aws=aws, gcp=gcp)


def _collector(provider: str, settings: Settings) -> Any:
    module_name, class_name, needs, extra = COLLECTORS[provider]
    try:
        missing = importlib.util.find_spec(needs) is None
    except (ImportError, ValueError):
        missing = True
    if missing:
        raise ConfigError(
            f"--provider {provider}: {needs} is not installed; "
            f"install the extra: pip install 'gpu-audit[{extra}]'"
        )
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(settings, _progress(provider) if sys.stderr.isatty() else None)


def _progress(provider: str) -> Any:
    def show(progress: Any) -> None:
        end = "\n" if progress.done >= progress.total else ""
        sys.stderr.write(
            f"\r[{provider}] {progress.done}/{progress.total} work items, "
            f"{progress.found} GPU instances{end}"
        )
        sys.stderr.flush()

    return show


def lookup_rows(names: tuple[str, ...], region: str | None) -> tuple[list[list[str]], list[str]]:
    from gpu_audit.catalog import gpu_class, gpu_hour_price, instance_spec, price

    rows: list[list[str]] = []
    unknown: list[str] = []
    for name in names:
        spec = instance_spec(name)
        if spec is not None:
            quote = price(name, region)
            cls = gpu_class(spec.gpu_model)
            rank = cls.rank if cls else None
            rows.append(
                [
                    name,
                    spec.cloud,
                    spec.gpu_model,
                    str(spec.gpu_count),
                    f"{spec.gpu_memory_gib:g}",
                    _text(rank),
                    *_quote(quote),
                ]
            )
            continue
        cls = gpu_class(name)
        if cls is not None:
            quote = gpu_hour_price(cls.name)
            rows.append(
                [name, "-", cls.name, "1", _text(cls.memory_gib), _text(cls.rank), *_quote(quote)]
            )
            continue
        unknown.append(name)
    return rows, unknown


def _text(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _quote(quote: Any) -> list[str]:
    if quote is None:
        return ["-", "-", "-", "-", "unpriced"]
    region = quote.region + ("" if quote.exact_region else " (reference)")
    return [region, _text(quote.on_demand), _text(quote.spot), quote.as_of, quote.source]
