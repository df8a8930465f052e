"""Issue 38.10: `make demo` keeps its audit history, so `history list/show/trend` can be tried,
and says in one line what it shows. Run with the real make, in a copy of the demo's inputs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def test_make_demo_keeps_its_history_and_says_what_it_shows(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    for inputs in ("inventory", "billing"):  # the fleet's two quarters, and the quarter's bill
        shutil.copytree(ROOT / "fixtures" / inputs, tmp_path / "fixtures" / inputs)
    (tmp_path / "pyproject.toml").write_text("")
    stamp = tmp_path / "stamp"
    stamp.write_text("")  # the venv is this one: newer than pyproject.toml, nothing to install
    os.utime(tmp_path / "pyproject.toml", (0, 0))
    bin_dir = Path(sys.executable).parent
    make = ["make", "-s", "-C", str(tmp_path), "-f", str(ROOT / "Makefile")]
    done = subprocess.run(
        [*make, "demo", f"BIN={bin_dir}", f"STAMP={stamp}"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "120"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("gpu-audit demo: ") and "history" in first and len(first) <= 200
    database = tmp_path / ".gpu-audit-demo" / "audits.db"
    assert database.is_file() and (tmp_path / "gpu-audit-demo.md").is_file()
    bill = (tmp_path / "gpu-audit-demo-bill.md").read_text()
    assert (
        bill.startswith("## GPU spend from the bill: 2026-Q3")
        and "unused-reserved-capacity" in bill
    )
    assert "The quarter from the bill" in done.stdout
    again = subprocess.run(
        [*make, "demo", f"BIN={bin_dir}", f"STAMP={stamp}"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    listed = subprocess.run(
        [bin_dir / "gpu-audit", "history", "list", "--history", str(database)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if line[:1].isdigit()]
    assert len(rows) == 2  # made anew on each run: the two quarters, once each
