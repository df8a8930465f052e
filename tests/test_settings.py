"""The settings file: found upwards or in the user's config dir, and every error located early."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.errors import ConfigError
from gpu_audit.settings import discover, load_settings
from tests.conftest import FIXTURES

DEMO = str(FIXTURES / "inventory" / "demo.yaml")


def test_the_nearest_file_upwards_wins(tmp_path: Path) -> None:
    deep = tmp_path / "repo" / "ml" / "jobs"
    deep.mkdir(parents=True)
    (tmp_path / ".gpu-audit.yaml").write_text("fail_on: low\n")
    (tmp_path / "repo" / ".gpu-audit.yml").write_text("fail_on: critical\n")
    found = discover(str(deep))
    assert found == str((tmp_path / "repo" / ".gpu-audit.yml").resolve())
    assert load_settings(None, start=str(deep)).fail_on == "critical"


def test_the_user_file_is_the_fallback(tmp_path: Path) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "gpu-audit" / "config.yaml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("gcp:\n  projects: [research]\n")
    try:
        assert discover(str(tmp_path)) == str(user)
        assert load_settings(None, start=str(tmp_path)).section("gcp").projects == ("research",)
        (tmp_path / ".gpu-audit.yaml").write_text("fail_on: none\n")
        assert discover(str(tmp_path)) == str(tmp_path / ".gpu-audit.yaml")
    finally:
        user.unlink()


def test_no_file_anywhere_means_the_defaults(tmp_path: Path) -> None:
    assert discover(str(tmp_path)) is None
    settings = load_settings(None, start=str(tmp_path))
    assert settings.source is None and settings.section("aws").concurrency == 8


def test_the_scan_reads_the_discovered_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["scan", "--inventory", DEMO, "-q"]).exit_code == 1
    (tmp_path / ".gpu-audit.yaml").write_text("fail_on: none\n")
    assert CliRunner().invoke(main, ["scan", "--inventory", DEMO, "-q"]).exit_code == 0


def test_bad_fail_on_is_located_before_any_report_is_written(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("policies: [runbook]\nfail_on: hgih\n")
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main, ["scan", "--inventory", DEMO, "--config", str(config), "-o", str(out)]
    )
    assert result.exit_code == 2
    assert f"{config}:2: config: fail_on: 'hgih' is not one of" in result.output
    assert not out.exists()


def test_an_unknown_top_level_key_lists_the_valid_ones(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("policies: [runbook]\nawss:\n  regions: [us-east-1]\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(str(config))
    assert str(caught.value) == (
        f"{config}:2: config: awss: unknown key (did you mean 'aws'?); "
        "valid keys: aws, gcp, kubernetes, azure, policies, fail_on, workload_patterns, history, "
        "exclude, prices, prices_max_age_days"
    )


def test_policies_must_be_paths(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("policies: {runbook: yes}\n")
    with pytest.raises(ConfigError, match=r":1: config: policies: expected a list of file paths"):
        load_settings(str(config))


def test_tests_keep_out_of_the_real_cache() -> None:
    from gpu_audit.policy.loader import load_policy

    load_policy([])
    real = os.path.join(os.path.expanduser("~"), ".cache")
    cache = os.environ["XDG_CACHE_HOME"]
    assert not os.path.realpath(cache).startswith(os.path.realpath(real))
    assert os.path.isdir(os.path.join(cache, "gpu-audit"))


def test_workload_patterns_from_the_settings_file_name_the_workload(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "captured_at: 2026-11-20T00:00:00Z\n"
        "resources:\n"
        "  - {provider: aws, id: i-1, name: llm-pretrain-7, instance_type: p4d.24xlarge,\n"
        "     state: running, capacity: on-demand, region: us-east-1}\n"
    )
    config = tmp_path / "settings.yaml"
    args = ["scan", "--inventory", str(inventory), "--config", str(config), "--format", "json"]
    config.write_text("fail_on: none\n")
    before = CliRunner().invoke(main, args)
    config.write_text("fail_on: none\nworkload_patterns:\n  training: ['*pretrain*']\n")
    after = CliRunner().invoke(main, args)
    assert (
        '"spot-for-training"'
        not in before.stdout.split('"findings"')[1].split('"not_evaluated"')[0]
    )
    assert "workload training inferred from the name (pattern '*pretrain*')" in after.stdout
    assert '"rule_id": "spot-for-training"' in after.stdout


def test_an_unknown_workload_in_the_patterns_is_located(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("workload_patterns:\n  notebook: ['*jupyter*']\n  trainig: ['*train*']\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(str(config))
    assert str(caught.value) == (
        f"{config}:3: config: workload_patterns.trainig: unknown workload "
        "(did you mean 'training'?); valid: training, inference, batch-inference, benchmark, notebook"
    )
