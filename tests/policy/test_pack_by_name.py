"""The shipped pack by its name (`runbook`) wherever a policy file is taken, as `extends:` takes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.policy.loader import builtin_pack_path, load_policy
from tests.conftest import ROOT

JOB = str(ROOT / "fixtures" / "jobs" / "skypilot" / "any-of-alternatives.yaml")


def _report(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.chdir(cwd)  # no file named `runbook` here: the name is the pack's
    run = CliRunner().invoke(main, [*args, "--format", "json", "--fail-on", "none"])
    assert run.exit_code == 0, run.output
    report: dict[str, object] = json.loads(run.stdout)
    return report


def test_policy_runbook_is_the_shipped_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_name = _report(["check", JOB, "--policy", "runbook"], tmp_path, monkeypatch)
    default = _report(["check", JOB], tmp_path, monkeypatch)
    assert by_name["findings"] == default["findings"] and by_name["findings"]
    assert by_name["scope"]["policy_files"] == ["runbook"]  # type: ignore[index]
    assert load_policy(["runbook"]).files == (builtin_pack_path("runbook"),)


def test_settings_policies_runbook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("policies: [runbook]\n", encoding="utf-8")
    report = _report(["check", JOB, "--config", str(config)], tmp_path, monkeypatch)
    assert report["scope"]["policy_files"] == ["runbook"]  # type: ignore[index]


def test_policies_validate_and_list_take_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, ["policies", "validate", "runbook"])
    assert run.exit_code == 0 and run.stdout.startswith("runbook: ok ("), run.output
    listed = CliRunner().invoke(main, ["policies", "list", "--policy", "runbook"])
    assert listed.exit_code == 0 and "spot-for-training" in listed.stdout
