"""Templated values are not absent: a tag or field set at deploy time is present, never missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import NOW

from gpu_audit.audit import audit
from gpu_audit.core.results import Scope
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.loader import load_policy

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {team: ml, project: x, owner: OWNER}
spec:
  activeDeadlineSeconds: DEADLINE
  template:
    spec:
      nodeSelector: {karpenter.sh/capacity-type: spot, karpenter.k8s.aws/instance-gpu-name: a10g}
      containers:
        - name: t
          image: pytorch
          command: ["torchrun", "train.py", "--output_dir", "s3://ckpt/run"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
TEMPLATES = ['"${NRP_USER}"', '"{{ .Values.owner }}"', '"$(OWNER)"']


def _judge(tmp_path: Path, owner: str, deadline: str) -> tuple[dict[str, str], set[str]]:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.replace("OWNER", owner).replace("DEADLINE", deadline))
    loaded = load_jobs([str(path)])
    result = audit(loaded.resources, load_policy(None), NOW, Scope(command="check"))
    findings = {f.rule_id: f.actual for f in result.findings}
    unknown = {f"{n.rule_id}:{n.missing}" for n in result.not_evaluated}
    return findings, unknown


@pytest.mark.parametrize("owner", TEMPLATES)
def test_a_templated_tag_is_present(owner: str, tmp_path: Path) -> None:
    findings, _ = _judge(tmp_path, owner, "3600")
    assert "cost-allocation-tags" not in findings


def test_a_missing_tag_is_still_absent(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.replace(", owner: OWNER", "").replace("DEADLINE", "3600"))
    result = audit(load_jobs([str(path)]).resources, load_policy(None), NOW, Scope(command="check"))
    assert "cost-allocation-tags" in {f.rule_id for f in result.findings}


@pytest.mark.parametrize("deadline", ['"${DEADLINE}"', '"{{ .Values.deadline }}"'])
def test_a_templated_runtime_cap_is_not_evaluated_never_missing(
    deadline: str, tmp_path: Path
) -> None:
    findings, unknown = _judge(tmp_path, "alice", deadline)
    assert "job-runtime-cap" not in findings
    assert "job-runtime-cap:limits.max_runtime_hours" in unknown


def test_a_templated_tag_value_is_not_compared(tmp_path: Path) -> None:
    rules = tmp_path / "team.yaml"
    rules.write_text(
        "version: 1\nrules:\n  - id: owner-is-alice\n    title: t\n    severity: low\n"
        "    targets: [job]\n    require: {tags.owner: alice}\n"
    )
    policy = load_policy([str(rules)])
    path = tmp_path / "job.yaml"
    path.write_text(JOB.replace("OWNER", TEMPLATES[0]).replace("DEADLINE", "3600"))
    result = audit(load_jobs([str(path)]).resources, policy, NOW, Scope(command="check"))
    assert not result.findings
    assert [(n.rule_id, n.missing) for n in result.not_evaluated] == [
        ("owner-is-alice", "tags.owner")
    ]
