"""Item 4 (and item 8's `diff --base main`) of the reader's report, round three: estimates and
diffs of what the file states, run as a newcomer runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.firsttry.cli import git, gpu_audit

JOBS = FIXTURES / "jobs"


def test_estimate_takes_a_directory_as_check_does() -> None:
    directory = gpu_audit("estimate", "fixtures/jobs/sagemaker", "--format", "json")
    assert directory.returncode in (0, 1), directory.stderr
    checked = gpu_audit("check", "fixtures/jobs/sagemaker", "--format", "json", "--fail-on", "none")
    jobs = {j["location"].rsplit(":", 1)[0] for j in json.loads(directory.stdout)["jobs"]}
    files = {r["source"]["path"] for r in json.loads(checked.stdout)["resources"]}
    assert jobs == files and len(jobs) > 3


def test_estimate_takes_a_quoted_glob() -> None:
    result = gpu_audit("estimate", "fixtures/jobs/hydra/*.yaml", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    names = {j["job"] for j in json.loads(result.stdout)["jobs"]}
    assert "vit-search" in names


def test_a_glob_matching_nothing_is_one_line() -> None:
    result = gpu_audit("estimate", "nowhere/*.yaml")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "gpu-audit: error: nowhere/*.yaml: no job file matches this pattern"
    )


@pytest.mark.parametrize(
    ("path", "gpus"),
    [("hydra/optuna-submitit.yaml", "2 per trial (GPU model not stated)"),
     ("determined/adaptive-asha.yaml", "4 per trial (GPU model not stated)")],
)  # fmt: skip
def test_a_sweep_stating_its_gpus_per_trial_says_them(path: str, gpus: str) -> None:
    result = gpu_audit("estimate", str(JOBS / path), "--format", "text")
    assert result.returncode in (0, 1), result.stderr
    assert f"  GPUs: {gpus};" in result.stdout
    assert "GPUs: unknown" not in result.stdout
    assert "not priced: the file names no GPU model or instance type" in result.stdout
    assert "the catalog does not know" not in result.stdout


def test_an_unpriced_kubernetes_job_says_the_manifest_names_no_cloud() -> None:
    result = gpu_audit("estimate", str(JOBS / "kubernetes" / "mpijob-no-capacity.yaml"))
    assert "not priced: the manifest names no cloud" in result.stdout
    assert "the catalog does not know" not in result.stdout


BIG_POD = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: big-pod
spec:
  activeDeadlineSeconds: 7200
  template:
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: {machine}
      containers:
        - name: train
          image: trainer:1
          resources:
            limits:
              nvidia.com/gpu: 8
      restartPolicy: Never
"""


@pytest.mark.parametrize(
    ("machine", "has", "holds"),
    [("g2-standard-24", 2, "g2-standard-96"), ("g5.12xlarge", 4, "g5.48xlarge")],
)
def test_an_8_gpu_pod_is_never_priced_on_a_smaller_machine(
    tmp_path: Path, machine: str, has: int, holds: str
) -> None:
    job = tmp_path / "big-pod.yaml"
    job.write_text(BIG_POD.format(machine=machine))
    result = gpu_audit("estimate", str(job), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    [estimate] = json.loads(result.stdout)["jobs"]
    assert estimate["gpu_count"] == 8 and estimate["nodes"] in (None, 1)
    rate = estimate["on_demand"]
    assert rate is None or rate["instance_type"] == holds
    text = gpu_audit("estimate", str(job), "--format", "text").stdout
    assert f"a pod asks for 8 GPUs and {machine} has {has}: no pod fits that machine type" in text
    assert "nodes" not in text.split("GPUs:")[1].split(";")[0]


def test_a_pod_that_fits_is_priced_on_its_machine(tmp_path: Path) -> None:
    job = tmp_path / "fits.yaml"
    job.write_text(BIG_POD.format(machine="g2-standard-96"))
    [estimate] = json.loads(gpu_audit("estimate", str(job), "--format", "json").stdout)["jobs"]
    assert estimate["on_demand"]["instance_type"] == "g2-standard-96"


@pytest.fixture
def grown_sweep(tmp_path: Path) -> Path:
    """A `master` repository whose Hydra sweep grew from 40 to 100 trials of 2 GPUs × 6 h."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    text = (JOBS / "hydra" / "optuna-submitit.yaml").read_text()
    sweep = repo / "sweep.yaml"
    sweep.write_text(text.replace("timeout_min: 90", "timeout_min: 360"))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    sweep.write_text(sweep.read_text().replace("n_trials: 40", "n_trials: 100"))
    return repo


def test_a_diff_of_a_grown_unpriced_sweep_says_its_gpu_hours(grown_sweep: Path) -> None:
    result = gpu_audit("diff", "--base", "master", "--format", "text", cwd=grown_sweep)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(
        "gpu-audit diff: +720 GPU-hours per run (480 → 1,200 GPU-hours, unpriced)."
    )
    assert "+$0.00 per run" not in result.stdout
    assert "(+720 GPU-h, unpriced)" in result.stdout
    data = json.loads(gpu_audit("diff", "--base", "master", "--format", "json",
                                cwd=grown_sweep).stdout)  # fmt: skip
    [job] = data["jobs"]
    assert (job["before"]["gpu_hours"], job["after"]["gpu_hours"]) == (480, 1200)


def test_diff_base_main_in_a_master_repository(grown_sweep: Path) -> None:
    result = gpu_audit("diff", "--base", "main", cwd=grown_sweep)
    assert result.returncode == 2
    assert result.stderr.strip().endswith(
        "(did you mean 'master'? this repository has 'master', no 'main')"
    )
    typo = gpu_audit("diff", "--base", "mastr", cwd=grown_sweep)
    assert "did you mean 'master'?" in typo.stderr


def test_estimate_of_a_directory_skips_what_check_skips(tmp_path: Path) -> None:
    source = (JOBS / "hydra" / "optuna-submitit.yaml").read_text()
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "kept.yaml").write_text(source)
    (tmp_path / "jobs" / "scratch-copy.yaml").write_text(source.replace("vit-search", "copy"))
    (tmp_path / ".gpu-audit.yaml").write_text("exclude: ['scratch-*']\n")
    result = gpu_audit("estimate", "jobs", "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert [j["job"] for j in json.loads(result.stdout)["jobs"]] == ["vit-search"]
