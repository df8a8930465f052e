"""Run the installed `gpu-audit` as a newcomer does: a child process, a set COLUMNS, a fresh HOME."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import ROOT

DEMO_BILL = [str(ROOT / "fixtures" / "billing" / "demo" / c) for c in ("aws", "azure", "gcp")]
DEMO_TIME = ["--period", "2026-Q3", "--now", "2026-10-05T08:00:00Z"]


def gpu_audit(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    columns: int = 80,
) -> subprocess.CompletedProcess[str]:
    """`gpu-audit ARGS` in a child process, its output as text; COLUMNS set (never inherited);
    a None in `env` unsets that variable."""
    child = {**os.environ, "COLUMNS": str(columns), **(env or {})}
    child = {k: v for k, v in child.items() if v is not None}
    return subprocess.run(
        [sys.executable, "-m", "gpu_audit", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=child,
        timeout=120,
        check=False,
    )


def without_modules(tmp: Path, *names: str) -> dict[str, str]:
    """An environment whose Python cannot import `names` (as if the extra were not installed)."""
    site = tmp / "no-extra"
    site.mkdir(exist_ok=True)
    blocked = ", ".join(repr(n) for n in names)
    (site / "sitecustomize.py").write_text(
        f"import sys\nfor _name in ({blocked},):\n    sys.modules[_name] = None\n"
    )
    return {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")])}


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def git(repo: Path, *args: str) -> None:
    """`git ARGS` in `repo` with a throwaway identity (the tests' own commits)."""
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo, check=True, capture_output=True,
    )  # fmt: skip
