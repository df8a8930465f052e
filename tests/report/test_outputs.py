"""Several reports from one scan, and atomic writes that never leave half a file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.core import writer
from gpu_audit.errors import ConfigError
from tests.report.conftest import DEMO_INVENTORY, DEMO_POLICY

SCAN = ["scan", "--inventory", DEMO_INVENTORY, "--policy", DEMO_POLICY, "--fail-on", "none"]


def test_markdown_and_json_from_one_scan(in_root: Path, tmp_path: Path) -> None:
    md, js, csv_path = tmp_path / "audit.md", tmp_path / "audit.json", tmp_path / "audit.csv"
    args = [
        *SCAN,
        "--report",
        f"markdown={md}",
        "--report",
        f"json={js}",
        "--report",
        f"csv={csv_path}",
        "-q",
    ]
    outcome = CliRunner().invoke(main, args)
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.startswith("50 findings (30 high, 20 medium)")
    document = json.loads(js.read_text(encoding="utf-8"))
    report = md.read_text(encoding="utf-8")
    assert report.startswith("# GPU audit report")
    assert document["generated_at"] == "2026-11-20T06:00:00Z"
    assert "| Scan time | 2026\u201111\u201120 06:00 UTC |" in report  # non-breaking hyphens
    assert csv_path.read_bytes().count(b"\r\n") == len(document["findings"]) + 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.csv", "audit.json", "audit.md"]


def test_format_and_output_alongside_reports(in_root: Path, tmp_path: Path) -> None:
    out, sarif = tmp_path / "out.md", tmp_path / "out.sarif"
    args = [*SCAN, "--format", "markdown", "--output", str(out), "--report", f"sarif={sarif}"]
    outcome = CliRunner().invoke(main, args)
    assert outcome.exit_code == 0, outcome.output
    assert out.read_text(encoding="utf-8").startswith("# GPU audit report")
    assert json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_a_bad_report_spec_is_a_usage_error(in_root: Path) -> None:
    outcome = CliRunner().invoke(main, [*SCAN, "--report", "pdf=x.pdf"])
    assert outcome.exit_code == 2


def test_an_unwritable_report_exits_2(in_root: Path, tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        main, [*SCAN, "--report", f"json={tmp_path / 'missing' / 'a.json'}"]
    )
    assert outcome.exit_code == 2
    assert "cannot write report" in outcome.output


def test_atomic_write_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    writer.write_atomic(str(target), "new\r\n")
    assert target.read_bytes() == b"new\r\n"  # newline="" keeps CSV's CRLF as written
    assert os.listdir(tmp_path) == ["report.md"]


def test_failed_rename_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")

    def refuse(src: str, dst: str) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(writer.os, "replace", refuse)
    with pytest.raises(ConfigError, match="cannot write report"):
        writer.write_atomic(str(target), "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["report.json"]


def test_interrupted_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.md"
    target.write_text("old", encoding="utf-8")

    def killed(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        writer.write_atomic(str(target), "half")
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["report.md"]
