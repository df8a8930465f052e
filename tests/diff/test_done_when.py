"""Issue 25's "done when", end to end through the installed program (`python -m gpu_audit`, a
real process): a commit moves a spot A100 training job to on-demand H100 with a longer cap,
removes a job and adds another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gpu_audit.diff.markdown import HEADERS
from tests.diff.conftest import EVAL_L4, SWEEP_A10G, TRAIN_A100_SPOT, TRAIN_H100_ON_DEMAND, Repo
from tests.diff.test_diff_markdown import _rows
from tests.report.test_markdown import parse


def gpu_audit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_audit", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )  # fmt: skip


def estimates(*files: Path, cwd: Path) -> dict[str, Any]:
    done = gpu_audit("estimate", "--format", "json", *map(str, files), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return {job["job"]: job for job in json.loads(done.stdout)["jobs"]}


def test_the_scenario_of_the_issue(repo: Repo, tmp_path: Path) -> None:
    repo.commit({"jobs/train.yaml": TRAIN_A100_SPOT, "jobs/eval.yaml": EVAL_L4}, "base")
    repo.commit(
        {"jobs/train.yaml": TRAIN_H100_ON_DEMAND, "jobs/eval.yaml": None, "jobs/sweep.yaml": SWEEP_A10G},
        "H100 on demand, 24 h; eval gone; a sweep",
    )  # fmt: skip
    done = gpu_audit("diff", "--base", "HEAD~1", "--format", "json", cwd=repo.path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    jobs = {job["name"]: job for job in report["jobs"]}
    assert {n: j["change"] for n, j in jobs.items()} == {
        "train-llm": "modified",
        "eval": "removed",
        "sweep": "added",
    }

    base = tmp_path / "base"
    base.mkdir()
    for name in ("train", "eval"):
        (base / f"{name}.yaml").write_text(repo.git("show", f"HEAD~1:jobs/{name}.yaml"))
    before = estimates(base / "train.yaml", base / "eval.yaml", cwd=repo.path)
    after = estimates(repo.path / "jobs/train.yaml", repo.path / "jobs/sweep.yaml", cwd=repo.path)
    assert jobs["train-llm"]["before"]["run_usd"] == before["train-llm"]["run_usd"] == 50.93
    assert jobs["train-llm"]["after"]["run_usd"] == after["train-llm"]["run_usd"]
    assert jobs["eval"]["before"]["run_usd"] == before["eval"]["run_usd"]
    assert jobs["sweep"]["after"]["run_usd"] == after["sweep"]["run_usd"]
    total_before = round(before["train-llm"]["run_usd"] + before["eval"]["run_usd"], 2)
    total_after = round(after["train-llm"]["run_usd"] + after["sweep"]["run_usd"], 2)
    assert report["total"] == {
        "before_run_usd": total_before,
        "after_run_usd": total_after,
        "delta_usd": round(total_after - total_before, 2),
        "delta_percent": round(100 * (total_after - total_before) / total_before, 1),
        "changed_jobs": 3,
        "unbounded_jobs": 0,
        "unbounded_hourly_delta_usd": 0,
        "unpriced_jobs": 0,
    }
    new = [(f["rule_id"], f["location"]) for f in jobs["train-llm"]["findings_new"]]
    assert ("spot-for-training", "jobs/train.yaml:4") in new

    done = gpu_audit("diff", "--base", "HEAD~1", "--format", "markdown", cwd=repo.path)
    rows = _rows(parse(done.stdout))
    assert rows[0] == HEADERS and len(HEADERS) == 6
    assert len(rows) == 4 and all(len(row) == 6 for row in rows)
    assert done.stdout.splitlines()[1].startswith("### GPU cost of this change: +\\$")

    gate = gpu_audit("diff", "--base", "HEAD~1", "--fail-on-increase", "50%", cwd=repo.path)
    assert gate.returncode == 1, gate.stderr
    assert "gate: the change costs +" in gate.stderr
    unchanged = gpu_audit("diff", "--base", "HEAD", "--fail-on-increase", "50%", cwd=repo.path)
    assert unchanged.returncode == 0, unchanged.stderr
