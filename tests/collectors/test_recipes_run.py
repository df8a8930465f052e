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
    # The pods' settings file (a mounted ConfigMap in a cluster) names the regions the
    # organisation uses: every region of every account would cost the moto server minutes.
    (tmp_path / ".gpu-audit.yaml").write_text("aws:\n  regions: [us-east-1, eu-west-1]\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["GPU_AUDIT_RUN_ID"] = "gpu-audit-shards"  # what the downward API gives every pod
    env.pop("AWS_BATCH_JOB_ARRAY_INDEX", None)
    # The pods run as the Indexed Job runs them: `parallelism` at a time, each index once.
    indexes = list(range(shards["completions"]))
    width = shards["parallelism"]
    for start in range(0, len(indexes), width):
        shell = scan_shell.replace("/shards", str(volume))
        _run_pods(shell, env, indexes[start : start + width], tmp_path)
    assert len(list(volume.glob("shard-*.json"))) == shards["completions"]
    done = subprocess.run(
        ["/bin/sh", "-c", merge_shell.replace("/shards", str(volume))],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: findings at or above high
    assert gpu in (volume / "audit.md").read_text()
    with sqlite3.connect(volume / "audits.db") as db:
        assert db.execute("select count(*) from audits").fetchone() == (1,)


def _run_pods(shell: str, env: dict[str, str], indexes: list[int], cwd: Path) -> None:
    """One `sh -c` per index, at once; each must exit 0, and none outlives the test."""
    pods = [
        subprocess.Popen(
            ["/bin/sh", "-c", shell],
            env={**env, "JOB_COMPLETION_INDEX": str(index)},
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in indexes
    ]
    try:
        for pod in pods:
            _, err = pod.communicate(timeout=300)
            assert pod.returncode == 0, err
    finally:
        for pod in pods:
            if pod.poll() is None:
                pod.kill()
                pod.communicate()
