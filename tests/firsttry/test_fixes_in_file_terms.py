"""Item 5 of the reader's report (round three): every finding has a fix in the file's own terms,
on the job fixtures and the public corpus (../shared/corpus), through the real `check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED, need_shared
from tests.firsttry.cli import gpu_audit
from tests.report.test_markdown import parse
from tests.report.test_markdown_rendered import _tables

ASKED = ("checkpoint-on-spot", "idle-teardown", "hpo-early-stopping")


def _check(*paths: Path) -> dict:  # type: ignore[type-arg]
    result = gpu_audit("check", *map(str, paths), "--format", "json", "--fail-on", "none")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _text_lines(*paths: Path) -> list[str]:
    result = gpu_audit("check", *map(str, paths), "--format", "text", "--fail-on", "none",
                       columns=400)  # fmt: skip
    return result.stdout.splitlines()


def test_each_asked_rule_ends_with_a_fix_on_the_fixtures() -> None:
    lines = [ln for ln in _text_lines(FIXTURES / "jobs") if any(f" {r}: " in ln for r in ASKED)]
    assert {r for r in ASKED if any(f" {r}: " in ln for ln in lines)} == set(ASKED)
    missing = [line for line in lines if "; fix: " not in line]
    assert not missing, missing


def test_each_asked_rule_ends_with_a_fix_on_the_corpus() -> None:
    need_shared(SHARED / "corpus")
    lines = [ln for ln in _text_lines(SHARED / "corpus") if any(f" {r}: " in ln for r in ASKED)]
    assert lines
    missing = [line for line in lines if "; fix: " not in line]
    assert not missing, missing


@pytest.mark.parametrize(
    ("path", "rule", "key"),
    [("sagemaker/tuning-early-stopping.json", "checkpoint-on-spot", "`CheckpointConfig.S3Uri`"),
     ("skypilot/any-of-alternatives.yaml", "checkpoint-on-spot", "`file_mounts`"),
     ("kubernetes/pytorchjob-spot.yaml", "checkpoint-on-spot", "`args`"),
     ("skypilot/dev-box.yaml", "idle-teardown", "`resources.autostop"),
     ("dstack/dev-environment.dstack.yml", "idle-teardown", "`inactivity_duration`")],
)  # fmt: skip
def test_the_fix_names_the_files_own_key(path: str, rule: str, key: str) -> None:
    lines = [ln for ln in _text_lines(FIXTURES / "jobs" / path) if f" {rule}: " in ln]
    assert lines and all("; fix: " in ln and key in ln.split("; fix: ")[1] for ln in lines), lines


def test_a_hydra_sweep_without_a_pruner_is_not_told_to_set_one(tmp_path: Path) -> None:
    """Hydra's Optuna sweeper cannot prune (issue 48): the file has no field that would stop a
    trial early, so `hpo-early-stopping` asks nothing of it, with or without a `pruner:` key."""
    text = (FIXTURES / "jobs" / "hydra" / "optuna-submitit.yaml").read_text()
    start = text.index("    pruner:")
    end = text.index("    params:")
    job = tmp_path / "sweep.yaml"
    job.write_text(text[:start] + text[end:])
    lines = _text_lines(job)
    assert lines, "the sweep is checked"
    assert not [ln for ln in lines if " hpo-early-stopping: " in ln]


GKE_PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: gke-h100
  labels: {team: nlp, project: llm, owner: ana}
spec:
  runPolicy:
    activeDeadlineSeconds: 14400
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          nodeSelector:
            cloud.google.com/gke-accelerator: nvidia-h100-80gb
            cloud.google.com/gke-spot: "false"
          containers:
            - name: pytorch
              image: trainer:1
              resources:
                limits:
                  nvidia.com/gpu: 8
"""


def test_a_gke_pytorchjob_is_told_gkes_own_labels(tmp_path: Path) -> None:
    job = tmp_path / "pytorchjob.yaml"
    job.write_text(GKE_PYTORCHJOB)
    data = _check(job)
    fixes = {f["rule_id"]: f["message"] for f in data["findings"]}
    gpu = [ln for ln in _text_lines(job) if " gpu-class-cap: " in ln]
    assert gpu, fixes
    assert "`cloud.google.com/gke-accelerator`" in gpu[0].split("; fix: ")[1]
    assert "nvidia.com/gpu.product" not in gpu[0] and "karpenter" not in gpu[0]
    spot = [ln for ln in _text_lines(job) if " spot-for-training: " in ln]
    assert spot and '`cloud.google.com/gke-spot: "true"`' in spot[0].split("; fix: ")[1]
    assert "karpenter" not in spot[0]


@pytest.mark.parametrize(
    ("folder", "own", "foreign"),
    [("wandb", "W&B", ("use_spot", "karpenter", "template variable")),
     ("hydra", "hydra", ("use_spot", "karpenter", "template variable")),
     ("determined", "Determined", ("use_spot", "karpenter", "template variable"))],
)  # fmt: skip
def test_not_evaluated_hints_name_the_formats_own_keys(
    tmp_path: Path, folder: str, own: str, foreign: tuple[str, ...]
) -> None:
    out = tmp_path / "check.md"
    result = gpu_audit("check", str(FIXTURES / "jobs" / folder), "--fail-on", "none", "-o",
                       str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr
    table = next(t for t in _tables(parse(out.read_text())) if t[0][-1] == "How to fix")
    rows = [r for r in table[1:] if r[2] == f"job ({folder})"]
    assert rows
    for row in rows:
        assert not any(word in row[-1] for word in foreign), row
    assert any(own in row[-1] for row in rows), rows
