"""GCP as the CLI and settings loader see it, declared without importing the google libraries."""

from __future__ import annotations

from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.options import (
    CONCURRENCY,
    SINCE,
    TIMEOUT,
    WINDOW,
    check_patience,
    check_since,
)
from gpu_audit.collectors.provider import Option, Provider
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError

_METRICS = (
    "install the Ops Agent with NVIDIA GPU metrics (`agent.googleapis.com/gpu/utilization`; "
    "DCGM for GKE) on the VM image; Vertex AI endpoints and custom jobs report their "
    "accelerator duty cycle themselves"
)

SERVICES = ("gce", "vertex")


def _values(gcp: GcpSettings) -> None:
    unknown = [s for s in gcp.services if s not in SERVICES]
    if unknown or not gcp.services:
        raise ConfigError(
            f"gcp.services: '{printable(unknown[0], 80) if unknown else ''}' is not a service; "
            f"choose among {', '.join(SERVICES)}"
        )
    check_patience("gcp", gcp)
    check_since("gcp", gcp)


PROVIDER = Provider(
    name="gcp",
    settings=GcpSettings,
    options=(
        Option("--project", "projects", "GCP project (repeatable).", multiple=True),
        Option(
            "--service",
            "services",
            "Service to scan (repeatable; default: every service of the provider).",
            multiple=True,
            choices=SERVICES,
        ),
        CONCURRENCY,
        WINDOW,
        TIMEOUT,
        SINCE,
    ),
    factory="gpu_audit.collectors.gcp.collector:GcpCollector",
    requires="google.cloud.compute_v1",
    extra="gcp",
    hints={
        "utilization.gpu_p95": _METRICS,
        "utilization.gpu_avg": _METRICS,
        "utilization.window_hours": _METRICS,
        "data.regions": "set the `data-bucket` label to the GCS bucket the VM reads, "
        "and allow `storage.buckets.get` on it",
    },
    permissions_heading="## GCP",
    values=_values,
)
