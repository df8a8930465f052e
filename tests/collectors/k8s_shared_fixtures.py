"""A cluster whose GPUs are shared, as the NVIDIA GPU Operator, device plugin and HAMi label them.

Context `shared` (token `shared`), every node on-demand in us-east-1, three days old:

- `h100-mig` (p5.4xlarge, one H100, MIG mixed strategy): one `mig-3g.40gb` and four `mig-1g.10gb`
  slices advertised; `trainer-3g` holds the 3g slice, `nb-1g-a` and `nb-1g-b` a 1g slice each;
  two 1g slices are free. 3 + 1 + 1 of the GPU's 7 compute slices held, 2 free.
- `t4-ts` (g4dn.xlarge, one T4, time-sliced 4 ways): `nvidia.com/gpu: 4` advertised against
  `nvidia.com/gpu.count: 1`; `ts-a`, `ts-b`, `ts-c` hold one replica each, one is free.
- `l4-hami` (g6.xlarge, one L4, HAMi): `hami-30` asks 30% of the GPU's memory, `hami-50` 50%.

Context `mixed` (token `mixed`): `h100-mixed` (p5.48xlarge, eight H100s, seven with MIG off and
one cut into 3g + 3g + 1g); `embed-whole` holds a whole H100 and uses a 3g slice's worth of it.

DCGM: the MIG slices report `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (0-1) with `GPU_I_ID` and
`GPU_I_PROFILE`; `nb-1g-a`'s slice is idle while the GPU's other slices are busy. The T4 and L4
report `DCGM_FI_DEV_GPU_UTIL` for the whole GPU, without pod labels.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from k8s_server import FakeCluster, FakeKube, FakePrometheus

NOW = datetime.now(UTC)
ZONE = {
    "topology.kubernetes.io/region": "us-east-1",
    "topology.kubernetes.io/zone": "us-east-1a",
    "eks.amazonaws.com/capacityType": "ON_DEMAND",
}


def _iso(delta: timedelta) -> str:
    return (NOW - delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def node(
    name: str,
    instance_type: str,
    labels: dict[str, str],
    capacity: dict[str, str],
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    full = {"cpu": "16", "memory": "64Gi", "pods": "110", **capacity}
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {**ZONE, "node.kubernetes.io/instance-type": instance_type, **labels},
        "creationTimestamp": _iso(timedelta(days=3)),
    }
    if annotations:
        metadata["annotations"] = annotations
    return {
        "metadata": metadata,
        "spec": {"providerID": f"aws:///us-east-1a/i-{name}"},
        "status": {"capacity": full, "allocatable": full},
    }


def pod(name: str, team: str, node_name: str, limits: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": team,
            "labels": {"team": team, "project": "shared-gpus", "owner": "ops"},
            "creationTimestamp": _iso(timedelta(days=2)),
        },
        "spec": {
            "nodeName": node_name,
            "containers": [
                {"name": "main", "image": "ghcr.io/example/app:1", "resources": {"limits": limits}}
            ],
        },
        "status": {"phase": "Running", "startTime": _iso(timedelta(days=2))},
    }


def shared_cluster() -> FakeCluster:
    h100 = node(
        "h100-mig",
        "p5.4xlarge",
        {
            "nvidia.com/gpu.count": "1",
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "nvidia.com/mig.strategy": "mixed",
            "nvidia.com/mig.config": "custom-3g-4x1g",
            "nvidia.com/mig.capable": "true",
        },
        {"nvidia.com/gpu": "0", "nvidia.com/mig-3g.40gb": "1", "nvidia.com/mig-1g.10gb": "4"},
    )
    t4 = node(
        "t4-ts",
        "g4dn.xlarge",
        {
            "nvidia.com/gpu.count": "1",
            "nvidia.com/gpu.product": "Tesla-T4-SHARED",
            "nvidia.com/gpu.replicas": "4",
            "nvidia.com/gpu.sharing-strategy": "time-slicing",
        },
        {"nvidia.com/gpu": "4"},
    )
    l4 = node(
        "l4-hami",
        "g6.xlarge",
        {
            "nvidia.com/gpu.count": "1",
            "nvidia.com/gpu.product": "NVIDIA-L4",
            "nvidia.com/gpu.memory": "23034",
        },
        {"nvidia.com/gpu": "10"},  # HAMi's device plugin: the GPU split 10 ways
        {"hami.io/node-nvidia-register": "GPU-0a1b2c3d-l4,10,23034,100,NVIDIA-L4,0,true:"},
    )
    slice_3g, slice_1g = {"nvidia.com/mig-3g.40gb": "1"}, {"nvidia.com/mig-1g.10gb": "1"}
    replica = {"nvidia.com/gpu": "1"}
    pods = [
        pod("trainer-3g", "team-a", "h100-mig", slice_3g),
        pod("nb-1g-a", "team-b", "h100-mig", slice_1g),
        pod("nb-1g-b", "team-a", "h100-mig", slice_1g),
        pod("ts-a", "team-a", "t4-ts", replica),
        pod("ts-b", "team-b", "t4-ts", replica),
        pod("ts-c", "team-b", "t4-ts", replica),
        pod("hami-30", "team-a", "l4-hami", {"nvidia.com/gpu": "1", "nvidia.com/gpumem-percentage": "30"}),
        pod("hami-50", "team-b", "l4-hami", {"nvidia.com/gpu": "1", "nvidia.com/gpumem-percentage": "50"}),
    ]  # fmt: skip
    return FakeCluster(nodes=[h100, t4, l4], pods=pods)


def mixed_cluster() -> FakeCluster:
    h100 = node(
        "h100-mixed",
        "p5.48xlarge",
        {
            "nvidia.com/gpu.count": "8",
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "nvidia.com/mig.strategy": "mixed",
        },
        {"nvidia.com/gpu": "7", "nvidia.com/mig-3g.40gb": "2", "nvidia.com/mig-1g.10gb": "1"},
    )
    whole = pod("embed-whole", "team-c", "h100-mixed", {"nvidia.com/gpu": "1"})
    return FakeCluster(nodes=[h100], pods=[whole])


def shared_kube() -> FakeKube:
    return FakeKube(clusters={"shared": shared_cluster(), "mixed": mixed_cluster()})


def kubeconfig(path: Path, server: str) -> Path:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "shared",
        "clusters": [{"name": "loopback", "cluster": {"server": server}}],
        "users": [{"name": t, "user": {"token": t}} for t in ("shared", "mixed")],
        "contexts": [
            {"name": t, "context": {"cluster": "loopback", "user": t}} for t in ("shared", "mixed")
        ],
    }
    path.write_text(yaml.safe_dump(document))
    return path


def _mig(
    instance: int, profile: str, samples: list[float], pod_name: str = "", team: str = ""
) -> Any:
    labels = {
        "__name__": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "gpu": "0",
        "UUID": "GPU-h100-0",
        "Hostname": "h100-mig",
        "GPU_I_ID": str(instance),
        "GPU_I_PROFILE": profile,
    }
    if pod_name:
        labels |= {"namespace": team, "pod": pod_name}
    return labels, samples


def shared_dcgm() -> FakePrometheus:
    series = [
        _mig(1, "3g.40gb", [0.80, 0.90, 0.85, 0.95, 0.75], "trainer-3g", "team-a"),
        _mig(7, "1g.10gb", [0.0, 0.01, 0.02, 0.0, 0.01], "nb-1g-a", "team-b"),  # idle slice
        _mig(8, "1g.10gb", [0.60, 0.70, 0.65, 0.55, 0.50], "nb-1g-b", "team-a"),
        _mig(9, "1g.10gb", [0.0, 0.0, 0.0]),  # free
        _mig(10, "1g.10gb", [0.0, 0.0, 0.0]),  # free
    ]
    util = "DCGM_FI_DEV_GPU_UTIL"
    series.append(({"__name__": util, "gpu": "0", "Hostname": "t4-ts"}, [55.0, 60.0, 65.0, 70.0]))
    series.append(({"__name__": util, "gpu": "0", "Hostname": "l4-hami"}, [30.0, 40.0, 50.0]))
    for gpu in range(7):  # the mixed node's whole GPUs; one held by embed-whole
        labels = {"__name__": util, "gpu": str(gpu), "Hostname": "h100-mixed"}
        if gpu == 0:
            labels |= {"namespace": "team-c", "pod": "embed-whole"}
        series.append((labels, [20.0, 25.0, 30.0, 30.0, 30.0] if gpu == 0 else [0.0, 0.0]))
    return FakePrometheus(series=series)


MIG_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: embed-eval
  labels: {team: team-a, project: shared-gpus, owner: ops}
spec:
  activeDeadlineSeconds: 36000
  template:
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: p5.4xlarge
        topology.kubernetes.io/region: us-east-1
        eks.amazonaws.com/capacityType: ON_DEMAND
      containers:
        - name: eval
          image: ghcr.io/example/eval:1
          resources:
            limits:
              nvidia.com/mig-1g.10gb: 1
      restartPolicy: Never
"""
