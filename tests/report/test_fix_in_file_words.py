"""Issue 38.2: a finding says what to change in the key its own file uses, in every output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from tests.conftest import FIXTURES

DSTACK = """\
type: task
name: train
commands:
  - python train.py
resources:
  gpu: A100:8
spot_policy: on-demand
"""
AZUREML = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
command: python train.py
environment: azureml:pytorch@latest
resources:
  instance_type: Standard_NC24ads_A100_v4
queue_settings:
  job_tier: standard
"""
RAY = """\
cluster_name: trainer
provider:
  type: aws
  region: us-east-1
available_node_types:
  gpu_worker:
    node_config:
      InstanceType: p4d.24xlarge
      InstanceMarketOptions:
        MarketType: on-demand
    min_workers: 1
    max_workers: 2
    resources: {}
head_node_type: gpu_worker
setup_commands:
  - pip install torch
head_start_ray_commands:
  - python train.py
"""
K8S_NO_MODEL = """\
apiVersion: batch/v1
kind: Job
metadata: {name: trainer, labels: {team: ml, project: x, owner: me}}
spec:
  template:
    spec:
      containers:
        - name: t
          image: pytorch/pytorch
          command: ["torchrun", "train.py"]
          resources: {limits: {nvidia.com/gpu: 8}}
"""
SKYPILOT = (FIXTURES / "estimate" / "skypilot-no-cap.yaml").read_text()

# (file name, text, rule, the key the file uses, as the fix names it)
CASES = {
    "skypilot-spot": ("sky.yaml", SKYPILOT, "spot-for-training", "`resources.use_spot: true`"),
    "skypilot-cap": ("sky.yaml", SKYPILOT, "job-runtime-cap", "`gpu-audit/max-runtime-hours`"),
    "dstack-spot": ("t.dstack.yml", DSTACK, "spot-for-training", "`spot_policy: spot`"),
    "dstack-cap": ("t.dstack.yml", DSTACK, "job-runtime-cap", "`max_duration"),
    "azureml-spot": ("aml.yaml", AZUREML, "spot-for-training", "`tier: low_priority`"),
    "azureml-cap": ("aml.yaml", AZUREML, "job-runtime-cap", "`limits.timeout`"),
    "ray-cap": ("ray.yaml", RAY, "job-runtime-cap", "`gpu-audit/max-runtime-hours`"),
    "k8s-cap": ("job.yaml", K8S_NO_MODEL, "job-runtime-cap", "`activeDeadlineSeconds`"),
    "sagemaker-trials": (
        "tune.yaml",
        (FIXTURES / "jobs" / "sagemaker" / "tuning-no-early-stopping.yaml").read_text(),
        "hpo-trial-cap",
        "`ResourceLimits.MaxNumberOfTrainingJobs`",
    ),
    "vertex-spot": (
        "custom.json",
        (FIXTURES / "jobs" / "vertex" / "custom-job.json").read_text(),
        "spot-for-training",
        "`scheduling.strategy: SPOT`",
    ),
}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


@pytest.mark.parametrize("case", list(CASES))
def test_a_finding_names_the_key_its_file_uses_in_every_output(tmp_path: Path, case: str) -> None:
    name, text, rule, key = CASES[case]
    path = tmp_path / name
    path.write_text(text)
    _, out = run("check", str(path), "--format", "json")
    [finding] = [f for f in json.loads(out)["findings"] if f["rule_id"] == rule]
    assert key in finding["message"]  # what `message` carries: text, SARIF, JSON, PR comment
    _, out = run("check", str(path), "--format", "text")  # the pre-commit hook's output
    [line] = [ln for ln in out.splitlines() if f" {rule}: " in ln]
    assert "; fix: " in line and key in line
    _, out = run("check", str(path), "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert any(r["ruleId"] == rule and key in r["message"]["text"] for r in results)
    _, out = run("check", str(path), "--format", "markdown")
    assert any(ln.startswith("**Fix in the file:**") and key in ln for ln in out.splitlines())
    _, out = run("check", str(path), "--format", "table")
    fixes = " ".join(ln.strip() for ln in out.splitlines() if ln.startswith(("fix ", "  ")))
    assert f"fix {rule} (" in fixes and key in fixes


def test_a_job_that_names_no_gpu_model_is_told_how_to_state_it(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(K8S_NO_MODEL)
    _, out = run("check", str(path), "--format", "markdown")
    rows = [ln for ln in out.splitlines() if ln.startswith("| gpu-class-cap | gpu.model |")]
    assert rows and "`nvidia.com/gpu.product`" in rows[0]
    assert "`node.kubernetes.io/instance-type`" in rows[0] and "waive" not in rows[0]
    dstack = tmp_path / "t.dstack.yml"
    dstack.write_text(DSTACK.replace("gpu: A100:8", "gpu: 8"))
    _, out = run("check", str(dstack), "--format", "markdown")
    rows = [ln for ln in out.splitlines() if "| gpu.model |" in ln]
    assert rows and all("`gpu: A100:8`" in r and "waive" not in r for r in rows)


def test_the_tag_rule_names_the_missing_keys_once(tmp_path: Path) -> None:
    path = tmp_path / "sky.yaml"
    path.write_text(SKYPILOT)
    _, out = run("check", str(path), "--format", "text")
    [line] = [ln for ln in out.splitlines() if "cost-allocation-tags" in ln]
    for key in ("tags.team", "tags.project", "tags.owner"):
        assert line.count(key) == 1
    assert "fix: add the keys to `resources.labels`" in line
