"""The `kubernetes:` section of `.gpu-audit.yaml`: its keys, types and defaults."""

from __future__ import annotations

from gpu_audit.core.frozen import record


@record
class KubernetesSettings:
    contexts: tuple[str, ...] = ()  # empty: the kubeconfig's current context (or in-cluster)
    kubeconfig: str | None = None  # default: $KUBECONFIG, then ~/.kube/config
    # Extended resources counted as GPUs (node capacity, pod requests).
    gpu_resources: tuple[str, ...] = ("nvidia.com/gpu", "amd.com/gpu")
    workload_label: str = "workload"
    # Prometheus scraping the DCGM exporter; None: utilization stays missing.
    prometheus: str | None = None
    metric: str = "DCGM_FI_DEV_GPU_UTIL"
    # The exporter's labels as Prometheus stores them (`exported_pod` when honor_labels is off).
    node_label: str = "Hostname"
    pod_label: str = "pod"
    namespace_label: str = "namespace"
    window_hours: float = 24.0
    page_size: int = 500
    timeout: float = 20.0
    max_attempts: int = 3
    # MIG instances report no DCGM_FI_DEV_GPU_UTIL; their own activity is this DCP field (a
    # 0-1 ratio), on series labelled with the instance (`GPU_I_ID`, `GPU_I_PROFILE`).
    mig_metric: str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
