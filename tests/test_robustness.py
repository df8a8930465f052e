"""Bad input refused where it enters, in one located line: fractional counts (issue 26 item 13),
impossible tuning limits (issue 40 item 4); a file's many errors bounded, inventory errors keep
their line in the JSON report. Inputs that must be refused live here: every file under
fixtures/jobs/ passes `gpu-audit check` (fixtures/jobs/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main


def _run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


GPU = "resources: {limits: {nvidia.com/gpu: 1}}"
JOBS = {
    "sky.yaml": ("name: t\nnum_nodes: 0.5\nresources:\n  accelerators: A100:8\nrun: x\n",
                 ":2: num_nodes: expected a whole number, got 0.5"),
    "job.yaml": ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 0.5\n"
                 f"  template:\n    spec:\n      containers:\n        - {{name: c, image: x, {GPU}}}\n",
                 ":5: parallelism: expected a whole number, got 0.5"),
    "volcano.yaml": ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n"
                     "  tasks:\n    - name: w\n      replicas: 0.5\n      template:\n        spec:\n"
                     f"          containers:\n            - {{name: c, image: x, {GPU}}}\n",
                     ":7: replicas: expected a whole number, got 0.5"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JOBS))
def test_a_fractional_count_is_refused_at_its_line(tmp_path: Path, name: str) -> None:
    body, message = JOBS[name]
    path = tmp_path / name
    path.write_text(body)
    code, out, err = _run("check", path, "--format", "json")
    assert code == 2
    assert f"gpu-audit: error: {path}{message}" in err
    report = json.loads(out)
    assert report["resources"] == [] and report["skipped"][0]["line"] == int(message.split(":")[1])


def test_many_inventory_errors_are_bounded_and_keep_their_lines(tmp_path: Path) -> None:
    resources = [
        {"provider": "aws", "id": f"i-{index}", f"bad_key_{index}": 1, "state": "running"}
        for index in range(5000)
    ]
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps({"version": 1, "resources": resources}, indent=1))
    code, out, err = _run("scan", "--inventory", inventory, "--format", "json")
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 51
    assert "and 4,950 more errors in this file" in lines[-1]
    skipped = json.loads(out)["skipped"]
    assert len(skipped) == 51
    assert all(isinstance(s["line"], int) and s["line"] > 1 for s in skipped)
    assert skipped[0]["line"] < skipped[1]["line"]


TUNING = """HyperParameterTuningJobName: sweep
HyperParameterTuningJobConfig:
  ResourceLimits:
    MaxNumberOfTrainingJobs: {trials}
    MaxParallelTrainingJobs: {parallel}
TrainingJobDefinition:
  RoleArn: arn:aws:iam::111122223333:role/sagemaker-training
  ResourceConfig: {{InstanceType: ml.p3.8xlarge, InstanceCount: 1}}
  StoppingCondition: {{MaxRuntimeInSeconds: 3600}}
"""
IMPOSSIBLE_TUNING = {
    "no-parallel-trial": (20, 0, ":5: MaxParallelTrainingJobs: 0 is below the minimum 1"),
    "negative-trials": (-3, 2, ":4: hpo.max_trials: -3 is below the minimum 0"),
    "infinite-trials": (".inf", 2, ":4: hpo.max_trials: expected a finite number, got inf"),
    "half-a-trial": (2.5, 2, ":4: hpo.max_trials: expected a whole number, got 2.5"),
    "parallel-text-number": (20, '"-1"', ":5: MaxParallelTrainingJobs: -1 is below the minimum 1"),
}


@pytest.mark.parametrize("case", sorted(IMPOSSIBLE_TUNING))
def test_an_impossible_sagemaker_tuning_value_is_one_located_error(
    tmp_path: Path, case: str
) -> None:
    """Tuning limits pass the same bounds as every field a parser sets (JobDraft), so none
    reaches a report: one line at the key, exit 2, the other files still checked."""
    trials, parallel, message = IMPOSSIBLE_TUNING[case]
    path = tmp_path / "tuning.yaml"
    path.write_text(TUNING.format(trials=trials, parallel=parallel))
    good = tmp_path / "good.yaml"
    good.write_text(TUNING.format(trials=20, parallel=2))
    code, out, err = _run("check", path, good, "--format", "json", "--fail-on", "none")
    assert code == 2
    assert err.splitlines() == [f"gpu-audit: error: {path}{message}"]
    report = json.loads(out)
    assert [r["source"]["path"] for r in report["resources"]] == [str(good)]
    assert "up to 2 in parallel" in report["resources"][0]["note"]
    assert report["resources"][0]["hpo"]["max_trials"] == 20


VERTEX_STUDY = """displayName: sweep
maxTrialCount: {trials}
parallelTrialCount: {parallel}
studySpec: {{metrics: [{{metricId: loss, goal: MINIMIZE}}]}}
trialJobSpec:
  workerPoolSpecs:
    - machineSpec: {{machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}}
      replicaCount: 1
      containerSpec: {{imageUri: gcr.io/acme/sweep:2}}
