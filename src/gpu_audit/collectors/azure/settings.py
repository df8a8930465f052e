"""The `azure:` section of `.gpu-audit.yaml`: its keys, types and defaults."""

from __future__ import annotations

from gpu_audit.core.frozen import record


@record
class AzureSettings:
    subscriptions: tuple[str, ...] = ()  # empty: every subscription the credential can read
    regions: tuple[str, ...] = ()  # empty: every region (Azure `location`, e.g. `eastus`)
    source: str = "resource-graph"  # or `arm`: the same listings per subscription
    workload_tag: str = "workload"
    concurrency: int = 4  # subscriptions read at once (ARM) and workspaces' computes
    timeout: float = 20.0
    max_attempts: int = 3
