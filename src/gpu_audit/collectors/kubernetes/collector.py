"""Kubernetes collector: GPU nodes and the pods holding GPUs, per kubeconfig context, read-only.

Calls: `list nodes`, `list pods` and `list jobs` (batch/v1; all namespaces; a role without Jobs
leaves their failed pods uncounted), paginated with `limit` and `continue`, and
eleven Prometheus queries for DCGM utilization when `prometheus` is set (four for MIG slices,
three for profiling activity).
The client is imported inside the calls (see connect.py).

A node's `id` is its provider id (`aws:///us-east-1a/i-…`, `gce://project/zone/name`), which is
how a scan that also reads the cloud joins the two views; without one, `context/node-name`.
A pod's `id` is `context/namespace/name`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from gpu_audit.collectors.interface import Collector, Progress, ProgressCallback
from gpu_audit.collectors.kubernetes import dcgm
from gpu_audit.collectors.kubernetes.connect import Target, targets
from gpu_audit.collectors.kubernetes.resources import ClusterView, node_resource, pod_resource
from gpu_audit.collectors.kubernetes.retries import count_retries, with_retries
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.collectors.kubernetes.universe import item_key
from gpu_audit.core.redact import redact_urls
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap, Scope

_LIVE_PHASES = "status.phase!=Succeeded,status.phase!=Failed"


class KubernetesCollector(Collector[KubernetesSettings]):
    """One context after the other (a scan reads a few clusters); gaps per unreadable context."""

    name = "kubernetes"

    def __init__(
        self, settings: KubernetesSettings, progress: ProgressCallback | None = None
    ) -> None:
        super().__init__(settings, progress)
        self._contexts: list[str] = []
        self._regions: set[str] = set()
        self._universe: tuple[str, ...] = ()

    def work_items(self) -> tuple[str, ...]:
        return self._universe

    def scope(self) -> Scope:
        return Scope(
            command="scan",
            providers=(self.name,),
            accounts=tuple(self._contexts),
            regions=tuple(sorted(self._regions)),
        )

    def collect(self) -> Iterator[Resource | CoverageGap]:
        """Every GPU node and GPU pod of the kubeconfig contexts in scope, with DCGM utilization
        where a metrics source is set, and a coverage gap per context that fails."""
        every = targets(self.settings)
        self._universe = tuple(sorted({item_key(t.context) for t in every}))
        found = [t for t in every if self.holds(item_key(t.context))]
        self._contexts = [t.context for t in found]
        if not found:
            return
        now = datetime.now(UTC)
        utilization, note = self._utilization(now)
        count = 0
        for done, target in enumerate(found, start=1):
            self._tick(Progress(done - 1, len(found), count, f"reading {target.context}"))
            for item in self._read(target, utilization, note):
                if isinstance(item, Resource):
                    count += 1
                    if item.region:
                        self._regions.add(item.region)
                yield item
            self._tick(Progress(done, len(found), count))

    def _utilization(self, now: datetime) -> tuple[dcgm.DcgmUtilization | None, str | None]:
        if not self.settings.prometheus:
            return None, None
        try:
            return dcgm.fetch(self.settings, now), None
        except dcgm.MetricsError as exc:
            return None, redact_urls(f"utilization unavailable: {exc}")

    def _read(
        self, target: Target, utilization: dcgm.DcgmUtilization | None, note: str | None
    ) -> list[Resource | CoverageGap]:
        from kubernetes.client import CoreV1Api  # keeps kubernetes off start-up
        from kubernetes.client.exceptions import ApiException  # keeps kubernetes off start-up

        # keeps kubernetes off start-up
        from kubernetes.config.config_exception import ConfigException
        from urllib3.exceptions import HTTPError  # keeps urllib3 off start-up

        try:
            api = CoreV1Api(target.connect())
            with api.api_client:
                nodes = self._list(api.list_node)
                pods = self._list(api.list_pod_for_all_namespaces, field_selector=_LIVE_PHASES)
                jobs = self._jobs(api.api_client)
        except ApiException as exc:
            return [self._gap(target, _api_error(exc), _api_message(exc))]
        except HTTPError as exc:  # urllib3's retry chain: one line, not its repr
            return [self._gap(target, "Unreachable", _unreachable(exc))]
        except (ConfigException, OSError, InvalidResponse) as exc:
            return [self._gap(target, type(exc).__name__, _one_line(str(exc)))]
        view = ClusterView.build(target.context, nodes, pods, self.settings)
        out: list[Resource | CoverageGap] = []
        for node in view.gpu_nodes:
            out.append(node_resource(view, node, utilization, note))
        counted = count_retries(((p.raw, p.owner) for p in view.gpu_pods), jobs)
        for pod in view.gpu_pods:
            meta = pod.raw.get("metadata") or {}
            found = counted.get((str(meta.get("namespace", "")), str(meta.get("name", ""))))
            out.append(with_retries(pod_resource(view, pod, utilization, note), found, jobs))
        return out

    def _jobs(self, client: Any) -> list[dict[str, Any]] | None:
        """Every batch Job (their `status.failed`); None where they cannot be listed (a role
        without Jobs: 403; or an error answer): the pods are judged all the same, without the
        Jobs' failed pods, and each Job pod's note says so."""
        from kubernetes.client import BatchV1Api  # the kubernetes extra, imported when scanning
        from kubernetes.client.exceptions import ApiException  # the kubernetes extra

        try:
            return self._list(BatchV1Api(client).list_job_for_all_namespaces)
        except (ApiException, InvalidResponse):
            return None

    def _list(self, call: Any, **query: Any) -> list[dict[str, Any]]:
        """Every item of a list call, page by page (`limit` and `continue`)."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        timeout = self.settings.timeout
        while True:
            page_args: dict[str, Any] = {"limit": self.settings.page_size, **query}
            if token:
                page_args["_continue"] = token
            response = call(**page_args, _preload_content=False, _request_timeout=timeout)
            try:
                page = json.loads(response.data or b"{}")
            except ValueError as exc:  # a proxy's HTML page, a truncated body
                detail = f"the API answered something that is not JSON ({exc})"
                raise InvalidResponse(detail) from None
            if not isinstance(page, dict):
                raise InvalidResponse("the API answered JSON that is not a list object")
            items.extend(i for i in page.get("items") or () if isinstance(i, dict))
            token = (page.get("metadata") or {}).get("continue") or None
            if not token:
                return items

    def _gap(self, target: Target, error: str, message: str) -> CoverageGap:
        return CoverageGap(
            provider="kubernetes",
            scope=f"context {target.context}",
            error=error,
            message=redact_urls(message),
            account=target.context,
        )

    def _tick(self, progress: Progress) -> None:
        if self.progress is not None:
            self.progress(progress)


