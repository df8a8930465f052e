"""Fingerprints: rule id + the resource's stable id, surviving a move, a re-tag, a reorder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpu_audit.core.fingerprint import fingerprints, repository_root, resource_key
from gpu_audit.core.resource import Kind, Resource, Severity
from gpu_audit.core.results import Finding
from gpu_audit.jobs import load_jobs

JOB = """\
name: pretrain
resources:
  accelerators: A100:8
  use_spot: false
run: python train.py
---
name: finetune
resources:
  accelerators: L4:1
run: python finetune.py
"""


def _checkout(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    path = root / "jobs" / "train.sky.yaml"
    path.parent.mkdir()
    path.write_text(JOB)
    return path


def test_a_job_is_identified_by_its_repository_path_not_where_the_clone_lives(
    tmp_path: Path,
) -> None:
    first = load_jobs([str(_checkout(tmp_path / "alice" / "repo"))]).resources
    second = load_jobs([str(_checkout(tmp_path / "ci" / "build" / "repo"))]).resources
    keys = [resource_key(r) for r in first]
    assert keys == [resource_key(r) for r in second]
    assert keys == [
        "skypilot:jobs/train.sky.yaml#0:pretrain",
        "skypilot:jobs/train.sky.yaml#1:finetune",
    ]
    repository_root.cache_clear()


def test_outside_a_repository_the_path_is_taken_as_given(tmp_path: Path) -> None:
    path = tmp_path / "loose.yaml"
    path.write_text(JOB)
    (job, _) = load_jobs([str(path)]).resources
    assert resource_key(job) == f"skypilot:{path.as_posix()}#0:pretrain"


def _finding(resource: Resource, rule: str = "spot-for-training") -> Finding:
    return Finding(
        rule_id=rule,
        severity=Severity.HIGH,
        title="t",
        resource=resource,
        field=None,
        expected="e",
        actual="a",
        line=None,
        monthly_savings_usd=None,
    )


def test_instances_survive_a_re_tag_and_rules_are_part_of_the_identity() -> None:
    instance = Resource(
        kind=Kind.INSTANCE, provider="aws", id="i-0abc", account="1", region="us-east-1"
    )
    retagged = replace(instance, tags={"team": "nlp"}, name="renamed", region="us-east-1")
    (a, b, c) = fingerprints(
        [_finding(instance), _finding(retagged), _finding(instance, "owner-tag")]
    )
    assert a == b != c
    assert len(a) == 24 and int(a, 16) >= 0
    other_cloud = Resource(kind=Kind.INSTANCE, provider="gcp", id="i-0abc")
    assert fingerprints([_finding(other_cloud)])[0] != a
