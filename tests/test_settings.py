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

    load_policy([str(FIXTURES / "inventory" / "demo-policy.yaml")])  # not the shipped pack: cached
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


@pytest.mark.parametrize(
    ("section", "line"),
    [
        ("azure:\n  timeout: .nan\n", "azure.timeout: expected a finite number"),
        ("azure:\n  timeout: .inf\n", "azure.timeout: expected a finite number"),
        ("azure:\n  timeout: 0\n", "azure.timeout: 0.0: expected seconds above 0"),
        ("kubernetes:\n  timeout: -1\n", "kubernetes.timeout: -1.0: expected seconds above 0"),
        ("aws:\n  connect_timeout: -.inf\n", "aws.connect_timeout: expected a finite number"),
        ("aws:\n  read-timeout: 0.0\n", "aws.read_timeout: 0.0: expected seconds above 0"),
        ("gcp:\n  timeout: -5\n", "gcp.timeout: -5.0: expected seconds above 0"),
        ("azure:\n  max_attempts: 0\n", "azure.max_attempts: 0 is below 1"),
        ("azure:\n  source: graph\n", "azure.source: 'graph' is not a source"),
        ('kubernetes:\n  kubeconfig: "a\\0b"\n', "kubernetes.kubeconfig: a NUL byte"),
        ('prices: "p\\0.json"\n', "prices: expected no NUL byte in a path"),
        ('history: "h\\0.db"\n', "history: expected no NUL byte in a path"),
        (f"prices: {'p' * 5000}\n", "prices: expected a path of at most 4,096 characters"),
        (f"history: {'h' * 5000}\n", "history: expected a path of at most 4,096 characters"),
        ("prices-max-age-days: -3\n", "prices_max_age_days: expected whole days, got -3"),
        ("prices-max-age-days: 3\nprices_max_age_days: 4\n", "given twice"),
    ],
)
def test_settings_values_are_refused_where_they_are_read(
    tmp_path: Path, section: str, line: str
) -> None:
    """Refused by `check --config` itself (no scan, no provider), located at the value's line."""
    config = tmp_path / "settings.yaml"
    config.write_text("fail_on: none\n" + section, encoding="utf-8")
    at = section.count("\n") + 1  # the last line: the value refused
    with pytest.raises(ConfigError) as caught:
        load_settings(str(config))
    assert str(caught.value).startswith(f"{config}:{at}: config: ")
    assert line in str(caught.value)
    job = str(FIXTURES / "jobs" / "skypilot" / "any-of-alternatives.yaml")
    run = CliRunner().invoke(main, ["check", job, "--config", str(config)])
    assert run.exit_code == 2 and run.stderr.count("\n") == 1, run.stderr
    assert f"{config}:{at}: config: " in run.stderr and "Traceback" not in run.output


def test_the_hyphen_spelling_of_a_shared_key_is_read(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("prices-max-age-days: 7\nfail-on: low\n", encoding="utf-8")
    settings = load_settings(str(config))
    assert settings.prices_max_age_days == 7 and settings.fail_on == "low"


def test_a_bad_flag_value_is_named_by_its_flag() -> None:
    from gpu_audit.cli.runners import ScanRequest, with_flags
    from gpu_audit.settings import Settings

    request = ScanRequest(providers=("azure",), flags=(("--timeout", float("nan")),))
    with pytest.raises(ConfigError, match=r"^--timeout nan: expected seconds above 0$"):
        with_flags(Settings(), request)


def test_a_huge_settings_value_comes_back_clipped(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    for text in (f"azure:\n  source: {'x' * 400_000}\n", f"{'k' * 400_000}: 1\n",
                 f"fail_on: {'y' * 400_000}\n", f"aws:\n  concurrency: {'z' * 400_000}\n"):  # fmt: skip
        config.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load_settings(str(config))
        assert len(str(caught.value)) < 600 + len(str(config)), str(caught.value)[:300]


def test_every_settings_mistake_comes_in_one_run_in_line_order(tmp_path: Path) -> None:
    """Issue 38.9: eight typos took eight runs (the first error hid the rest); now each is one
    located line, in line order, with its did-you-mean, and nothing is run."""
    path = tmp_path / ".gpu-audit.yaml"
    path.write_text(
        "polices: [a.yaml]\n"  # 1
        "fail_on: hihg\n"  # 2
        "aws:\n"
        "  regions: [us-east-1]\n"
        "  max_atempts: 3\n"  # 5
        "  read_timeout: .nan\n"  # 6
        "gpc:\n"  # 7
        "  project: x\n"
        "workload_patterns:\n"
        "  trainig: ['*train*']\n"  # 10
        "exclude: 7\n"  # 11
        "prices_max_age_days: -3\n"  # 12
        "kubernetes:\n"
        "  context: dev\n"  # 14
        "  max-attempts: 2\n"
        "  max_attempts: 3\n",  # 16: the same key twice
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as raised:
        load_settings(str(path))
    lines = str(raised.value).split("\ngpu-audit: error: ")
    where = [int(line.split(":")[1]) for line in lines]
    assert where == [1, 2, 5, 6, 7, 10, 11, 12, 14, 16], lines
    hints = ["policies", "high", "max_attempts", None, "gcp", "training", None, None, "contexts"]
    for line, hint in zip(lines, hints, strict=False):
        assert (f"did you mean '{hint}'?" in line) if hint else ("did you mean" not in line), line
    assert "read_timeout: expected a finite number" in lines[3]
    assert "given twice" in lines[9]
    runner = CliRunner()
    result = runner.invoke(main, ["check", "--config", str(path), str(FIXTURES / "jobs")])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("gpu-audit: error: ") == 10


def test_since_is_a_date_yaml_reads_unquoted_or_one_located_line(tmp_path: Path) -> None:
    config = tmp_path / ".gpu-audit.yaml"
    config.write_text("aws:\n  since: 2026-09-01\ngcp:\n  since: '2026-09-01T06:00:00Z'\n")
    settings = load_settings(str(config))
    assert settings.section("aws").since == "2026-09-01"  # YAML's date, read back as text
    assert settings.section("gcp").since == "2026-09-01T06:00:00Z"
    config.write_text("gcp:\n  projects: [p]\n  since: last week\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(str(config))
    assert str(caught.value) == (
        f"{config}:3: config: gcp.since: 'last week': expected a date (2026-09-01) or an ISO time"
    )
