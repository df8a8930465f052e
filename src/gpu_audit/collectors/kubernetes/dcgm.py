"""GPU utilization from the DCGM exporter through Prometheus: eleven instant queries per scan.

Per node and per pod, the average is the mean over its GPUs of each GPU's average over the
window, and the p95 is the busiest GPU's 95th percentile: a node or pod reads as idle only when
every GPU it holds is. Series without a pod label are GPUs no pod holds (they count for the node).

MIG instances report no `DCGM_FI_DEV_GPU_UTIL` (NVIDIA/dcgm-exporter issues #105, #216): their
activity is `mig_metric` (`DCGM_FI_PROF_GR_ENGINE_ACTIVE`, a 0-1 ratio read as a percent), on
series that carry the instance (`GPU_I_ID`, `GPU_I_PROFILE`) and the pod holding it. Two more
queries read it per MIG node and per pod, so a slice is judged by its own activity.

Three more read each pod's profiling activity (`PROFILING`: the graphics engine, the tensor pipes,
the memory interface; 0-1 ratios read as percents), what the knob rules join to the pod's
settings. The exporter's host label was `Hostname` until dcgm-exporter PR #655 renamed it
`hostname`: nodes are grouped by both, so either spelling finds its node.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import field
from datetime import datetime
from typing import Any

from gpu_audit.collectors.kubernetes.connect import TRANSIENT_STATUSES
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.core.frozen import record
from gpu_audit.core.redact import redact_urls
from gpu_audit.core.resource import Utilization

PodKey = tuple[str, str]  # (namespace, pod)


class MetricsError(Exception):
    """Prometheus could not answer; utilization stays missing and resources carry a note."""


@record
class DcgmUtilization:
    nodes: Mapping[str, Utilization]
    pods: Mapping[PodKey, Utilization]
    mig_nodes: Mapping[str, Utilization] = field(default_factory=dict)
    mig_pods: Mapping[PodKey, Utilization] = field(default_factory=dict)
    # per pod: {"engine": %, "tensor": %, "dram": %} from the profiling counters it has
    profiling: Mapping[PodKey, Mapping[str, float]] = field(default_factory=dict)


# the profiling counters read per pod, by the name the pod's activity gives them
PROFILING = {
    "engine": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "tensor": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "dram": "DCGM_FI_PROF_DRAM_ACTIVE",
}


def host_labels(settings: KubernetesSettings) -> tuple[str, ...]:
    """The node label as configured and its other spelling (`Hostname`, `hostname`)."""
    label = settings.node_label
    other = label[0].swapcase() + label[1:] if label.lower() == "hostname" else None
    return (label, other) if other else (label,)


def queries(settings: KubernetesSettings) -> dict[str, str]:
    """The PromQL, by (scope, statistic); each returns one sample per node or per pod."""
    window = f"{max(1, round(settings.window_hours * 60))}m"
    series = f"{settings.metric}[{window}]"
    pod_series = f'{settings.metric}{{{settings.pod_label}!=""}}[{window}]'
    node_by = ", ".join(host_labels(settings))
    pod_by = f"{settings.namespace_label}, {settings.pod_label}"
    mig = f'{settings.mig_metric}{{GPU_I_ID!=""}}[{window}]'
    profiling = {
        f"prof_{name}": f'avg by ({pod_by}) (avg_over_time({metric}{{{settings.pod_label}!=""}}'
        f"[{window}]))"
        for name, metric in PROFILING.items()
    }
    return {
        "node_avg": f"avg by ({node_by}) (avg_over_time({series}))",
        "node_p95": f"max by ({node_by}) (quantile_over_time(0.95, {series}))",
        "pod_avg": f"avg by ({pod_by}) (avg_over_time({pod_series}))",
        "pod_p95": f"max by ({pod_by}) (quantile_over_time(0.95, {pod_series}))",
        "mig_node_avg": f"avg by ({node_by}) (avg_over_time({mig}))",
        "mig_node_p95": f"max by ({node_by}) (quantile_over_time(0.95, {mig}))",
        "mig_pod_avg": f"avg by ({pod_by}) (avg_over_time({mig}))",
        "mig_pod_p95": f"max by ({pod_by}) (quantile_over_time(0.95, {mig}))",
    } | profiling


def fetch(settings: KubernetesSettings, now: datetime) -> DcgmUtilization:
    """Node and pod utilization over the window ending `now`; MetricsError if Prometheus fails."""
    base = str(settings.prometheus).rstrip("/")
    values = {key: _query(base, text, now, settings) for key, text in queries(settings).items()}
    window = settings.window_hours

    hosts = host_labels(settings)

    def node_key(labels: Mapping[str, str]) -> str | None:
        return next((labels[h] for h in hosts if labels.get(h)), None)

    def pod_key(labels: Mapping[str, str]) -> PodKey | None:
        namespace, pod = labels.get(settings.namespace_label), labels.get(settings.pod_label)
        return (namespace, pod) if namespace and pod else None

    nodes = _join(values["node_avg"], values["node_p95"], node_key, window)
    pods = _join(values["pod_avg"], values["pod_p95"], pod_key, window)
    mig_nodes = _join(values["mig_node_avg"], values["mig_node_p95"], node_key, window, 100)
    mig_pods = _join(values["mig_pod_avg"], values["mig_pod_p95"], pod_key, window, 100)
    profiling: dict[PodKey, dict[str, float]] = {}
    for name in PROFILING:
        for key, value in _samples(values[f"prof_{name}"], pod_key, 100):
            profiling.setdefault(key, {})[name] = value
    return DcgmUtilization(nodes, pods, mig_nodes, mig_pods, profiling)


def _join(
    avg: list[Any], p95: list[Any], key: Any, window: float, scale: float = 1
) -> dict[Any, Utilization]:
    averages = {k: v for k, v in _samples(avg, key, scale)}
    peaks = {k: v for k, v in _samples(p95, key, scale)}
    return {
        k: Utilization(gpu_avg=averages.get(k), gpu_p95=peaks.get(k), window_hours=window)
        for k in averages.keys() | peaks.keys()
    }


def _samples(result: list[Any], key: Any, scale: float = 1) -> list[tuple[Any, float]]:
    out = []
    for sample in result:
        labels = sample.get("metric") or {}
        found = key(labels)
        try:
            value = float(sample["value"][1]) * scale
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if found is not None and value == value:  # NaN: no samples in the window
            out.append((found, round(min(max(value, 0.0), 100.0), 2)))
    return out


def _query(base: str, promql: str, now: datetime, settings: KubernetesSettings) -> list[Any]:
    """One instant query; transient failures retried up to `max_attempts` times."""
    params = urllib.parse.urlencode({"query": promql, "time": f"{now.timestamp():.3f}"})
    url = f"{base}/api/v1/query?{params}"
    attempts = max(settings.max_attempts, 1)
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=settings.timeout) as response:  # noqa: S310
                body = json.load(response)
            break
        except urllib.error.HTTPError as exc:
            if exc.code in TRANSIENT_STATUSES and attempt + 1 < attempts:
                time.sleep(0.2 * 2**attempt)
                continue
            raise MetricsError(f"Prometheus {base}: HTTP {exc.code}: {_detail(exc)}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            if attempt + 1 < attempts:
                time.sleep(0.2 * 2**attempt)
                continue
            reason = getattr(exc, "reason", exc)
            raise MetricsError(redact_urls(f"Prometheus {base}: {reason}")) from exc
        except ValueError as exc:
            raise MetricsError(f"Prometheus {base}: not a JSON answer") from exc
    if not isinstance(body, dict) or body.get("status") != "success":
        error = body.get("error") if isinstance(body, dict) else None
        raise MetricsError(f"Prometheus {base}: query failed: {error or 'unexpected answer'}")
    data = body.get("data") or {}
    result = data.get("result")
    return result if isinstance(result, list) else []


def _detail(exc: urllib.error.HTTPError) -> str:
    try:
        error = json.loads(exc.read() or b"{}").get("error")
    except (ValueError, AttributeError):
        error = None
    return str(error or exc.reason)[:200]
