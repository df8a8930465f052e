"""GPU utilization from CloudWatch `GetMetricData`: one query per series, 500 queries a call.

Each EC2 instance, SageMaker training host and endpoint variant gets one `MetricStat` query,
`Stat: Average`, over the window in periods of `metric_period(window)` seconds (hourly for
windows of 12 h or more). From the returned period averages the collector takes:
- `gpu_avg`: their mean (the window average when the agent reports at a steady rate);
- `gpu_p95`: their 95th percentile, nearest rank ("the GPU was this busy in the top 5% of hours").
CloudWatch's own `p95` extended statistic would need a second query per instance and is not
implemented by the moto emulator the tests run against, so percentiles are computed here.
An instance with no datapoints gets no utilization at all: missing, never zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Utilization

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
    """Mean and 95th percentile of the utilization samples (percent, to 2 decimals) over the window;
    an empty Utilization without samples."""
    if not values:
        return Utilization()
    return Utilization(
        gpu_avg=round(sum(values) / len(values), 2),
        gpu_p95=round(percentile(values, 0.95), 2),
        window_hours=window_hours,
    )


@record
class Series:
    """One CloudWatch metric to read for a resource; several series of one key are pooled.

    `per` divides every value: SageMaker's GPUUtilization is summed over an instance's GPUs
    (0-100 × GPUs), so dividing by the GPUs per instance gives a per-GPU percentage.
    """

    key: str  # the resource it belongs to: an instance id, a job or endpoint ARN
    namespace: str
    metric: str
    dimensions: tuple[tuple[str, str], ...]
    per: float = 1.0


def instance_series(instance_ids: Sequence[str], settings: AwsSettings) -> list[Series]:
    """The CloudWatch agent's GPU metric for each EC2 instance."""
    return [
        Series(
            instance_id,
            settings.metric_namespace,
            settings.metric_name,
            ((settings.metric_dimension, instance_id),),
        )
        for instance_id in instance_ids
    ]


def _queries(batch: Sequence[Series], offset: int, period: int) -> list[Any]:
    return [
        {
            "Id": f"q{offset + index}",
            "MetricStat": {
                "Metric": {
                    "Namespace": series.namespace,
                    "MetricName": series.metric,
                    "Dimensions": [{"Name": n, "Value": v} for n, v in series.dimensions],
                },
                "Period": period,
                "Stat": "Average",
            },
            "ReturnData": True,
        }
        for index, series in enumerate(batch)
    ]


def fetch_utilization(
    cloudwatch: Any, series: Sequence[Series], window: float, now: datetime
) -> dict[str, Utilization]:
    """Utilization per series key, for those with datapoints in the window ending at `now`.

    Every series of a region goes into the same `GetMetricData` calls, 500 queries each.
    """
    period = metric_period(window)
    start = now - timedelta(hours=window)
    pooled: dict[str, list[float]] = {}
    for offset in range(0, len(series), MAX_QUERIES):
        batch = series[offset : offset + MAX_QUERIES]
        values: dict[str, list[float]] = {}
        request: dict[str, Any] = {
            "MetricDataQueries": _queries(batch, offset, period),
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
        for index, one in enumerate(batch):
            scaled = [min(100.0, v / one.per) for v in values.get(f"q{offset + index}", [])]
            if scaled:
                pooled.setdefault(one.key, []).extend(scaled)
    return {key: summarize(found, window) for key, found in pooled.items()}
