"""`scan --shard K/N|auto/N --run-id ID`: the options and the request fields they make."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from gpu_audit.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def shard_options(func: F) -> F:
    """`scan --shard K/N|auto/N --run-id ID`."""
    func = click.option(
        "--run-id",
        envvar="GPU_AUDIT_RUN_ID",
        metavar="ID",
        help="Name this sharded run, so merge refuses shards of other runs (default: "
        "$GPU_AUDIT_RUN_ID, else the AWS Batch array job's id).",
    )(func)
    return click.option(
        "--shard",
        "shard_text",
        metavar="K/N",
        help="Scan only shard K of N (1-based) of the work items; auto/N takes the 0-based "
        "index from JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX.",
    )(func)


def shard_request(shard_text: str | None, run_id: str | None) -> dict[str, Any]:
    """The ScanRequest fields of `--shard` and `--run-id` (nothing without `--shard`)."""
    if not shard_text:
        source = click.get_current_context().get_parameter_source("run_id")
        if run_id and source is click.core.ParameterSource.COMMANDLINE:
            raise ConfigError("--run-id names a sharded run: give --shard K/N too")
        return {}
    from gpu_audit.collectors.workitems import parse_shard  # keeps collectors.workitems off --help

    batch = os.environ.get("AWS_BATCH_JOB_ID", "")  # an array child's id is PARENT:INDEX
    return {
        "shard": parse_shard(shard_text),
        "run_id": run_id or (batch.partition(":")[0] if ":" in batch else None),
    }