_ERRNO = re.compile(r"\[Errno -?\d+\] ([^\"'()\]]+)")


def _unreachable(exc: Exception) -> str:
    """`cannot connect to https://10.0.0.1:6443: Connection refused (…)` for a urllib3 error."""
    pool = getattr(exc, "pool", None)
    server = f"{pool.scheme}://{pool.host}:{pool.port}" if pool is not None else "the API server"
    found = _ERRNO.search(str(exc))
    why = found.group(1).strip() if found else type(getattr(exc, "reason", exc)).__name__
    return (
        f"cannot connect to {server}: {why} (is the kubeconfig's server right, and the "
        "cluster up and reachable from here?)"
    )


def _api_error(exc: Any) -> str:
    reason = str(getattr(exc, "reason", "") or "ApiException").strip()
    status = getattr(exc, "status", None)
    return f"{reason} ({status})" if status else reason


def _api_message(exc: Any) -> str:
    """The Status object's message when the server sent one (`nodes is forbidden: User …`)."""
    body = getattr(exc, "body", None)
    try:
        message = json.loads(body).get("message") if body else None
    except (ValueError, AttributeError):
        message = None
    return _one_line(str(message or exc))


def _one_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else "no detail"


class InvalidResponse(Exception):
    """A list call whose answer is not a Kubernetes list: the context is a gap, not a crash."""
