"""Throw-away git repositories (real `git`) for `gpu-audit diff`, and the CLI run inside them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpu_audit.cli import main

# SkyPilot jobs priced per GPU in us-east-1, with and without a runtime cap (label).
TRAIN_A100_SPOT = """\
name: train-llm
resources:
  accelerators: A100:8
  use_spot: true
  infra: aws/us-east-1
  labels:
    gpu-audit/max-runtime-hours: "10"
    team: ml
    project: llm
    owner: ada
file_mounts:
  /ckpt:
    source: s3://ckpt-bucket
    mode: MOUNT
run: python train.py --checkpoint-dir /ckpt
"""
TRAIN_H100_ON_DEMAND = (
    TRAIN_A100_SPOT.replace("A100:8", "H100:8")
    .replace("use_spot: true", "use_spot: false")
    .replace('"10"', '"24"')
)
EVAL_L4 = """\
name: eval
resources:
  accelerators: L4:1
  use_spot: true
  infra: aws/us-east-1
  labels:
    gpu-audit/max-runtime-hours: "2"
    team: ml
    project: llm
    owner: ada
run: python eval.py
"""
SWEEP_A10G = """\
name: sweep
resources:
  accelerators: A10G:4
  use_spot: true
  infra: aws/us-east-1
  labels:
    gpu-audit/max-runtime-hours: "6"
    team: ml
    project: llm
    owner: ada
file_mounts:
  /ckpt:
    source: s3://ckpt-bucket
    mode: MOUNT
run: python sweep.py --checkpoint-dir /ckpt
"""
CPU_ONLY = """\
name: eval
resources:
  cpus: 8
  infra: aws/us-east-1
run: python eval.py
"""


class Repo:
    """A git repository in a temporary directory; commits with a fixed identity, no user config."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com",
             "-c", "commit.gpgsign=false", *args],
            cwd=self.path, capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        return done.stdout

    def write(self, files: Mapping[str, str | None]) -> None:
        """Write (or, for None, delete) files in the worktree, without committing."""
        for name, text in files.items():
            target = self.path / name
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")

    def commit(self, files: Mapping[str, str | None], message: str = "change") -> str:
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A fresh repository, the working directory of the test; git reads no user or system file."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    created = Repo(tmp_path / "repo")
    monkeypatch.chdir(created.path)
    return created


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def diff_json(*args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = cli("diff", "--format", "json", *args)
    assert out, err
    return code, json.loads(out)


def by_name(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {job["name"]: job for job in report["jobs"]}
