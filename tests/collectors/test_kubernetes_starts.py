"""`scan --provider kubernetes`: a GPU pod's restarts, resume time and start-up, read through
the official client from the project's loopback Kubernetes API server (tests/collectors/
k8s_server.py) in the API's shapes: `status.conditions[].lastTransitionTime` and
`status.containerStatuses[].restartCount` / `lastState.terminated.finishedAt` (core/v1 Pod).

The pods sit on a Karpenter spot g5.12xlarge (4 × A10G) in us-east-1 and hold one GPU each: a
pod is priced by its GPUs, at the cheapest shape holding one A10G on spot, the bundled
g5.xlarge us-east-1 spot row, $0.397 an hour.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from k8s_fixtures import EKS_ZONE, TAGS, kubeconfig, node, pod
from k8s_server import FakeCluster, FakeKube, serve_kube

from gpu_audit.cli.main import main

SPOT_NODE = "ip-10-0-2-10.ec2.internal"
_CLOCK: list[datetime] = []  # the moment the cluster is built (k8s_fixtures.NOW is import time)


def _iso(delta: timedelta) -> str:
    return (_CLOCK[-1] - delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(
    scheduled: timedelta, ready: timedelta, restarts: int = 0, finished: timedelta | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "ready": True, "restartCount": restarts}
    if finished is not None:
        container["lastState"] = {
            "terminated": {"exitCode": 137, "reason": "Error", "finishedAt": _iso(finished)}
        }
    return {
        "phase": "Running",
        "startTime": _iso(scheduled),
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": _iso(scheduled)},
            {"type": "Initialized", "status": "True", "lastTransitionTime": _iso(scheduled)},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": _iso(ready)},
            {"type": "Ready", "status": "True", "lastTransitionTime": _iso(ready)},
        ],
        "containerStatuses": [container],
    }


def _pod(name: str, status: dict[str, Any]) -> dict[str, Any]:
    made = pod(name, "research", 1, SPOT_NODE, labels={**TAGS, "training.kubeflow.org/job-name": name},
               owner=("PyTorchJob", name))  # fmt: skip
    made["status"] = status
    return made


def cluster() -> FakeKube:
    _CLOCK.append(datetime.now(UTC).replace(microsecond=0))
    spot = node(
        SPOT_NODE,
        {**EKS_ZONE, "node.kubernetes.io/instance-type": "g5.12xlarge",
         "karpenter.sh/capacity-type": "spot"},
        gpus=4,
        provider_id="aws:///us-east-1a/i-0e2e2e2e2e2e2e2e2",
    )  # fmt: skip
    pods = [
        # two restarts; the last container ended 60 min ago, the pod was Ready 52 min ago
        _pod(
            "restarted",
            _status(timedelta(hours=3), timedelta(minutes=52), 2, timedelta(minutes=60)),
        ),
        # never restarted: scheduled 100 min ago, Ready 70 min ago (30 min of image pull)
        _pod("slow-start", _status(timedelta(minutes=100), timedelta(minutes=70))),
        # the control: scheduled 10 h ago, Ready 2 minutes later
        _pod("control", _status(timedelta(hours=10), timedelta(hours=10) - timedelta(minutes=2))),
    ]
    return FakeKube(clusters={"eks": FakeCluster(nodes=[spot], pods=pods)})


def _scan(tmp_path: Path) -> dict[str, Any]:
    with serve_kube(cluster()) as url:
        config = kubeconfig(tmp_path / "kubeconfig", url)
        result = CliRunner().invoke(
            main,
            ["scan", "--provider", "kubernetes", "--kubeconfig", str(config),
             "--context", "eks-prod", "--format", "json"],
        )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _findings(report: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    index = [i for i, r in enumerate(report["resources"]) if r["name"] == name]
    return {f["rule_id"]: f for f in report["findings"] if f["resource"] in index}


def test_restarts_resume_and_start_up_of_gpu_pods(tmp_path: Path) -> None:
    """restarted: resume = Ready (52 min ago) − finishedAt (60 min ago) = 8 minutes, over the
    runbook's 5: a finding; 2 restarts; no start-up (it restarted).
    slow-start: start-up = Ready − PodScheduled = 30 minutes = 0.5 h × $0.397 = $0.1985, of a run
    of 100 minutes so far: 30%, over 10%: a finding.
    control: 2 minutes of 600 (0.33%): nothing."""
    report = _scan(tmp_path)
    pods = {r["name"]: r for r in report["resources"] if r["kind"] == "pod"}
    restarted = pods["restarted"]["run"]
    assert (restarted["restarts"], restarted["interruptions"]) == (2, 2)
    assert (restarted["resume_minutes"], restarted["startup_minutes"]) == (8.0, None)
    assert _findings(report, "restarted")["spot-resume-time"]["actual"] == (
        "run.resume_minutes = 8"
    )
    slow = pods["slow-start"]
    assert slow["run"]["startup_minutes"] == 30.0 and slow["run"]["restarts"] == 0
    assert 29.9 <= slow["run"]["startup_share"] <= 30.0  # 30 of 100 minutes (+ the test's seconds)
    found = _findings(report, "slow-start")["billed-startup"]
    assert found["field"] == "run.startup_share" and "cached image" in found["remediation"]
    control = pods["control"]["run"]
    assert control["startup_minutes"] == 2.0 and control["startup_share"] <= 0.34
    assert control["resume_minutes"] is None
    assert not {"billed-startup", "spot-resume-time"} & set(_findings(report, "control"))
    assert slow["price"]["hourly_usd"] == 0.397 and slow["run"]["startup_usd"] == 0.1985
