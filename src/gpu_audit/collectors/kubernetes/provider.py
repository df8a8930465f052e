"""Kubernetes as the CLI and settings loader see it, declared without importing the client."""

from __future__ import annotations

from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.collectors.options import TIMEOUT, WINDOW, check_patience
from gpu_audit.collectors.provider import Option, Provider
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError

_METRICS = (
    "run the NVIDIA DCGM exporter (GPU Operator) scraped by Prometheus, and pass "
    "`--prometheus URL` (or set `kubernetes.prometheus`)"
)


def _values(section: KubernetesSettings) -> None:
    url = section.prometheus
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"kubernetes.prometheus: {printable(url, 80)}: expected an http:// or https:// URL"
        )
    if section.page_size < 1:
        raise ConfigError(f"kubernetes.page_size: {section.page_size}: expected at least 1")
    check_patience("kubernetes", section)


PROVIDER = Provider(
    name="kubernetes",
    settings=KubernetesSettings,
    options=(
        Option(
            "--context",
            "contexts",
            "Kubeconfig context (repeatable; '*': every context; default: the current one).",
            multiple=True,
        ),
        Option(
            "--kubeconfig", "kubeconfig", "Kubeconfig file (default: $KUBECONFIG).", metavar="FILE"
        ),
        Option(
            "--prometheus",
            "prometheus",
            "Prometheus URL with the DCGM exporter's GPU metrics.",
            metavar="URL",
        ),
        WINDOW,
        TIMEOUT,
    ),
    factory="gpu_audit.collectors.kubernetes.collector:KubernetesCollector",
    requires="kubernetes",
    extra="kubernetes",
    hints={
        "utilization.gpu_p95": _METRICS,
        "utilization.gpu_avg": _METRICS,
        "utilization.window_hours": _METRICS,
        "capacity": "label the node pool with its capacity type (`karpenter.sh/capacity-type`, "
        "`eks.amazonaws.com/capacityType`, `cloud.google.com/gke-spot`, "
        "`kubernetes.azure.com/scalesetpriority`); a pending pod: a nodeSelector on one of them",
        "workload": "label the pod `workload` (training, inference or notebook), or run it under "
        "a Job, PyTorchJob, MPIJob, RayJob (training) or Deployment, InferenceService, "
        "RayService (inference)",
        "gpu.allocated": "GPU requests are read from the pods on the node (`list pods`)",
    },
    permissions_heading="## Kubernetes",
    values=_values,
)
