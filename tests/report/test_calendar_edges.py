"""Times at the edges of the calendar: every writer handles every time the readers accept, and a
time that does not exist in UTC is refused where it is read, with its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.report.registry import REPORTERS
from tests.report.conftest import DEMO_INVENTORY, DEMO_POLICY

EDGES = (
    "0001-01-01T00:00:00Z",
    "0001-01-01T05:00:00+05:00",  # year 1's first instant, with an offset
    "9999-12-31T23:59:59.999999Z",
    "9999-12-31T18:59:59-05:00",
    "2028-02-29T23:59:59+14:00",  # a leap day, far east
)
OUTSIDE = ("0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-00:01")


def _scan(*args: str) -> tuple[int, str, str]:
    run = CliRunner().invoke(main, ["scan", "--fail-on", "none", *args])
    assert run.exception is None or isinstance(run.exception, SystemExit), run.exception
    return run.exit_code, run.stdout, run.stderr


@pytest.mark.parametrize("when", EDGES)
@pytest.mark.parametrize("fmt", sorted(REPORTERS))
def test_every_writer_takes_every_time_the_reader_accepts(when: str, fmt: str) -> None:
    code, out, err = _scan("--inventory", DEMO_INVENTORY, "--policy", DEMO_POLICY,
                           "--now", when, "--format", fmt)  # fmt: skip
    assert code == 0, err
    if fmt in ("json", "sarif"):
        json.loads(out)


@pytest.mark.parametrize("when", OUTSIDE)
def test_now_outside_utc_is_refused_in_one_line(when: str) -> None:
    code, out, err = _scan("--inventory", DEMO_INVENTORY, "--now", when, "--format", "sarif")
    assert code == 2 and not out
    assert err == f"gpu-audit: error: --now: '{when}' is out of range: in UTC it falls before " \
        "year 1 or after year 9999\n"  # fmt: skip


@pytest.mark.parametrize("when", OUTSIDE)
def test_captured_at_outside_utc_is_refused_at_its_line(tmp_path: Path, when: str) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_text(f'{{"version": 1,\n "captured_at": "{when}",\n "resources": []}}\n')
    code, out, err = _scan("--inventory", str(inventory), "--format", "sarif")
    assert code == 2  # an unreadable input: the report says what was read, exit 2
    json.loads(out)
    (line,) = [line for line in err.splitlines() if "error" in line]
    assert line.startswith(f"gpu-audit: error: {inventory}:2: ") and "out of range" in line
