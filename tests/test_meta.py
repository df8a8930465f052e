"""Meta-tests over the registries: what exists is documented, validated and exercised."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gpu_audit.policy.conditions import COMBINATORS
from gpu_audit.policy.loader import builtin_pack_path, load_policy
from gpu_audit.policy.operators import OPERATORS
from tests.conftest import ROOT

LANGUAGE_DOC = (ROOT / "docs" / "policy-language.md").read_text()


@pytest.mark.parametrize("operator", [*OPERATORS, *COMBINATORS])
def test_every_operator_is_documented(operator: str) -> None:
    assert f"`{operator}`" in LANGUAGE_DOC


@pytest.mark.parametrize("path", sorted((ROOT / "policies").rglob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_policy_validates(path: Path) -> None:
    policy = load_policy([str(path)])
    assert policy.rules


def test_the_builtin_pack_is_the_checked_in_file() -> None:
    assert (
        Path(builtin_pack_path("runbook")).read_text()
        == (ROOT / "policies" / "runbook.yaml").read_text()
    )


@pytest.mark.slow
def test_the_wheel_carries_the_pack_catalog_and_schemas(tmp_path: Path) -> None:
    """A plain `pip install` must find the default pack: build the wheel and look inside."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [wheel] = tmp_path.glob("gpu_audit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "gpu_audit/policies/runbook.yaml",
        "gpu_audit/policies/examples/team-overlay.yaml",
        "gpu_audit/policy/schema.json",
        "gpu_audit/diff/diff-v1.schema.json",
        "gpu_audit/catalog/data/instances.csv",
        "gpu_audit/catalog/data/prices.csv",
    ):
        assert needed in names
