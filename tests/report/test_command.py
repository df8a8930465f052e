"""The command line in the Markdown header: recorded by the CLI, secrets redacted, no absolute
path published, and kept out of the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.report.command import redact_argv, shown_command
from gpu_audit.report.markdown_text import shown_path
from tests.report.conftest import DEMO_INVENTORY, DEMO_POLICY


def test_secrets_are_redacted() -> None:
    argv = redact_argv(
        [
            "scan",
            "--prometheus",
            "https://alice:hunter2@prom.example/api?token=abc123",
            "--api-token",
            "s3cr3t",
            "--password=pa55",
            "--role-arn",
            "arn:aws:iam::111122223333:role/gpu-audit-read",
            "AKIAABCDEFGHIJKLMNOP",
            "key=v;secret_key=zzz",
        ]
    )
    text = " ".join(argv)
    for secret in ("hunter2", "alice", "abc123", "s3cr3t", "pa55", "AKIAABCDEFGHIJKLMNOP", "zzz"):
        assert secret not in text
    assert "https://[redacted]@prom.example/api?[redacted]" in argv
    assert argv[3:6] == ("--api-token", "[redacted]", "--password=[redacted]")
    assert "arn:aws:iam::111122223333:role/gpu-audit-read" in argv  # not a secret


def test_absolute_paths_are_shortened(in_root: Path) -> None:
    policy = str(in_root / DEMO_POLICY)
    argv = ("scan", "--policy", policy, f"--output={in_root}/out.md", "-o", "/elsewhere/a b.md")
    shown = shown_command(argv, shown_path)
    assert shown == (f"gpu-audit scan --policy {DEMO_POLICY} --output=out.md -o 'a b.md'")


def test_the_markdown_header_shows_the_full_command(in_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit.md"
    args = [
        "scan",
        "--inventory",
        str(in_root / DEMO_INVENTORY),
        "--policy",
        DEMO_POLICY,
        "--fail-on",
        "none",
        "--report",
        f"json={tmp_path / 'audit.json'}",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    head = out.read_text().split("## ", 1)[0]
    command = next(line for line in head.splitlines() if line.startswith("| Command |"))
    assert command == (
        f"| Command | gpu-audit scan --inventory {DEMO_INVENTORY} --policy {DEMO_POLICY} "
        "--fail-on none --report json=audit.json -o audit.md |"
    )
    assert str(tmp_path) not in out.read_text() and str(in_root) not in out.read_text()
    scope = json.loads((tmp_path / "audit.json").read_text())["scope"]
    assert "argv" not in scope and scope["command"] == "scan"


def test_check_records_its_command_too(in_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "check.md"
    job = "fixtures/jobs/skypilot/serve-on-demand.yaml"
    result = CliRunner().invoke(main, ["check", job, "--fail-on", "none", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"| Command | gpu-audit check {job} --fail-on none -o check.md |" in out.read_text()


def test_a_hostile_argument_stays_one_inert_cell(demo: object) -> None:
    from dataclasses import replace

    from gpu_audit.core.results import ScanResult
    from gpu_audit.report import markdown
    from tests.report.conftest import HOSTILE
    from tests.report.test_markdown import assert_well_formed

    assert isinstance(demo, ScanResult)
    scope = replace(demo.scope, argv=("scan", "--inventory", HOSTILE))
    text = markdown.render(replace(demo, scope=scope))
    assert_well_formed(text, demo)
    command = next(line for line in text.splitlines() if line.startswith("| Command |"))
    assert "<script>" not in command and command.count(" | ") == 1
