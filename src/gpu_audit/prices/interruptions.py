"""`catalog refresh --provider aws --interruptions`: the Spot Instance Advisor feed, read over
HTTPS (no account), converted into an interruption-rate file (catalog/advisor.py), dated by the
fetch, written atomically; the other providers' rows of an existing file are kept."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from gpu_audit.catalog.advisor import FEED, SOURCE, advisor_rows
from gpu_audit.catalog.interruptions import bundled, read_rates, write_rows
from gpu_audit.catalog.lookup import instance_types
from gpu_audit.errors import CollectorError, ConfigError
from gpu_audit.prices.http import JsonGetter

FEED_ENV = "GPU_AUDIT_SPOT_ADVISOR_URL"  # tests point it at a loopback server


def _types() -> list[str]:
    return [spec.instance_type for spec in instance_types() if spec.cloud == "aws"]


def refresh_interruptions(
    regions: tuple[str, ...], output: str, now: datetime | None = None
) -> tuple[int, int]:
    """(rows written, requests): AWS rows from the feed, every other provider's kept."""
    now = now or datetime.now(UTC)
    day = now.date().isoformat()
    old = read_rates(output) if os.path.exists(output) else None  # a bad file: refuse first
    url = os.environ.get(FEED_ENV, "").strip() or FEED
    getter = JsonGetter("aws: spot instance advisor")
    feed = getter.get(url)
    wanted = regions or tuple(sorted({row.region for row in bundled().rows}))
    try:
        rows = advisor_rows(feed, day, _types(), wanted)
    except ConfigError as exc:
        raise CollectorError(f"{exc}; {output} left as it was") from exc
    if not rows:
        raise CollectorError(
            f"aws: the spot advisor feed has no GPU type in {', '.join(wanted)}; "
            f"{output} left as it was"
        )
    write_rows(output, old, "aws", SOURCE, url, rows, day)
    return len(rows), getter.sent
