"""The `gcp:` section of `.gpu-audit.yaml`: its keys, types and defaults."""

from __future__ import annotations

from gpu_audit.core.frozen import record


@record
class GcpSettings:
    projects: tuple[str, ...] = ()
    services: tuple[str, ...] = ("gce", "vertex")
    vertex_locations: tuple[str, ...] = ()  # empty: every location Vertex AI lists
    concurrency: int = 8
    workload_label: str = "workload"
    data_bucket_label: str = "data-bucket"
    metric_type: str = "agent.googleapis.com/gpu/utilization"
    window_hours: float = 24.0
    timeout: float = 20.0
    max_attempts: int = 3
    since: str | None = None  # finished runs from this date; None: 90 days back
