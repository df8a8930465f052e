"""`scan --provider kubernetes`: retries counted per run (the Job, PyTorchJob owning a GPU pod)
and per sweep (a Katib Experiment), through the official client against the project's loopback
API server (tests/collectors/k8s_server.py) in core/v1 Pod and batch/v1 Job shapes: pods'
`containerStatuses[].restartCount`, a Job's `status.failed`, Katib's
`katib.kubeflow.org/experiment` label; shown beside the resume time in each pod's `run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from k8s_fixtures import EKS_ZONE, TAGS, kubeconfig, node, pod
from k8s_server import FakeCluster, FakeKube, serve_kube

from gpu_audit.cli.main import main

SPOT_NODE = "ip-10-0-2-11.ec2.internal"
KATIB = "katib.kubeflow.org/experiment"


def _pod(
    name: str, owner: tuple[str, str], restarts: int, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    made = pod(name, "research", 1, SPOT_NODE, labels={**TAGS, **(labels or {})}, owner=owner)
    made["status"]["containerStatuses"] = [
        {"name": "main", "ready": True, "restartCount": restarts, "image": "trainer:1"}
    ]
    return made


def _job(name: str, failed: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A batch/v1 Job as the API lists it (`restartPolicy: Never`: a failed pod is replaced)."""
    status: dict[str, Any] = {"active": 1, "startTime": "2026-12-04T00:00:00Z"}
    if failed:
        status["failed"] = failed
    return {
        "metadata": {"name": name, "namespace": "research", "labels": labels or {}},
        "spec": {"backoffLimit": 6, "template": {"spec": {"restartPolicy": "Never"}}},
        "status": status,
    }


def cluster(jobs_forbidden: bool = False) -> FakeKube:
    spot = node(
        SPOT_NODE,
        {**EKS_ZONE, "node.kubernetes.io/instance-type": "g5.12xlarge",
         "karpenter.sh/capacity-type": "spot"},
        gpus=4,
        provider_id="aws:///us-east-1a/i-0f3f3f3f3f3f3f3f3",
    )  # fmt: skip
    trial = {KATIB: "lr-search"}
    pods = [
        # a PyTorchJob of two pods: 2 + 1 container restarts
        _pod("bert-master-0", ("PyTorchJob", "bert"), 2),
        _pod("bert-worker-0", ("PyTorchJob", "bert"), 1),
        # a Katib sweep of two trials, each a Job: the first lost 2 pods (status.failed), the
        # second's live pod restarted once
        _pod("lr-search-aaa-x1", ("Job", "lr-search-aaa"), 0,
             {**trial, "katib.kubeflow.org/trial": "lr-search-aaa"}),
        _pod("lr-search-bbb-x2", ("Job", "lr-search-bbb"), 1,
             {**trial, "katib.kubeflow.org/trial": "lr-search-bbb"}),
        # the control: a Job that never failed
        _pod("control-z9", ("Job", "control"), 0),
    ]  # fmt: skip
    jobs = [
        _job("lr-search-aaa", 2, trial),
        _job("lr-search-bbb", 0, trial),
        _job("control", 0),
        _job("cpu-only", 5),  # no GPU pod: not a GPU run, not counted anywhere
    ]
    made = FakeCluster(nodes=[spot], pods=pods, jobs=jobs, jobs_forbidden=jobs_forbidden)
    return FakeKube(clusters={"eks": made})


def _scan(tmp_path: Path, fake: FakeKube) -> dict[str, Any]:
    with serve_kube(fake) as url:
        config = kubeconfig(tmp_path / "kubeconfig", url)
        result = CliRunner().invoke(
            main,
            ["scan", "--provider", "kubernetes", "--kubeconfig", str(config),
             "--context", "eks-prod", "--format", "json"],
        )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in report["resources"] if r["kind"] == "pod"}


def _counts(run: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("restarts", "job", "job_restarts", "sweep", "sweep_restarts", "sweep_runs")
    return tuple(run[k] for k in keys)


def test_restarts_per_run_and_per_sweep(tmp_path: Path) -> None:
    """bert: 2 + 1 = 3; lr-search-aaa: 0 live restarts + 2 failed pods = 2; lr-search-bbb: 1 +
    0 = 1; the sweep lr-search: 2 + 1 = 3 over 2 runs; control: 0."""
    fake = cluster()
    pods = _runs(_scan(tmp_path, fake))
    assert _counts(pods["bert-master-0"]["run"]) == (2, "PyTorchJob/bert", 3, None, None, None)
    assert _counts(pods["bert-worker-0"]["run"]) == (1, "PyTorchJob/bert", 3, None, None, None)
    assert _counts(pods["lr-search-aaa-x1"]["run"]) == (
        0, "Job/lr-search-aaa", 2, "Experiment/lr-search", 3, 2,
    )  # fmt: skip
    assert _counts(pods["lr-search-bbb-x2"]["run"]) == (
        1, "Job/lr-search-bbb", 1, "Experiment/lr-search", 3, 2,
    )  # fmt: skip
    assert _counts(pods["control-z9"]["run"]) == (0, "Job/control", 0, None, None, None)
    # said beside the resume time in the pod's note, where there is something to say
    note = pods["lr-search-aaa-x1"]["note"]
    assert note.endswith(
        "Job/lr-search-aaa: 2 restarts; Experiment/lr-search: 3 restarts over 2 runs"
    )
    assert "restarts" not in pods["control-z9"]["note"]
    # reads only: nodes, pods and jobs, each listed
    paths = {r.path for r in fake.requests}
    assert paths == {"/api/v1/nodes", "/api/v1/pods", "/apis/batch/v1/jobs"}
    assert {r.method for r in fake.requests} == {"GET"}


def test_a_role_without_jobs_still_counts_the_pods_and_says_what_is_missing(
    tmp_path: Path,
) -> None:
    report = _scan(tmp_path, cluster(jobs_forbidden=True))
    assert report["coverage_gaps"] == []  # the pods are judged all the same
    pods = _runs(report)
    aaa = pods["lr-search-aaa-x1"]
    assert _counts(aaa["run"]) == (0, "Job/lr-search-aaa", 0, "Experiment/lr-search", 1, 2)
    said = "Job/lr-search-aaa: 0 restarts (its failed pods not counted: Jobs could not be listed)"
    assert said in aaa["note"]
    assert pods["bert-master-0"]["run"]["job_restarts"] == 3  # a PyTorchJob needs no Job read


def test_hostile_statuses_count_as_nothing_and_crash_nothing() -> None:
    """A restart count that is text, a status that is a list, a Job whose `failed` is text:
    counted as none, never a traceback (the pod is still judged)."""
    from gpu_audit.collectors.kubernetes.retries import count_retries
    from gpu_audit.collectors.kubernetes.starts import pod_starts

    odd = {"containerStatuses": [{"restartCount": "3", "lastState": "gone"},
                                 {"restartCount": True, "lastState": {"terminated": []}}]}  # fmt: skip
    assert (pod_starts(odd).restarts, pod_starts(odd).resume_minutes) == (0, None)
    raw = {"metadata": {"name": "p", "namespace": "n", "labels": ["not", "a", "map"]},
           "status": odd}  # fmt: skip
    jobs = [{"metadata": {"name": "j", "namespace": "n"}, "status": {"failed": "2"}},
            {"metadata": "junk", "status": []}]  # fmt: skip
    counted = count_retries([(raw, ("Job", "j"))], jobs)
    assert counted[("n", "p")].job_restarts == 0 and counted[("n", "p")].sweep is None
