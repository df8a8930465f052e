"""Sweep files from public repositories (fixtures/sweeps/public): bounded ones pass the hook at
`--fail-on high`, an unbounded one fails with a fix the file can take (issue 48)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli import main

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "sweeps" / "public"

# file → the rules of its open findings at high severity (empty: the hook passes)
HIGH = {
    "wandb-grid-hyperband.yaml": set(),
    "wandb-bayes-hyperband.yaml": {"sweep-bounded"},
    "hydra-mnist-optuna.yaml": set(),
    "determined-cifar10-adaptive.yaml": set(),
    "aiplatform-census-hptuning.yaml": {"retired-gpu"},
}


def _check(path: Path) -> tuple[int, list[dict[str, object]]]:
    done = CliRunner().invoke(main, ["check", "--format", "json", "--fail-on", "high", str(path)])
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, json.loads(done.output)["findings"]


def test_every_public_sweep_is_labelled() -> None:
    assert {p.name for p in PUBLIC.glob("*.yaml")} == set(HIGH)


@pytest.mark.parametrize("name", sorted(HIGH))
def test_a_public_sweep_fails_the_hook_only_for_what_it_can_fix(name: str) -> None:
    code, findings = _check(PUBLIC / name)
    high = [f for f in findings if f["severity"] in ("high", "critical")]
    assert {f["rule_id"] for f in high} == HIGH[name]
    assert code == (1 if HIGH[name] else 0)
    for finding in high:  # every high finding names the key of this file to change
        assert "; fix: " in str(finding["message"]), finding


def test_the_unbounded_sweep_reads_as_a_sentence() -> None:
    _, findings = _check(PUBLIC / "wandb-bayes-hyperband.yaml")
    (finding,) = [f for f in findings if f["rule_id"] == "sweep-bounded"]
    assert finding["message"] == (
        "A tuning sweep caps its trials: hpo.max_trials absent; fix: set `run_cap`"
    )


def test_the_legacy_tuning_file_without_a_scale_tier_is_read() -> None:
    _, findings = _check(PUBLIC / "aiplatform-census-hptuning.yaml")
    assert [f["rule_id"] for f in findings] == ["retired-gpu"]  # its one finding, no sweep advice
