"""Sweeps and settings at their limits: one located line (exit 2) or a report, never a crash: a
W&B cap of 1e308, a hyperband `eta` that is no halving rate, a `since` whose offset leaves the
calendar, `since: ~`, and a shared-GPU node that does not say its free shares."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
HYPERBAND = (ROOT / "fixtures" / "jobs" / "wandb" / "hyperband-run-cap.yaml").read_text()
DEMO = str(ROOT / "fixtures" / "inventory" / "demo.yaml")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def one_error(code: int, err: str, expected: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert lines[-1] == f"gpu-audit: error: {expected}", err
    assert "internal error" not in err


@pytest.mark.parametrize("eta", ["0", "1", "-3", "0.5"])
def test_a_hyperband_eta_that_is_no_halving_rate_is_located(tmp_path: Path, eta: str) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(HYPERBAND.replace("eta: 3", f"eta: {eta}"))
    code, _, err = invoke("check", str(path), "-q")
    shown = f"{float(eta):g}"
    one_error(
        code,
        err,
        f"{path}:19: early_terminate.eta: {shown} is not a halving rate (W&B's hyperband keeps "
        "1 in eta runs at each bracket: a number above 1)",
    )


@pytest.mark.parametrize("command", ["check", "estimate"])
def test_a_sweep_cap_of_1e308_is_located(tmp_path: Path, command: str) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(HYPERBAND.replace("run_cap: 60", "run_cap: 1e308"))
    code, _, err = invoke(command, str(path))
    one_error(code, err, f"{path}:14: hpo.max_trials: 1e+308 is above the maximum 1e+09")


@pytest.mark.parametrize("provider", ["aws", "gcp"])
def test_since_null_means_the_default(tmp_path: Path, provider: str) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text(f"{provider}:\n  since: ~\n")
    code, _, err = invoke("scan", "--config", str(config), "--inventory", DEMO, "-q")
    assert code in (0, 1), err
    assert "NoneType" not in err and "error" not in err


def test_a_wrong_type_for_an_optional_text_says_str(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("aws:\n  since: [1]\n")
    code, _, err = invoke("scan", "--config", str(config), "--inventory", DEMO, "-q")
    one_error(code, err, f"{config}:2: config: aws.since: expected str, got [1]")


EDGES = ["0001-01-01T00:00:00+05:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:00:00-14:00"]


@pytest.mark.parametrize("provider", ["aws", "gcp"])
@pytest.mark.parametrize("since", EDGES)
def test_a_since_setting_leaving_the_calendar_is_one_line(
    tmp_path: Path, provider: str, since: str
) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text(f"{provider}:\n  since: '{since}'\n")
    code, _, err = invoke("scan", "--config", str(config), "--inventory", DEMO, "-q")
    one_error(
        code,
        err,
        f"{config}:2: config: {provider}.since: {since!r}: outside the years 1 to 9999 in UTC",
    )


@pytest.mark.parametrize("provider", ["aws", "gcp"])
@pytest.mark.parametrize("since", EDGES)
def test_a_since_option_leaving_the_calendar_is_one_line(provider: str, since: str) -> None:
    code, _, err = invoke("scan", "--provider", provider, "--since", since, "-q")
    assert code == 2, err
    assert err.strip().splitlines()[-1].startswith("gpu-audit: error: "), err
    assert "internal error" not in err and "since" in err


SHARED = """\
version: 1
captured_at: '2026-11-20T06:00:00Z'
resources:
- kind: instance
  provider: kubernetes
  id: node-a
  name: node-a
  account: cluster
  region: us-east-1
  instance_type: p4d.24xlarge
  state: running
  capacity: on-demand
  share: {mode: mig, node: node-a, idle_usd: 120.5}
"""


def test_a_shared_node_without_its_free_shares_renders_in_markdown(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(SHARED)
    code, out, err = invoke(
        "scan", "--inventory", str(inventory), "--format", "markdown", "--fail-on", "none"
    )
    assert code == 0, err
    assert "## Shared GPUs" in out
    assert "? of ?: \\$120.50" in out


def test_a_settings_price_file_that_does_not_exist_is_located(tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text("fail_on: high\nprices: arm\n")
    code, _, err = invoke("check", str(ROOT / "fixtures" / "sweeps"), "--config", str(config))
    one_error(code, err, f"{config}:2: config: prices: no such file {tmp_path / 'arm'}")
