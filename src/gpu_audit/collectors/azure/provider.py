"""Azure as the CLI and settings loader see it, declared without importing the Azure SDKs."""

from __future__ import annotations

from gpu_audit.collectors.azure.settings import AzureSettings
from gpu_audit.collectors.options import CONCURRENCY, REGION, TIMEOUT, check_patience
from gpu_audit.collectors.provider import Option, Provider
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError

_METRICS = (
    "Azure's platform metrics have no GPU metric for VMs: install the Azure Monitor agent with "
    "the DCGM exporter on the VM image, or scan the AKS cluster with `--provider kubernetes` "
    "(DCGM through Prometheus)"
)

SOURCES = ("resource-graph", "arm")


def _values(azure: AzureSettings) -> None:
    if azure.source not in SOURCES:
        raise ConfigError(
            f"azure.source: '{printable(azure.source, 80)}' is not a source; "
            f"choose among {', '.join(SOURCES)}"
        )
    check_patience("azure", azure)


PROVIDER = Provider(
    name="azure",
    settings=AzureSettings,
    options=(
        Option(
            "--subscription",
            "subscriptions",
            "Azure subscription id (repeatable; default: every readable one).",
            multiple=True,
        ),
        REGION,
        Option(
            "--azure-source",
            "source",
            "Where Azure inventory is read: resource-graph (default) or arm.",
            metavar="[resource-graph|arm]",
        ),
        CONCURRENCY,
        TIMEOUT,
    ),
    factory="gpu_audit.collectors.azure.collector:AzureCollector",
    requires="azure.mgmt.compute",
    extra="azure",
    hints={
        "utilization.gpu_p95": _METRICS,
        "utilization.gpu_avg": _METRICS,
        "utilization.window_hours": _METRICS,
    },
    permissions_heading="## Azure",
    values=_values,
)
