"""Sweep rules ask only what the sweep's format can hold (issue 48): a trial cap bounds the count in
every format, a per-trial time is asked (at medium) only where the format has one, pruning only
where the sweeper prunes, and a templated trial cap is not evaluated, never absent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.conftest import NOW

from gpu_audit.audit import audit
from gpu_audit.core.resource import Severity
from gpu_audit.core.results import ScanResult, Scope
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.loader import load_policy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TRIAL_RULES = ("hpo-trial-cap", "sweep-bounded")

# (fixture, the key of its trial cap as written, the suffix of its file)
CAPS = [
    ("sweeps/vertex-hpt-timeout.yaml", "maxTrialCount: 30", "maxTrialCount: ${MAX_TRIALS}"),
    ("sweeps/katib-pod-deadline.yaml", "maxTrialCount: 12", 'maxTrialCount: "${MAX_TRIALS}"'),
    ("sweeps/azureml-sweep-timeout-binds.yaml", "max_total_trials: 20",
     "max_total_trials: ${{inputs.max_trials}}"),
    ("sweeps/sagemaker-tuning.json", '"MaxNumberOfTrainingJobs": 20',
     '"MaxNumberOfTrainingJobs": "${MAX_TRIALS}"'),
    ("jobs/wandb/hyperband-run-cap.yaml", "run_cap: 60", "run_cap: ${RUN_CAP}"),
    ("jobs/hydra/optuna-submitit.yaml", "n_trials: 40", "n_trials: ${oc.env:N_TRIALS}"),
    ("jobs/determined/adaptive-asha.yaml", "max_trials: 64", 'max_trials: "{{ max_trials }}"'),
]  # fmt: skip


def _judge(tmp_path: Path, name: str, text: str) -> ScanResult:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return audit(load_jobs([str(path)]).resources, load_policy(None), NOW, Scope(command="check"))


@pytest.mark.parametrize(("fixture", "written", "templated"), CAPS)
def test_a_templated_trial_cap_is_not_evaluated_in_every_format(
    fixture: str, written: str, templated: str, tmp_path: Path
) -> None:
    source = (FIXTURES / fixture).read_text(encoding="utf-8")
    assert written in source
    result = _judge(tmp_path, Path(fixture).name, source.replace(written, templated))
    found = {f.rule_id for f in result.findings}
    assert not found & set(TRIAL_RULES), [f.message for f in result.findings]
    unknown = {(n.rule_id, n.missing) for n in result.not_evaluated}
    assert any(missing == "hpo.max_trials" for _, missing in unknown), unknown


def test_the_same_vertex_sweep_without_the_cap_is_told_to_set_it(tmp_path: Path) -> None:
    source = (FIXTURES / "sweeps/vertex-hpt-timeout.yaml").read_text(encoding="utf-8")
    result = _judge(tmp_path, "hpt.yaml", re.sub(r"(?m)^maxTrialCount: 30\n", "", source))
    (finding,) = [f for f in result.findings if f.rule_id == "hpo-trial-cap"]
    assert finding.fix == "set `maxTrialCount`"


WANDB = """\
program: train.py
method: random
metric: {name: val_loss, goal: minimize}
parameters:
  lr: {min: 0.0001, max: 0.1}
"""


def test_a_wandb_sweep_with_a_run_cap_passes_at_high(tmp_path: Path) -> None:
    result = _judge(tmp_path, "sweep.yaml", WANDB + "run_cap: 40\n")
    assert [f.rule_id for f in result.findings] == ["hpo-early-stopping"]  # medium, and W&B can
    assert result.findings[0].severity is Severity.MEDIUM


def test_a_wandb_sweep_without_a_bound_fails_with_the_fix(tmp_path: Path) -> None:
    result = _judge(tmp_path, "sweep.yaml", WANDB)
    (finding,) = [f for f in result.findings if f.rule_id == "sweep-bounded"]
    assert finding.message == (
        "A tuning sweep caps its trials: hpo.max_trials absent; fix: set `run_cap`"
    )


HYDRA_SUBMITIT = """\
defaults:
  - override hydra/sweeper: optuna
  - override hydra/launcher: submitit_slurm
hydra:
  sweeper:
    n_trials: 20
    n_jobs: 4
  launcher:
    gpus_per_node: 2
    nodes: 1
"""


def test_hydra_submitit_without_timeout_min_is_asked_for_it_at_medium(tmp_path: Path) -> None:
    result = _judge(tmp_path, "hpo.yaml", HYDRA_SUBMITIT)
    by_rule = {f.rule_id: f for f in result.findings}
    assert set(by_rule) == {"tuning-job-cap"}  # no pruning advice: the sweeper cannot prune
    assert by_rule["tuning-job-cap"].severity is Severity.MEDIUM
    assert by_rule["tuning-job-cap"].fix == "set `hydra.launcher.timeout_min`"
    capped = HYDRA_SUBMITIT + "    timeout_min: 120\n"
    assert not _judge(tmp_path, "capped.yaml", capped).findings


def test_determined_is_not_asked_for_a_wall_clock_cap_it_cannot_hold(tmp_path: Path) -> None:
    source = (FIXTURES / "jobs/determined/adaptive-asha.yaml").read_text(encoding="utf-8")
    result = _judge(tmp_path, "exp.yaml", source)
    assert "tuning-job-cap" not in {f.rule_id for f in result.findings}
    assert not [f for f in result.findings if f.severity >= Severity.HIGH]


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (FIXTURES / "sweeps").rglob("*") if p.suffix in (".json", ".yaml")),
    ids=lambda p: p.name,
)
def test_every_high_finding_on_a_sweep_file_has_a_fix_the_file_can_take(path: Path) -> None:
    loaded = load_jobs([str(path)])
    result = audit(loaded.resources, load_policy(None), NOW, Scope(command="check"))
    for finding in result.findings:
        if finding.severity >= Severity.HIGH:
            assert finding.fix, f"{path.name}: {finding.message}"
