"""Which clusters to read and how: kubeconfig contexts (or in-cluster config), bounded retries.

The `kubernetes` client is imported here, inside functions, so `--provider kubernetes` alone
pays for it (about 0.5 s).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_audit.collectors.interface import ProviderUnavailable
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.core.frozen import record
from gpu_audit.core.yamlguard import printable
from gpu_audit.errors import ConfigError

IN_CLUSTER = "in-cluster"
EVERY_CONTEXT = "*"  # `--context '*'`: every context of the kubeconfig (org-scale discovery)
TRANSIENT_STATUSES = (429, 500, 502, 503, 504)


@record
class Target:
    """One cluster to read: its context name and how to build an API client for it."""

    context: str
    connect: Callable[[], Any]  # → kubernetes.client.ApiClient; may raise ConfigException


def targets(settings: KubernetesSettings) -> list[Target]:
    """The contexts asked for (default: the current one), or the in-cluster service account."""
    from kubernetes import config  # keeps kubernetes off start-up
    from kubernetes.config.config_exception import ConfigException  # keeps kubernetes off start-up

    files = _kubeconfig_files(settings)
    if not files:
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return [Target(_in_cluster_name(settings), _in_cluster(settings))]
        raise ProviderUnavailable(
            "NoKubeconfig",
            "kubernetes: no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or create "
            "~/.kube/config (inside a cluster, the pod's service account is used)",
        )
    joined = os.pathsep.join(files)
    try:
        contexts, active = config.list_kube_config_contexts(config_file=joined)
    except ConfigException as exc:
        raise ConfigError(f"{joined}: {_one_line(str(exc))}") from exc
    known = [str(c.get("name")) for c in contexts or ()]
    if settings.contexts == (EVERY_CONTEXT,):
        names = sorted(known)
    elif settings.contexts:
        unknown = [name for name in settings.contexts if name not in known]
        if unknown:
            raise ConfigError(
                f"--context {unknown[0]}: no such context in {joined} "
                f"(known: {', '.join(known) or 'none'})"
            )
        names = list(dict.fromkeys(settings.contexts))
    elif active:
        names = [str(active.get("name"))]
    else:
        raise ConfigError(f"{joined}: no current-context; pass --context NAME")
    return [Target(name, _from_kubeconfig(settings, joined, name)) for name in names]


def _in_cluster_name(settings: KubernetesSettings) -> str:
    named = [c for c in settings.contexts if c != EVERY_CONTEXT]
    return named[0] if named else IN_CLUSTER


def _kubeconfig_files(settings: KubernetesSettings) -> list[str]:
    if settings.kubeconfig:
        path = Path(settings.kubeconfig).expanduser()
        if not path.is_file():
            raise ConfigError(f"--kubeconfig {printable(settings.kubeconfig, 200)}: no such file")
        return [str(path)]
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p.strip()]
    if listed:
        return [p for p in listed if Path(p).expanduser().is_file()]
    default = Path("~/.kube/config").expanduser()
    return [str(default)] if default.is_file() else []


def _from_kubeconfig(settings: KubernetesSettings, files: str, context: str) -> Callable[[], Any]:
    def connect() -> Any:  # Any: the Kubernetes client's objects are untyped
        from kubernetes import client, config  # keeps kubernetes off start-up

        configuration = client.Configuration()
        config.load_kube_config(
            config_file=files,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
        return _client(configuration, settings)

    return connect


def _in_cluster(settings: KubernetesSettings) -> Callable[[], Any]:
    def connect() -> Any:  # Any: the Kubernetes client's objects are untyped
        from kubernetes import client, config  # keeps kubernetes off start-up

        configuration = client.Configuration()
        config.load_incluster_config(client_configuration=configuration)
        return _client(configuration, settings)

    return connect


# Any: the Kubernetes client's objects are untyped
def _client(configuration: Any, settings: KubernetesSettings) -> Any:
    """An ApiClient retrying transient statuses and connection errors a bounded number of times."""
    from kubernetes import client  # keeps kubernetes off start-up
    from urllib3.util.retry import Retry  # keeps urllib3 off start-up

    configuration.retries = Retry(
        total=max(settings.max_attempts - 1, 0),
        backoff_factor=0.2,
        backoff_max=5.0,
        status_forcelist=TRANSIENT_STATUSES,
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
    )
    return client.ApiClient(configuration)


def _one_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else "no detail"
