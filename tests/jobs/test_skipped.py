"""No silent pass in `check`: skipped files counted in every format, listed with -v, and a
job with a misspelt top-level key is an input error with a did-you-mean."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.jobs import load_jobs

MISSPELT = "name: train\nresource:\n  accelerators: H100:8\nrun: python train.py\n"
COMPOSE = "services:\n  web:\n    image: nginx\nvolumes:\n  data: {}\n"


def test_misspelt_top_level_key_is_an_input_error_with_did_you_mean(tmp_path: Path) -> None:
    job = tmp_path / "sky.yaml"
    job.write_text(MISSPELT)
    (skipped,) = load_jobs([str(job)]).skipped
    assert skipped.error and skipped.line == 2
    assert "'resource' (did you mean 'resources'?)" in skipped.reason
    result = CliRunner().invoke(main, ["check", str(job)])
    assert result.exit_code == 2
    assert f"{job}:2: looks like a SkyPilot task" in result.stderr


def test_a_compose_file_is_skipped_not_an_error(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text(COMPOSE)  # `services` is close to SkyPilot's `service`, `volumes` a key
    (skipped,) = load_jobs([str(compose)]).skipped
    assert not skipped.error


def test_skipped_inputs_are_counted_in_every_format_and_listed_with_verbose(
    tmp_path: Path,
) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text(COMPOSE)
    runner = CliRunner()
    for fmt in ("text", "table"):
        result = runner.invoke(main, ["check", str(compose), "--format", fmt])
        assert result.exit_code == 0
        assert "1 input skipped (no GPU job)" in result.stdout.splitlines()[-1]
        assert result.stderr == ""
    result = runner.invoke(main, ["check", str(compose), "-q", "-v"])
    assert "1 input skipped" in result.stdout
    assert f"gpu-audit: skipped: {compose}: not a job config" in result.stderr
    result = runner.invoke(main, ["check", str(compose), "--format", "json"])
    assert json.loads(result.stdout)["summary"]["skipped"] == 1
    result = runner.invoke(main, ["check", str(compose), "--format", "markdown"])
    assert "Skipped inputs" in result.stdout and "compose.yaml" in result.stdout
    result = runner.invoke(main, ["check", str(compose), "--format", "sarif"])
    notes = json.loads(result.stdout)["runs"][0]["invocations"][0]
    assert "not a job config" in json.dumps(notes)
