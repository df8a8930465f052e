"""No run replaces a file it read: `-o`/`--report` naming an input is one located error, exit 2,
and the input is byte-identical after (price files, settings, extended policies, shards, git)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.core.inputs import refuse_input
from gpu_audit.errors import ConfigError
from tests.conftest import ROOT

PRICES = ROOT / "fixtures" / "prices" / "example.json"
DEMO = ROOT / "fixtures" / "inventory" / "demo.yaml"
JOB = ROOT / "fixtures" / "jobs" / "skypilot" / "any-of-alternatives.yaml"


def _refused(args: list[str], victim: Path) -> str:
    before = victim.read_bytes()
    run = CliRunner().invoke(main, args)
    assert run.exit_code == 2, (run.output, run.exception)
    assert not isinstance(run.exception, Exception) or isinstance(run.exception, SystemExit)
    assert victim.read_bytes() == before
    lines = [line for line in run.stderr.splitlines() if "cannot write report" in line]
    assert len(lines) == 1 and "an input of this run" in lines[0], run.stderr
    return lines[0]


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    copy = tmp_path / "prices.json"
    shutil.copyfile(PRICES, copy)
    return copy


@pytest.mark.parametrize("flag", ["-o", "--report"])
def test_check_never_replaces_the_price_file_it_read(prices: Path, flag: str) -> None:
    out = str(prices) if flag == "-o" else f"json={prices}"
    _refused(["check", str(JOB), "--prices", str(prices), flag, out, "--fail-on", "none"], prices)


def test_scan_never_replaces_the_price_file_of_its_settings(prices: Path, tmp_path: Path) -> None:
    config = tmp_path / "settings.yaml"
    config.write_text(f"prices: {prices.name}\n", encoding="utf-8")
    args = ["scan", "--inventory", str(DEMO), "--config", str(config), "-o", str(prices)]
    _refused([*args, "--format", "json", "--fail-on", "none"], prices)


def test_estimate_never_replaces_the_price_file_it_read(prices: Path) -> None:
    _refused(["estimate", str(JOB), "--prices", str(prices), "-o", str(prices)], prices)


def test_an_extended_policy_is_an_input(tmp_path: Path) -> None:
    base = tmp_path / "base.json"  # YAML reads JSON; a report's extension
    base.write_text('{"version": 1, "extends": "runbook"}\n', encoding="utf-8")
    team = tmp_path / "team.yaml"
    team.write_text(f"version: 1\nextends: {base.name}\n", encoding="utf-8")
    args = ["check", str(JOB), "--policy", str(team), "--fail-on", "none", "-o", str(base)]
    _refused([*args, "--format", "json"], base)


def test_the_check_comes_before_any_work(prices: Path, tmp_path: Path) -> None:
    """A job file that does not exist is never read: the output is refused first."""
    run = CliRunner().invoke(
        main, ["check", str(tmp_path / "nope.yaml"), "--prices", str(prices), "-o", str(prices)]
    )
    assert run.exit_code == 2 and "an input of this run" in run.stderr
    assert "nope.yaml" not in run.stderr


def test_refuse_input_by_any_name_and_inside_a_folder(tmp_path: Path) -> None:
    read = tmp_path / "read.json"
    read.write_text("{}", encoding="utf-8")
    (tmp_path / "hard.json").hardlink_to(read)
    for name in ("read.json", "./read.json", "hard.json"):
        with pytest.raises(ConfigError, match=r"input of this run \(.*read\.json\)"):
            refuse_input(str(tmp_path / name), [str(read)])
    git = tmp_path / ".git"
    git.mkdir()
    for inside in (git, git / "HEAD", git / "refs" / "heads" / "main"):
        with pytest.raises(ConfigError, match=r"inside .*an input of this run"):
            refuse_input(str(inside), (), folders=[str(git)])
    refuse_input(str(tmp_path / ".gitignore"), [str(read)], folders=[str(git)])  # beside: fine
