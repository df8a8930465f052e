"""Sharded GCP and Kubernetes scans: each shard reads only its own projects or contexts, and
every shard reports the whole universe (real clients against the loopback servers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gcp_fixtures import PROD, RESEARCH, scenario
from gcp_server import serve
from k8s_fixtures import fleet, kubeconfig
from k8s_server import serve_kube

from gpu_audit.collectors.gcp.collector import GcpCollector
from gpu_audit.collectors.gcp.connect import (
    GCE_ENDPOINT_ENV,
    GCS_ENDPOINT_ENV,
    MONITORING_ENDPOINT_ENV,
    VERTEX_ENDPOINT_ENV,
)
from gpu_audit.collectors.gcp.settings import GcpSettings
from gpu_audit.collectors.kubernetes.collector import KubernetesCollector
from gpu_audit.collectors.kubernetes.settings import KubernetesSettings
from gpu_audit.collectors.workitems import Shard, shard_of
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap

pytestmark = pytest.mark.server
ENVS = (GCE_ENDPOINT_ENV, MONITORING_ENDPOINT_ENV, GCS_ENDPOINT_ENV, VERTEX_ENDPOINT_ENV)


@pytest.fixture
def gcp(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with serve(scenario()) as url:
        for env in ENVS:
            monkeypatch.setenv(env, url)
        yield


def test_gcp_shards_split_the_projects(gcp: None) -> None:
    projects = (PROD, RESEARCH)
    count = next(n for n in range(2, 40) if len({shard_of(f"gcp:{p}", n) for p in projects}) == 2)
    seen: dict[str, int] = {}
    for index in range(1, count + 1):
        collector = GcpCollector(GcpSettings(projects=projects, timeout=5.0))
        collector.shard = Shard(index, count)
        items = list(collector.collect())
        assert collector.work_items() == tuple(sorted(f"gcp:{p}" for p in projects))
        for resource in (i for i in items if isinstance(i, Resource)):
            assert shard_of(f"gcp:{resource.account}", count) == index
            seen[resource.id] = index
        assert collector.scope().accounts == tuple(
            p for p in projects if shard_of(f"gcp:{p}", count) == index
        )
    whole = [i for i in GcpCollector(GcpSettings(projects=projects, timeout=5.0)).collect()]
    assert set(seen) == {r.id for r in whole if isinstance(r, Resource)}


def kube_scan(tmp_path: Path, shard: Shard | None) -> tuple[list[object], KubernetesCollector]:
    """Every context of the kubeconfig, on a fresh fake (its flaky context fails the same way)."""
    with serve_kube(fleet()) as url:
        config = kubeconfig(tmp_path / "config", url)
        settings = KubernetesSettings(
            kubeconfig=str(config), contexts=("*",), timeout=5, max_attempts=1
        )
        collector = KubernetesCollector(settings)
        collector.shard = shard
        return list(collector.collect()), collector


def test_kubernetes_every_context_and_shards_of_them(tmp_path: Path) -> None:
    whole, every = kube_scan(tmp_path, None)
    universe = every.work_items()
    contexts = sorted(("eks-prod", "gke-dev", "locked", "flaky"))
    assert universe == tuple(f"kubernetes:{c}" for c in contexts)
    assert sorted(every.scope().accounts) == contexts
    union: list[object] = []
    for index in (1, 2, 3):
        items, collector = kube_scan(tmp_path, Shard(index, 3))
        union += items
        assert collector.work_items() == universe
        assert all(shard_of(f"kubernetes:{c}", 3) == index for c in collector.scope().accounts)
    ids = sorted(r.id for r in union if isinstance(r, Resource))
    assert ids == sorted(r.id for r in whole if isinstance(r, Resource)) and ids
    gaps = sorted((g.account or "", g.error) for g in union if isinstance(g, CoverageGap))
    assert gaps == sorted((g.account or "", g.error) for g in whole if isinstance(g, CoverageGap))
