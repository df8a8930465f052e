"""Idle after the work ends: dev boxes and benchmark clusters with no teardown, retried benchmarks."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import NOW

from gpu_audit.audit import audit
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import Scope
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.loader import load_policy


def _one(tmp_path: Path, text: str, name: str = "job.yaml") -> Resource:
    path = tmp_path / name
    path.write_text(text)
    (resource,) = load_jobs([str(path)]).resources
    return resource


def _found(resource: Resource) -> dict[str, object]:
    result = audit([resource], load_policy(None), NOW, Scope(command="check"))
    return {f.rule_id: f for f in result.findings}


DEVBOX = "name: dev\nresources:\n  accelerators: L4:1\n  cloud: gcp\n{AUTOSTOP}run: code tunnel\n"


@pytest.mark.parametrize(
    ("autostop", "hours"),
    [("", None), ("  autostop: true\n", 5 / 60), ("  autostop: 30\n", 0.5),
     ("  autostop: 2h\n", 2.0), ("  autostop: {idle_minutes: 10, down: true}\n", 10 / 60)],
)  # fmt: skip
def test_a_dev_box_needs_an_idle_teardown(
    tmp_path: Path, autostop: str, hours: float | None
) -> None:
    resource = _one(tmp_path, DEVBOX.replace("{AUTOSTOP}", autostop))
    assert resource.workload.value == "notebook"
    assert resource.limits.release_hours == (None if hours is None else round(hours, 4))
    finding = _found(resource).get("idle-teardown")
    assert (finding is None) is (hours is not None)
    if finding is not None:  # priced per GPU-hour it sits idle, on the GCP L4 machine
        assert finding.saving_unit == "gpu-hour" and finding.saving_usd  # type: ignore[attr-defined]


MPIJOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: nccl}
spec:
  runPolicy: {POLICY}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - {name: l, image: nccl-tests, command: ["mpirun", "/opt/all_reduce_perf"]}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: w
              image: nccl-tests
              resources: {limits: {nvidia.com/gpu: 8}}
"""


@pytest.mark.parametrize(
    ("policy", "rules"),
    [
        ("{cleanPodPolicy: Running}", set()),  # workers removed when the launcher ends
        ("{cleanPodPolicy: None}", {"idle-teardown"}),  # workers wait on, holding 16 GPUs
        ("{cleanPodPolicy: Running, backoffLimit: 10}", {"benchmark-deadline"}),
        ("{cleanPodPolicy: Running, backoffLimit: 10, activeDeadlineSeconds: 3600}", set()),
        ("{cleanPodPolicy: Running, backoffLimit: 2}", set()),
    ],
)
def test_a_benchmark_ends_with_its_work_and_retries_only_under_a_deadline(
    tmp_path: Path, policy: str, rules: set[str]
) -> None:
    resource = _one(tmp_path, MPIJOB.replace("{POLICY}", policy))
    assert resource.workload.value == "benchmark"
    found = set(_found(resource)) & {"idle-teardown", "benchmark-deadline"}
    assert found == rules
