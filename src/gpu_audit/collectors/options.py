"""Flags more than one provider declares, defined once so their help and bounds agree."""

from __future__ import annotations

from gpu_audit.collectors.provider import Option

CONCURRENCY = Option(
    "--concurrency", "concurrency", "Parallel work items.", kind=int, bounds=(1, 64)
)
WINDOW = Option(
    "--window", "window_hours", "Utilization window, hours.", kind=float, bounds=(1, 24 * 90)
)

REGION = Option(
    "--region", "regions", "Region to scan (repeatable; default: every region).", multiple=True
)

# Seconds one API call may take before it is retried or becomes a gap; providers map it onto
# their own field (AWS `read_timeout`, GCP `timeout`).
TIMEOUT = Option(
    "--timeout", "timeout", "Seconds to wait for each API call.", kind=float, bounds=(0.1, 600)
)
