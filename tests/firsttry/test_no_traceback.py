"""Item 1 of the reader's report (round three): no traceback on a first try."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.firsttry.cli import DEMO_BILL, DEMO_TIME, gpu_audit, no_traceback, without_modules


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history with one recorded scan of the demo fleet, which holds no reservation."""
    db = tmp_path_factory.mktemp("history") / "audits.db"
    result = gpu_audit(
        "scan", "--inventory", str(FIXTURES / "inventory" / "demo.yaml"),
        "--history", str(db), "-q", "--fail-on", "none", "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM reservations").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM audits").fetchone()[0] >= 1
    return db


def test_history_reservations_without_any_says_so(recorded: Path) -> None:
    result = gpu_audit("history", "reservations", "--history", str(recorded))
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == [
        f"no reservation or Capacity Block in {recorded} (1 audit recorded)"
    ]


def test_history_reservations_json_without_any_is_an_empty_list(recorded: Path) -> None:
    import json

    result = gpu_audit("history", "reservations", "--history", str(recorded), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reservations"] == []


def test_an_empty_table_fits_as_headers_alone() -> None:
    from gpu_audit.report.fit import fitted

    lines = fitted(["audit (UTC)", "provider"], [], 80).splitlines()
    assert lines == ["audit (UTC)    provider", "-" * 13 + "  " + "-" * 10]


@pytest.mark.parametrize(
    ("blocked", "engine_args", "extra"),
    [
        (("duckdb",), [*DEMO_BILL], "billing"),
        (("duckdb",), ["--sql", *DEMO_BILL], "billing"),
        (("sqlglot",), ["--engine", "athena", "--table", "db.t", "--sql"], "billing"),
        (("sqlglot",), ["--engine", "bigquery", "--table", "p.d.t", "--sql"], "billing"),
        (("boto3", "botocore"), ["--engine", "athena", "--table", "db.t"], "aws"),
    ],
)
def test_billing_without_its_extra_names_the_extra(
    tmp_path: Path, blocked: tuple[str, ...], engine_args: list[str], extra: str
) -> None:
    env = without_modules(tmp_path, *blocked)
    result = gpu_audit("billing", *engine_args, *DEMO_TIME, "--format", "json", env=env)
    no_traceback(result)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("gpu-audit: error: ")
    assert f"pip install 'gpu-audit[{extra}]'" in lines[0]
    assert blocked[0] in lines[0]


def test_the_blocking_really_blocks(tmp_path: Path) -> None:
    """The trick the tests above rely on: the child cannot import duckdb."""
    env = without_modules(tmp_path, "duckdb")
    import os
    import sys

    child = subprocess.run(
        [sys.executable, "-c", "import duckdb"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == 1 and "ModuleNotFoundError" in child.stderr


@pytest.mark.parametrize("unset", [None, ""])
def test_athena_without_a_region_names_aws_region(tmp_path: Path, unset: str | None) -> None:
    config = tmp_path / "aws-config"
    config.write_text("[default]\n")
    env: dict[str, str | None] = {
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(config),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": unset,
        "AWS_DEFAULT_REGION": unset,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    result = gpu_audit(
        "billing", "--engine", "athena", "--table", "db.t", *DEMO_TIME, "--format", "json", env=env
    )
    no_traceback(result)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpu-audit: error: athena: "), lines
    assert "AWS_REGION" in lines[0]
