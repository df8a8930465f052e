"""Issue 34 "done when": twelve sweep files, their ceilings worked out by hand, against
`gpu-audit estimate --format json`; the sweep with no bound is a finding, the templated one is
not evaluated (the `diff` half: tests/diff/test_sweep_diff.py).

Rates are the bundled catalog's (src/gpu_audit/catalog/data/prices.csv), per trial:
ml.g5.xlarge $1.408/h (SageMaker, us-east-1; spot $0.5556), ml.p4d.24xlarge $37.688/h,
Vertex g2-standard-8 + L4 $0.98166/h (us-central1), EC2 g5.xlarge $1.006/h (us-east-1),
Azure Standard_NC24ads_A100_v4 $3.673/h (eastus).

| file | bound | arithmetic | ceiling |
|---|---|---|---|
| sweeps/sagemaker-tuning.json | trials | 20 trials × 2.5 h × (2 × $1.408) = 20 × $7.04 | $140.80 (spot: 20 × 2.5 × $1.1112 = $55.56) |
| sweeps/sagemaker-timeout-binds.json | timeout | trials: 100 × 24 h × $37.688 = $90,451.20; timeout: 2 at once × 10 h × $37.688 | $753.76 |
| sweeps/vertex-hpt-timeout.yaml | trials | 30 × 2 h × $0.98166 = $58.8996 | $58.90 |
| sweeps/vertex-hpt-default.yaml | trials | 10 × 168 h (the 7-day default) × $0.98166 = $1,649.1888 | $1,649.19 |
| sweeps/katib-pod-deadline.yaml | trials | 12 trials × 3 attempts (backoffLimit 2 + 1) × 1 h × $1.006 = $36.216 | $36.22 |
| sweeps/azureml-sweep-timeout-binds.yaml | timeout | trials: 20 × 1 h = 20 h; timeout: 4 at once × 2 h = 8 h; 8 × $3.673 = $29.384 | $29.38 |
| jobs/hydra/optuna-submitit.yaml | trials | 40 × 1.5 h = 60 h of 2 GPUs; no GPU model: unpriced | null |
| jobs/hydra/optuna-templated.yaml | — | `n_trials: ${oc.env:N_TRIALS}` | null, not evaluated |
| jobs/wandb/hyperband-run-cap.yaml | — | 60 runs, no time cap in the file | null |
| jobs/wandb/grid-finite.yaml | — | a grid of 3 × 4 × 1 = 12 runs, no time cap | null |
| jobs/wandb/bayes-no-cap.yaml | — | no run_cap | null, a finding |
| jobs/determined/adaptive-asha.yaml | — | 64 trials of 16 epochs: no hours | null |
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from gpu_audit.catalog.enrich import enrich
from gpu_audit.core.canonical import from_mapping
from tests.conftest import FIXTURES
from tests.diff.conftest import cli

CEILINGS = {  # file → (ceiling on the job's own capacity, spot ceiling, bound by, run hours)
    "sweeps/sagemaker-tuning.json": (140.80, 55.56, "trials", 50.0),
    "sweeps/sagemaker-timeout-binds.json": (753.76, 174.84, "timeout", 20.0),
    "sweeps/vertex-hpt-timeout.yaml": (58.90, 23.50, "trials", 60.0),
    "sweeps/vertex-hpt-default.yaml": (1649.19, 657.99, "trials", 1680.0),
    "sweeps/katib-pod-deadline.yaml": (36.22, 14.29, "trials", 36.0),
    "sweeps/azureml-sweep-timeout-binds.yaml": (29.38, 3.56, "timeout", 8.0),
    "jobs/hydra/optuna-submitit.yaml": (None, None, "trials", 60.0),
    "jobs/hydra/optuna-templated.yaml": (None, None, None, None),
    "jobs/wandb/hyperband-run-cap.yaml": (None, None, None, None),
    "jobs/wandb/grid-finite.yaml": (None, None, None, None),
    "jobs/wandb/bayes-no-cap.yaml": (None, None, None, None),
    "jobs/determined/adaptive-asha.yaml": (None, None, None, None),
}


def _estimates() -> dict[str, dict[str, Any]]:
    files = [str(FIXTURES / name) for name in CEILINGS]
    code, out, err = cli("estimate", "--format", "json", *files)
    assert code == 1, err  # sagemaker-tuning's ceiling is over its $100 budget
    jobs = json.loads(out)["jobs"]
    assert len(jobs) == len(CEILINGS)
    return {job["location"].split(str(FIXTURES) + "/")[1].rsplit(":", 1)[0]: job for job in jobs}


def test_twelve_sweeps_give_their_hand_worked_ceilings_to_the_cent() -> None:
    found = _estimates()
    for name, (ceiling, spot, binds, hours) in CEILINGS.items():
        job = found[name]
        assert job["sweep"] is not None, name
        assert job["ceiling_usd"] == ceiling, name
        assert job["tuning_on_demand_usd"] == ceiling, name  # every one here is on-demand
        assert job["tuning_spot_usd"] == spot, name
        assert job["sweep"]["bound_by"] == binds, name
        assert job["sweep"]["run_hours"] == hours, name


def test_the_sweeps_own_numbers_and_notes() -> None:
    found = _estimates()
    tuning = found["sweeps/sagemaker-tuning.json"]
    assert tuning["run_usd"] == 7.04  # one trial fits the $100 budget; the sweep does not
    assert tuning["budget_state"] == "over" and tuning["over_budget"] is True
    assert tuning["sweep"]["sweep_hours"] == 12.5  # ⌈20 ÷ 4⌉ × 2.5 h
    assert tuning["sweep"]["gpu_hours"] == 100.0  # 50 h × 2 A10G
    default = found["sweeps/vertex-hpt-default.yaml"]["sweep"]
    assert default["trial_hours_from"] == "platform default"
    assert any("7 days" in note for note in default["notes"])
    assert found["sweeps/katib-pod-deadline.yaml"]["sweep"]["attempts"] == 3
    assert found["sweeps/azureml-sweep-timeout-binds.yaml"]["sweep"]["sweep_hours"] == 2.0
    hydra = found["jobs/hydra/optuna-submitit.yaml"]["sweep"]
    assert hydra["pruned_share"] == 0.111111  # (1 + 2/3 + 6/9 + 18/27) ÷ 27 = 3/27
    assert hydra["expected_run_hours"] == pytest.approx(60 * 0.111111)
    wandb = found["jobs/wandb/hyperband-run-cap.yaml"]["sweep"]
    assert wandb["trials"] == 60 and wandb["pruned_share"] == 0.259259  # (3 + 6/3 + 18/9) ÷ 27
    assert any("--count" in note for note in wandb["notes"])
    assert found["jobs/wandb/grid-finite.yaml"]["sweep"]["trials"] == 12
    assert found["jobs/determined/adaptive-asha.yaml"]["sweep"]["pruned_share"] == 0.15625


def test_text_output_says_the_ceiling_and_the_agents_count() -> None:
    code, out, _ = cli("estimate", str(FIXTURES / "sweeps/sagemaker-timeout-binds.json"))
    assert code == 0
    assert "sweep ceiling: on-demand $753.76" in out and "the sweep timeout binds" in out
    _, out, _ = cli("estimate", str(FIXTURES / "jobs/wandb/hyperband-run-cap.yaml"))
    assert "`wandb agent --count N`" in out


def test_expected_with_pruning_is_the_ceiling_times_the_share() -> None:
    """On EC2 g5.xlarge ($1.006/h): 27 trials × 1 h × $1.006 = $27.162 → $27.16; pruned:
    27 × 1 h × 0.111111 × $1.006 = $3.01799… → $3.02 (an estimate, the ceiling stays)."""
    resource = from_mapping(
        {
            "kind": "job", "provider": "sagemaker", "id": "hb", "state": "defined",
            "instance_type": "ml.g5.xlarge", "region": "us-east-1", "capacity": "on-demand",
            "limits": {"max_runtime_hours": 1},
            "hpo": {"max_trials": 27, "parallel_trials": 3, "pruned_share": 0.111111},
        }
    )  # fmt: skip
    estimate = enrich(resource, datetime(2026, 11, 20, tzinfo=UTC)).estimate
    assert estimate.tuning_usd == estimate.ceiling_usd == 27.16
    assert estimate.expected_usd == 3.02
    assert estimate.sweep_hours == 9.0  # ⌈27 ÷ 3⌉ × 1 h


def test_check_finds_the_unbounded_sweep_and_leaves_the_templated_one() -> None:
    files = [
        FIXTURES / "jobs/wandb/bayes-no-cap.yaml",
        FIXTURES / "jobs/hydra/optuna-templated.yaml",
    ]
    code, out, _ = cli("check", "--format", "json", *map(str, files))
    report = json.loads(out)
    assert code == 1
    found = [(f["rule_id"], f["location"]) for f in report["findings"]]
    assert ("sweep-bounded", f"{files[0]}:3") in found
    unknown = {(n["rule_id"], n["location"], n["missing"]) for n in report["not_evaluated"]}
    assert ("sweep-bounded", f"{files[1]}:2", "hpo.max_trials") in unknown
    assert not [f for f in found if f[0] == "sweep-bounded" and str(files[1]) in f[1]]
