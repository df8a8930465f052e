"""`gpu-audit diff` keeps the CLI's promises (tests/fuzz/promises.py) when one side of the change
is a mutated job config: read from the worktree, or from a git blob at the base."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.hostile import mutated
from tests.fuzz.promises import check_run, invoke, strict_json, write

pytestmark = pytest.mark.slow  # a git repository per example: left to `make test`

GOOD_JOB = "name: ok\nresources:\n  accelerators: A100:8\n  use_spot: false\nrun: python train.py\n"
SCHEMA = json.loads(
    resources.files("gpu_audit.diff").joinpath("diff-v1.schema.json").read_text("utf-8")
)
_CAMPAIGN = int(os.environ.get("GPU_AUDIT_FUZZ_EXAMPLES", "0") or 0) // 4  # as tests/fuzz does
_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(directory: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=directory, check=True, capture_output=True, timeout=60, env={**os.environ, **_ENV},
    )  # fmt: skip


@settings(
    max_examples=_CAMPAIGN or 30,
    derandomize=not _CAMPAIGN,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    case=mutated("jobs"), at_base=st.booleans(), fmt=st.sampled_from(["json", "table", "markdown"])
)
def test_diff_keeps_its_promises_on_a_mutated_side(
    case: tuple[str, str], at_base: bool, fmt: str
) -> None:
    name, text = case
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        directory = Path(tmp).resolve()
        _git(directory, "init", "-q")
        write(directory, "good.sky.yaml", GOOD_JOB)
        write(directory, name, text if at_base else GOOD_JOB)
        _git(directory, "add", "-A")
        _git(directory, "commit", "-q", "-m", "base")
        write(directory, name, GOOD_JOB if at_base else text)
        result = invoke(["diff", "--base", "HEAD", "--format", fmt, "good.sky.yaml", name])
        check_run(result, ["good.sky.yaml", name, f"HEAD:{name}"], None, text)
        if fmt == "json" and result.stdout.strip():
            report = strict_json(result.stdout, f"\n--- input ---\n{text[:1500]}")
            jsonschema.validate(report, SCHEMA)
            assert any(j["name"] == "ok" for j in report["jobs"]), "the good file not compared"
