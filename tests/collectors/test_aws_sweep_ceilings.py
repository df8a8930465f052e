"""A finished sweep held to the GPU-hours its file allowed (issue 34 item 3): `check --history`
records the tuning file's bound and commit in a real SQLite file, and `scan --since` with the same
history reads it back for the moto-backed 20-trial sweep of test_aws_sweeps.py.

By hand: the file's bound is 20 trials × 2.5 h (MaxRuntimeInSeconds 9,000) × 2 GPUs (2 ×
ml.g5.xlarge, one A10G each) = 100 GPU-hours. The sweep used trial i's billable seconds
(3,000 + 100 i) × 2 ÷ 5, × 2 instances × 1 GPU: (20 × 1,200 + 40 × 190) × 2 = 63,200 GPU-seconds,
17.5556 GPU-hours, 17.56% of the bound.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tests.collectors.test_aws_sweeps import REGION, SINCE, build_sweep, sagemaker  # noqa: F401
from tests.conftest import FIXTURES

from gpu_audit.cli.main import main

USED = round(63_200 / 3600, 4)  # 17.5556


def _tuning_file(repo: Path, name: str, trials: int = 20, seconds: int = 9000) -> Path:
    document = json.loads((FIXTURES / "sweeps" / "sagemaker-tuning.json").read_text())
    document["HyperParameterTuningJobName"] = name
    limits = document["HyperParameterTuningJobConfig"]["ResourceLimits"]
    limits["MaxNumberOfTrainingJobs"] = trials
    document["TrainingJobDefinition"]["StoppingCondition"]["MaxRuntimeInSeconds"] = seconds
    path = repo / "sweeps" / "lr-sweep.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2))
    return path


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env=env, check=True)
    return done.stdout.decode().strip()


def _committed(repo: Path) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "sweep")
    return _git(repo, "rev-parse", "HEAD")


def _check(path: Path, db: Path) -> None:
    result = CliRunner().invoke(main, ["check", str(path), "--history", str(db), "-q"])
    assert result.exit_code in (0, 1), result.output  # its ceiling is over its $100 budget


def _scan(db: Path, *args: str) -> dict[str, Any]:
    command = ["scan", "--provider", "aws", "--region", REGION, "--service", "sagemaker"]
    result = CliRunner().invoke(
        main, [*command, "--since", SINCE, "--history", str(db), "--format", "json", *args]
    )
    assert result.exit_code in (0, 1), result.output
    (sweep,) = [s for s in json.loads(result.stdout)["sweeps"] if s["kind"] == "tuning"]
    return sweep


def test_a_finished_sweep_is_held_to_the_gpu_hours_its_checked_file_allowed(
    sagemaker: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    tuning = _tuning_file(repo, "lr-sweep")
    head = _committed(repo)
    db = tmp_path / "audits.db"
    _check(tuning, db)
    rows = (
        sqlite3.connect(db)
        .execute("SELECT name, format, path, git_commit, gpu_hours FROM sweep_estimates")
        .fetchall()
    )
    assert rows == [("lr-sweep", "sagemaker", str(tuning), head, 100.0)]
    estimated = CliRunner().invoke(main, ["estimate", str(tuning)])
    assert "100 GPU-hours at most" in estimated.output  # the same figure, computed once
    build_sweep(sagemaker)
    markdown = tmp_path / "audit.md"
    sweep = _scan(db, "--report", f"markdown={markdown}")
    assert sweep["gpu_hours"] == USED
    assert sweep["ceiling_gpu_hours"] == 100.0 and sweep["ceiling"] is None
    assert sweep["ceiling_used_pct"] == round(USED / 100.0 * 100, 2) == 17.56
    assert (sweep["ceiling_commit"], sweep["ceiling_file"]) == (head, str(tuning))
    text = markdown.read_text()
    assert f"used 17.6 of 100.0 GPU-hours (17.56%) the file allowed at commit {head[:7]}" in text

    # The file cut to 2 trials of 1 h at a later commit: the latest check is the one held to,
    # and a sweep over it (4 GPU-hours: 2 × 1 h × 2 GPUs) is said plainly.
    _tuning_file(repo, "lr-sweep", trials=2, seconds=3600)
    later = _committed(repo)
    _check(tuning, db)
    plain = tmp_path / "audit.txt"
    sweep = _scan(db, "--report", f"text={plain}")
    assert (sweep["ceiling_gpu_hours"], sweep["ceiling_commit"]) == (4.0, later)
    assert sweep["ceiling_used_pct"] == round(USED / 4.0 * 100, 2) == 438.89
    assert (
        f"lr-sweep used 17.6 GPU-hours, over the 4.0 the file allowed at commit {later[:7]} "
        "(438.89%): retries, or the file changed since"
    ) in plain.read_text()


def test_a_sweep_no_check_recorded_says_so(sagemaker: Any, tmp_path: Path) -> None:  # noqa: F811
    db = tmp_path / "audits.db"
    _check(_tuning_file(tmp_path, "another-sweep"), db)  # not a git checkout: no commit
    (commit,) = sqlite3.connect(db).execute("SELECT git_commit FROM sweep_estimates").fetchone()
    assert commit is None
    build_sweep(sagemaker)
    sweep = _scan(db)
    assert sweep["ceiling_gpu_hours"] is None and sweep["ceiling_used_pct"] is None
    assert sweep["ceiling"] == "no estimate of a sweep named 'lr-sweep' (sagemaker) in the history"
    # Without --history, check writes nothing.
    before = sorted(tmp_path.rglob("*"))
    result = CliRunner().invoke(main, ["check", str(tmp_path / "sweeps"), "-q"])
    assert result.exit_code in (0, 1) and sorted(tmp_path.rglob("*")) == before
