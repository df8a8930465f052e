"""GPU utilization from CloudWatch `GetMetricData`: one query per instance, 500 queries a call.

Each instance gets one `MetricStat` query, `Stat: Average`, over the window in periods of
`metric_period(window)` seconds (hourly for windows of 12 h or more). From the returned period
averages the collector takes:
- `gpu_avg`: their mean (the window average when the agent reports at a steady rate);
- `gpu_p95`: their 95th percentile, nearest rank ("the GPU was this busy in the top 5% of hours").
CloudWatch's own `p95` extended statistic would need a second query per instance and is not
implemented by the moto emulator the tests run against, so percentiles are computed here.
An instance with no datapoints gets no utilization at all: missing, never zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.model import Utilization

MAX_QUERIES = 500  # GetMetricData's limit of queries per call


def metric_period(window_hours: float) -> int:
    """Seconds per datapoint: at least 12 points per window, a multiple of 60, at most an hour."""
    per_point = int(window_hours * 3600) // 12
    return max(60, min(3600, per_point // 60 * 60))


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def summarize(values: Sequence[float], window_hours: float) -> Utilization:
    if not values:
        return Utilization()
    return Utilization(
        gpu_avg=round(sum(values) / len(values), 2),
        gpu_p95=round(percentile(values, 0.95), 2),
        window_hours=window_hours,
    )


def _queries(instance_ids: Sequence[str], settings: AwsSettings, period: int) -> list[Any]:
    return [
        {
            "Id": f"q{index}",
            "MetricStat": {
                "Metric": {
                    "Namespace": settings.metric_namespace,
                    "MetricName": settings.metric_name,
                    "Dimensions": [{"Name": settings.metric_dimension, "Value": instance_id}],
                },
                "Period": period,
                "Stat": "Average",
            },
            "ReturnData": True,
        }
        for index, instance_id in enumerate(instance_ids)
    ]


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def fetch_utilization(
    cloudwatch: Any, instance_ids: Sequence[str], settings: AwsSettings, now: datetime
) -> dict[str, Utilization]:
    """Utilization per instance id, for those with datapoints in the window ending at `now`."""
    window = settings.window_hours
    period = metric_period(window)
    start = now - timedelta(hours=window)
    found: dict[str, Utilization] = {}
    for batch in _batches(list(instance_ids), MAX_QUERIES):
        values: dict[str, list[float]] = {}
        request: dict[str, Any] = {
            "MetricDataQueries": _queries(batch, settings, period),
            "StartTime": start,
            "EndTime": now,
        }
        while True:
            page = cloudwatch.get_metric_data(**request)
            for result in page.get("MetricDataResults", []):
                values.setdefault(result["Id"], []).extend(result.get("Values", []))
            token = page.get("NextToken")
            if not token:
                break
            request["NextToken"] = token
        for index, instance_id in enumerate(batch):
            usage = summarize(values.get(f"q{index}", []), window)
            if usage.gpu_avg is not None:
                found[instance_id] = usage
    return found
