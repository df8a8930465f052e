"""Where budgets and runtime caps come from: native fields, else the gpu-audit/* labels or tags."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_audit.jobs import load_jobs

CASES = {
    "k8s-job.yaml": (
        """apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  labels: {gpu-audit/budget-usd: "250"}
spec:
  activeDeadlineSeconds: 7200
  template:
    spec:
      containers:
        - name: train
          image: train:1
          resources: {limits: {nvidia.com/gpu: 4}}
""",
        250.0,
        2.0,
    ),
    "skypilot.yaml": (
        """name: sweep
resources:
  accelerators: H100:8
  labels: {gpu-audit/budget-usd: "1000", gpu-audit/max-runtime-hours: "6"}
run: python sweep.py
""",
        1000.0,
        6.0,
    ),
    "vertex.yaml": (
        """workerPoolSpecs:
  - machineSpec: {machineType: a2-highgpu-1g}
    replicaCount: 1
    containerSpec: {imageUri: us-docker.pkg.dev/acme/train:3}
scheduling: {timeout: 3600s}
labels: {gpu-audit-budget-usd: "40"}
""",
        40.0,
        1.0,
    ),
    "task.dstack.yml": (
        """type: task
name: train
commands: [python train.py]
resources: {gpu: A100:80GB:8}
max_duration: 12h
tags: {gpu-audit/budget-usd: "900", gpu-audit/max-runtime-hours: "99"}
""",
        900.0,
        12.0,  # the format's own max_duration wins over the label
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_budget_and_runtime_cap_are_read(tmp_path: Path, name: str) -> None:
    text, budget, hours = CASES[name]
    path = tmp_path / name
    path.write_text(text)
    loaded = load_jobs([str(path)])
    assert not loaded.skipped, loaded.skipped
    [job] = loaded.resources
    assert (job.limits.budget_usd, job.limits.max_runtime_hours) == (budget, hours)


def test_a_label_that_is_not_a_number_leaves_the_budget_missing(tmp_path: Path) -> None:
    path = tmp_path / "sky.yaml"
    path.write_text(
        "resources:\n  accelerators: A100:1\n  labels: {gpu-audit/budget-usd: lots}\nrun: x\n"
    )
    [job] = load_jobs([str(path)]).resources
    assert job.limits.budget_usd is None
