"""The Kubernetes recipe's shell commands, run as the pods would (one process per index, sh -c),
against a moto organisation: every index writes its shard, and the merge Job's command merges
them into one audit and one history record."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

RECIPE = Path(__file__).resolve().parents[2] / "docs" / "recipes" / "k8s-indexed-job.yaml"
Fleet = Any  # conftest.Fleet

pytestmark = pytest.mark.server


def test_indexed_job_then_merge_job_commands(aws_fleet: Fleet, tmp_path: Path) -> None:
    org = aws_fleet.client("organizations", "us-east-1")
    org.create_organization(FeatureSet="ALL")
    for n in range(3):
        org.create_account(AccountName=f"team-{n}", Email=f"team-{n}@example.com")
    (gpu,) = aws_fleet.launch("us-east-1", "g5.xlarge", tags={"workload": "training"})
    documents = {d["metadata"]["name"]: d for d in yaml.safe_load_all(RECIPE.read_text())}
    shards, merge = documents["gpu-audit-shards"]["spec"], documents["gpu-audit-merge"]["spec"]
    scan_shell = shards["template"]["spec"]["containers"][0]["command"][2]
    merge_shell = merge["template"]["spec"]["containers"][0]["command"][2]
    volume = tmp_path / "shards"
    volume.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["GPU_AUDIT_RUN_ID"] = "gpu-audit-shards"  # what the downward API gives every pod
    env.pop("AWS_BATCH_JOB_ARRAY_INDEX", None)
    for index in range(shards["completions"]):
        done = subprocess.run(
            ["/bin/sh", "-c", scan_shell.replace("/shards", str(volume))],
            env={**env, "JOB_COMPLETION_INDEX": str(index)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    assert len(list(volume.glob("shard-*.json"))) == shards["completions"]
    done = subprocess.run(
        ["/bin/sh", "-c", merge_shell.replace("/shards", str(volume))],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: findings at or above high
    assert gpu in (volume / "audit.md").read_text()
    with sqlite3.connect(volume / "audits.db") as db:
        assert db.execute("select count(*) from audits").fetchone() == (1,)