"""
KATIB_EXPERIMENT = """apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {{name: sweep}}
spec:
  maxTrialCount: {trials}
  parallelTrialCount: {parallel}
  trialTemplate:
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            containers: [{{name: c, image: x, {gpu}}}]
"""
OTHER_TUNING = {
    "vertex-no-parallel-trial": (VERTEX_STUDY, 40, 0, ":3: parallelTrialCount: 0 is below"),
    "vertex-infinite-trials": (VERTEX_STUDY, ".inf", 4, ":2: hpo.max_trials: expected a finite"),
    "katib-negative-parallel": (KATIB_EXPERIMENT, 40, -2, ":6: parallelTrialCount: -2 is below"),
    "katib-negative-trials": (KATIB_EXPERIMENT, -1, 4, ":5: hpo.max_trials: -1 is below"),
}


@pytest.mark.parametrize("case", sorted(OTHER_TUNING))
def test_an_impossible_trial_count_is_one_located_error_in_every_format(
    tmp_path: Path, case: str
) -> None:
    template, trials, parallel, message = OTHER_TUNING[case]
    path = tmp_path / "tuning.yaml"
    path.write_text(template.format(trials=trials, parallel=parallel, gpu=GPU))
    code, _, err = _run("check", path, "--format", "json", "--fail-on", "none")
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith(f"gpu-audit: error: {path}{message}"), line
    path.write_text(template.format(trials=40, parallel=4, gpu=GPU))  # the same file, possible
    code, out, err = _run("check", path, "--format", "json", "--fail-on", "none")
    assert code == 0 and "up to 4 trials in parallel" in json.loads(out)["resources"][0]["note"]


SWEEP_FILES = {  # the sweep formats: an impossible cap is one located line, exit 2
    "wandb-negative-run-cap": (
        "program: train.py\nmethod: random\nparameters: {lr: {min: 0.1, max: 1.0}}\nrun_cap: -3\n",
        ":4: hpo.max_trials: -3 is below",
    ),
    "hydra-no-parallel-jobs": (
        "defaults:\n  - override hydra/sweeper: optuna\nhydra:\n  sweeper:\n    n_trials: 20\n"
        "    n_jobs: 0\n",
        ":6: hpo.parallel_trials: 0 is below",
    ),
    "hydra-negative-timeout": (
        "defaults:\n  - override hydra/sweeper: optuna\n  - override hydra/launcher: submitit_slurm\n"
        "hydra:\n  sweeper: {n_trials: 20}\n  launcher:\n    gpus_per_node: 1\n    timeout_min: -60\n",
        ":8: limits.max_runtime_hours: -1 is below",
    ),
    "determined-infinite-trials": (
        "entrypoint: model_def:Trial\nsearcher:\n  name: random\n  metric: loss\n"
        "  max_trials: .inf\n  max_length: {batches: 1000}\n",
        ":5: hpo.max_trials: expected a finite",
    ),
}


@pytest.mark.parametrize("case", sorted(SWEEP_FILES))
def test_an_impossible_sweep_cap_is_one_located_error(tmp_path: Path, case: str) -> None:
    text, message = SWEEP_FILES[case]
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    code, _, err = _run("check", path, "--format", "json", "--fail-on", "none")
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith(f"gpu-audit: error: {path}{message}"), line


def test_a_huge_pruner_schedule_is_read_without_overflow(tmp_path: Path) -> None:
    """`s: 1e9` or `max_rungs: 100000` would overflow eta ** s: the share is not given, no error."""
    wandb = tmp_path / "sweep.yaml"
    wandb.write_text(
        "program: train.py\nmethod: random\nparameters: {lr: {min: 0.1, max: 1.0}}\nrun_cap: 5\n"
        "early_terminate: {type: hyperband, max_iter: 27, s: 1000000000, eta: 3}\n"
    )
    determined = tmp_path / "experiment.yaml"
    determined.write_text(
        "entrypoint: m:T\nsearcher:\n  name: adaptive_asha\n  metric: loss\n  max_trials: 8\n"
        "  max_rungs: 100000\n  divisor: 4\n  max_length: {epochs: 10}\n"
    )
    code, out, err = _run("check", wandb, determined, "--format", "json", "--fail-on", "none")
    assert code == 0, err
    shares = [r["hpo"]["pruned_share"] for r in json.loads(out)["resources"]]
    assert shares[0] is not None and shares[0] < 1e-6 and shares[1] is None


SLICE_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: sliced}}
spec:
  template:
    spec:
      containers:
        - name: c
          image: x
          resources:
            limits: {{{key}: {value}}}
"""
IMPOSSIBLE_SHARES = {
    "negative-slices": (
        "nvidia.com/mig-1g.10gb",
        "-2",
        ":11: gpu.count: -2 is below the minimum 0",
    ),
    "infinite-slices": ("nvidia.com/mig-3g.40gb", ".inf", ":11: gpu.count: expected a finite"),
}


@pytest.mark.parametrize("case", sorted(IMPOSSIBLE_SHARES))
def test_an_impossible_mig_slice_count_is_one_located_error(tmp_path: Path, case: str) -> None:
    key, value, message = IMPOSSIBLE_SHARES[case]
    path = tmp_path / "sliced.yaml"
    path.write_text(SLICE_JOB.format(key=key, value=value))
    code, _, err = _run("check", path, "--format", "json", "--fail-on", "none")
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith(f"gpu-audit: error: {path}{message}"), line
    path.write_text(SLICE_JOB.format(key=key, value="1"))  # the same file, possible
    code, out, err = _run("check", path, "--format", "json", "--fail-on", "none")
    assert code == 0, err
    assert json.loads(out)["resources"][0]["share"]["mode"] == "mig"
