"""GCP as the CLI and settings loader see it, declared without importing the google libraries."""

from __future__ import annotations

from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.options import CONCURRENCY, TIMEOUT, WINDOW
from gpu_audit.collectors.provider import Option, Provider

_METRICS = (
    "install the Ops Agent with NVIDIA GPU metrics (`agent.googleapis.com/gpu/utilization`; "
    "DCGM for GKE) on the VM image"
)

PROVIDER = Provider(
    name="gcp",
    settings=GcpSettings,
    options=(
        Option("--project", "projects", "GCP project (repeatable).", multiple=True),
        CONCURRENCY,
        WINDOW,
        TIMEOUT,
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
)
