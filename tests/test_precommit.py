"""The real pre-commit hook: `pre-commit` installs this repository and runs gpu-audit-check.

As `pre-commit try-repo` does, the hook is built from the repository's HEAD plus its uncommitted
changes to tracked files (untracked files are left out, so commit new modules before relying on
this test), committed in a shadow clone. But try-repo installs the hook into a store of its own
each time (three installs, about a minute); here a config names the shadow commit, as a user's
`.pre-commit-config.yaml` names a release, and `pre-commit run` installs it once for the module.
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

# A Slurm batch script: the hook's types_or/files must hand it to check (.pre-commit-hooks.yaml).
SLURM = """\
#!/bin/bash
#SBATCH --job-name=pretrain
#SBATCH --nodes=4
#SBATCH --gres=gpu:h100:8
srun torchrun train.py
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
    (root / "slurm").mkdir()
    (root / "slurm" / "pretrain.sbatch").write_text(SLURM)
    (root / "slurm" / "build.sh").write_text("#!/bin/sh\nmake\n")  # a shell script, no job
    (root / "docker-compose.yaml").write_text("services:\n  web:\n    image: nginx\n")
    _git(root, "add", ".")
    return root


@pytest.fixture(scope="module")
def shadow(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """HEAD plus the uncommitted changes to tracked files, committed in a clone (try-repo's own
    shadow repository), and its commit: one `--ref` for every run, so one install."""
    root = tmp_path_factory.mktemp("shadow") / "shadow-repo"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(REPO), str(root)], check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    _git(root, "checkout", "-q", head)
    diff = subprocess.run(
        ["git", "diff", "--binary", "HEAD"], cwd=REPO, check=True, capture_output=True
    ).stdout
    if diff:
        subprocess.run(["git", "apply", "-"], cwd=root, input=diff, check=True)
        _git(root, "add", "-u")
        who = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
        _git(root, *who, "commit", "-q", "--no-verify", "-m", "uncommitted changes")
    ref = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()
    return str(root), ref


def _run_hook(
    scratch: Path, shadow: tuple[str, str], *files: str
) -> subprocess.CompletedProcess[str]:
    """`pre-commit run gpu-audit-check --files …` in the scratch repository, the hook's
    environment installed by the first run and reused by the others."""
    config = scratch.parent / "pre-commit-config.yaml"
    repo, ref = shadow
    config.write_text(
        f"repos:\n  - repo: {repo}\n    rev: {ref}\n    hooks: [{{id: gpu-audit-check}}]\n"
    )
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(scratch.parent / "pre-commit-home"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return subprocess.run(
        [PRE_COMMIT, "run", "gpu-audit-check", "-c", str(config), "--verbose", "--files", *files],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_hook_fails_on_a_bad_job(scratch: Path, shadow: tuple[str, str]) -> None:
    run = _run_hook(scratch, shadow, "sky/bad.yaml", "docker-compose.yaml", "slurm/pretrain.sbatch")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "gpu-audit check" in output and "Failed" in output, output
    assert "spot-for-training" in output and "sky/bad.yaml:5" in output, output
    # the Slurm script reached the hook and was judged: H100s over the GPU-class cap, no --time
    assert "slurm/pretrain.sbatch:4: medium gpu-class-cap" in output, output
    assert "slurm/pretrain.sbatch:2: " in output and "job-runtime-cap" in output, output


def test_hook_passes_on_a_clean_job(scratch: Path, shadow: tuple[str, str]) -> None:
    run = _run_hook(scratch, shadow, "sky/clean.yaml", "docker-compose.yaml", "slurm/build.sh")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "Passed" in output, output


def test_a_commit_of_many_jobs_prints_one_summary(scratch: Path, shadow: tuple[str, str]) -> None:
    """pre-commit splits files into one batch per CPU unless the hook is serial; each batch
    would print its own partial totals. The hook is serial and says how many files it read."""
    many = scratch / "many"
    many.mkdir(exist_ok=True)
    names = []
    for index in range(24):
        (many / f"job{index:02}.yaml").write_text(BAD)
        names.append(f"many/job{index:02}.yaml")
    _git(scratch, "add", "many")
    run = _run_hook(scratch, shadow, *names)
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    summaries = [line for line in output.splitlines() if " jobs; GPU rate " in line]
    assert len(summaries) == 1, output
    assert "gpu-audit check: this run covers 24 staged files" in output, output
