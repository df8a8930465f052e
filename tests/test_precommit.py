"""The real pre-commit hook: `pre-commit try-repo` installs this repository and runs gpu-audit-check.

try-repo builds the hook from the repository's HEAD plus its uncommitted changes to tracked files
(untracked files are left out), so commit new modules before relying on this test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")

CLEAN = """\
# gpu-audit: ignore[job-runtime-cap] SkyPilot managed jobs have no runtime cap; the budget alarm covers it
name: finetune-l4
resources:
  accelerators: L4:1
  use_spot: true
  infra: gcp/us-central1
  labels:
    team: nlp
    project: search
    owner: ml-platform
file_mounts:
  /data: gs://example-training-data
  /checkpoints:
    name: example-checkpoints
    store: gcs
run: python train.py
"""

BAD = """\
name: pretrain
num_nodes: 4
resources:
  accelerators: H100:8
  use_spot: false
run: torchrun train.py
"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(not Path(PRE_COMMIT).exists(), reason="pre-commit is not installed"),
]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scratch-repo")
    _git(root, "init", "-q")
    (root / "sky").mkdir()
    (root / "sky" / "clean.yaml").write_text(CLEAN)
    (root / "sky" / "bad.yaml").write_text(BAD)
    (root / "docker-compose.yaml").write_text("services:\n  web:\n    image: nginx\n")
    _git(root, "add", ".")
    return root


def _try_repo(scratch: Path, *files: str) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(scratch.parent / "pre-commit-home"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.com",
    )
    return subprocess.run(
        [PRE_COMMIT, "try-repo", str(REPO), "gpu-audit-check", "--verbose", "--files", *files],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_hook_fails_on_a_bad_job(scratch: Path) -> None:
    run = _try_repo(scratch, "sky/bad.yaml", "docker-compose.yaml")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "gpu-audit check" in output and "Failed" in output, output
    assert "spot-for-training" in output and "sky/bad.yaml:5" in output, output


def test_hook_passes_on_a_clean_job(scratch: Path) -> None:
    run = _try_repo(scratch, "sky/clean.yaml", "docker-compose.yaml")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "Passed" in output, output


def test_a_commit_of_many_jobs_prints_one_summary(scratch: Path) -> None:
    """pre-commit splits files into one batch per CPU unless the hook is serial; each batch
    would print its own partial totals. The hook is serial and says how many files it read."""
    many = scratch / "many"
    many.mkdir(exist_ok=True)
    names = []
    for index in range(24):
        (many / f"job{index:02}.yaml").write_text(BAD)
        names.append(f"many/job{index:02}.yaml")
    _git(scratch, "add", "many")
    run = _try_repo(scratch, *names)
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    summaries = [line for line in output.splitlines() if " jobs; GPU rate " in line]
    assert len(summaries) == 1, output
    assert "gpu-audit check: this run covers 24 staged files" in output, output
