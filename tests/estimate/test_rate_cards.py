"""Every dollar on the rate card the job is billed on: a SageMaker or Vertex job file costs the same
in `check`, `estimate`, `diff` and `scan`, on the service's own card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.diff.conftest import Repo, diff_json

SAGEMAKER = {
    "TrainingJobName": "ranker-train",
    "AlgorithmSpecification": {"TrainingImage": "img", "TrainingInputMode": "File"},
    "RoleArn": "arn:aws:iam::111122223333:role/sm",
    "ResourceConfig": {"InstanceType": "ml.g5.2xlarge", "InstanceCount": 2, "VolumeSizeInGB": 50},
    "StoppingCondition": {"MaxRuntimeInSeconds": 36000},
    "HyperParameters": {"sagemaker_program": "train.py"},
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
}
VERTEX = """\
displayName: ranker-vertex
jobSpec:
  workerPoolSpecs:
    - machineSpec:
        machineType: g2-standard-12
        acceleratorType: NVIDIA_L4
        acceleratorCount: 1
      replicaCount: 1
      pythonPackageSpec:
        executorImageUri: us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-1:latest
        pythonModule: trainer.task
  scheduling:
    timeout: 36000s
"""
# (file, card source, the card's on-demand rate for the whole job)
CASES = {
    "sagemaker": ("train.json", "SageMaker AI pricing page", round(2 * 1.515, 5)),
    "vertex": ("vertex.yaml", "Vertex AI custom training", 1.15048),
}


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.stdout


def _write(folder: Path) -> None:
    (folder / "train.json").write_text(json.dumps(SAGEMAKER))
    (folder / "vertex.yaml").write_text(VERTEX)


@pytest.mark.parametrize("service", sorted(CASES))
def test_check_estimate_and_diff_price_the_job_on_its_card(
    service: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = Repo(tmp_path / "repo")
    monkeypatch.chdir(repo.path)
    name, source, hourly = CASES[service]
    repo.commit({"jobs/.keep": ""}, "base")
    _write(repo.path / "jobs")
    path = str(repo.path / "jobs" / name)
    report = json.loads(_run("check", path, "--format", "json"))
    resource = report["resources"][0]
    assert resource["service"] == service
    assert resource["price"]["on_demand_hourly_usd"] == hourly
    assert source in resource["price"]["source"]
    estimate = json.loads(_run("estimate", path, "--format", "json"))["jobs"][0]
    assert estimate["on_demand"]["hourly_usd"] == hourly
    assert source in estimate["on_demand"]["source"]
    assert estimate["run_usd"] == resource["estimate"]["run_usd"] == round(hourly * 10, 2)
    _, diff = diff_json("--base", "HEAD")
    after = {j["name"]: j for j in diff["jobs"]}[resource["name"]]["after"]
    assert after["hourly_usd"] == hourly and after["run_usd"] == estimate["run_usd"]


def test_scan_prices_the_same_job_as_check(tmp_path: Path) -> None:
    _write(tmp_path)
    checked = json.loads(_run("check", str(tmp_path / "train.json"), "--format", "json"))
    inventory: dict[str, Any] = {
        "version": 1,
        "captured_at": "2026-11-20T06:00:00Z",
        "resources": [
            {
                "kind": "job", "provider": "aws", "service": "sagemaker", "id": "ranker-train",
                "region": "us-east-1", "instance_type": "ml.g5.2xlarge", "state": "running",
                "capacity": "on-demand", "gpu": {"count": 2}, "workload": "training",
            }
        ],
    }  # fmt: skip
    (tmp_path / "inventory.yaml").write_text(yaml.safe_dump(inventory))
    scanned = json.loads(
        _run("scan", "--inventory", str(tmp_path / "inventory.yaml"), "--format", "json")
    )
    ours, theirs = checked["resources"][0]["price"], scanned["resources"][0]["price"]
    assert ours["on_demand_hourly_usd"] == theirs["on_demand_hourly_usd"] == 3.03
    assert ours["source"] == theirs["source"]


K8S_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: finetune}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {SELECTOR}
      containers:
        - name: train
          image: pytorch/pytorch
          command: ["torchrun", "train.py"]
          resources:
            limits: {nvidia.com/gpu: 1}
"""


@pytest.mark.parametrize(
    ("selector", "service", "priced_on"),
    [
        ("{nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}", "kubernetes", None),
        ("{cloud.google.com/gke-accelerator: nvidia-l4}", "gce", "g2-standard-4"),
        ("{karpenter.k8s.aws/instance-gpu-name: a10g}", "ec2", "g5.xlarge"),
    ],
)
def test_a_kubernetes_manifest_is_priced_only_on_the_cloud_its_labels_name(
    selector: str, service: str, priced_on: str | None, tmp_path: Path
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(K8S_JOB.replace("{SELECTOR}", selector))
    resource = json.loads(_run("check", str(path), "--format", "json"))["resources"][0]
    assert resource["service"] == service
    estimate = json.loads(_run("estimate", str(path), "--format", "json"))["jobs"][0]
    if priced_on is None:  # names no cloud: unpriced, never priced as some cloud's machine
        assert resource["price"]["hourly_usd"] is None and estimate["on_demand"] is None
    else:
        assert estimate["on_demand"]["instance_type"] == priced_on
        assert estimate["on_demand"]["hourly_usd"] == resource["price"]["on_demand_hourly_usd"]


def test_alternatives_are_judged_and_priced_on_the_cheapest_accepted(tmp_path: Path) -> None:
    path = tmp_path / "sky.yaml"
    path.write_text(
        "name: tune\nresources:\n  accelerators: {H100: 8, H200: 8}\n  cloud: aws\n"
        "run: torchrun train.py\n"
    )
    report = json.loads(_run("check", str(path), "--format", "json"))
    resource = report["resources"][0]
    assert resource["gpu"]["model"] == "H100" and "judged by the cheapest" in resource["note"]
    assert resource["price"]["on_demand_hourly_usd"] == 55.04  # p5.48xlarge, not p5en


def test_a_share_of_a_larger_machine_says_so(tmp_path: Path) -> None:
    path = tmp_path / "sky.yaml"
    path.write_text("name: one\nresources:\n  accelerators: A100:1\n  cloud: aws\nrun: x.py\n")
    estimate = json.loads(_run("estimate", str(path), "--format", "json"))["jobs"][0]
    assert estimate["on_demand"]["instance_type"] == "p4d.24xlarge (whole: 8 GPUs for 1 asked)"
