"""`history show` re-renders the audit it recorded: every format as the scan wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.history.conftest import DATES, run

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "inventory"
FORMATS = ("json", "markdown", "table", "text", "csv", "sarif")


@pytest.mark.parametrize("fmt", FORMATS)
def test_history_show_is_the_report_the_scan_wrote(fmt: str, tmp_path: Path) -> None:
    db = tmp_path / "audits.db"
    code, scanned, err = run(
        "scan", "--inventory", DEMO / "demo.yaml", "--policy", DEMO / "demo-policy.yaml",
        "--history", db, "--format", fmt, "--fail-on", "none", "--now", DATES[0],
    )  # fmt: skip
    assert code == 0, err
    code, shown, err = run("history", "show", "1", "--history", db, "--format", fmt)
    assert code == 0, err
    assert shown == scanned  # --now fixes the generation time: byte for byte


def test_every_finding_keeps_its_saving_and_unit(tmp_path: Path) -> None:
    db = tmp_path / "audits.db"
    args = ("--policy", DEMO / "demo-policy.yaml", "--history", db, "--format", "json")
    for inventory, when in (("demo.yaml", DATES[0]), ("demo-next.yaml", DATES[1])):
        code, scanned, err = run("scan", "--inventory", DEMO / inventory, *args,
                                 "--fail-on", "none", "--now", when)  # fmt: skip
        assert code == 0, err
    code, shown, err = run("history", "show", "2", "--history", db, "--format", "json")
    assert code == 0, err
    was, now = json.loads(scanned), json.loads(shown)
    assert [f["saving_unit"] for f in was["findings"]].count("month") > 10
    assert now["findings"] == was["findings"]
    assert now["summary"] == was["summary"]
