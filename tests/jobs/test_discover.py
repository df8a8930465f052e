"""`check DIR` and `check 'GLOB'`: recursion, .gitignore, --exclude and the settings key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.jobs.discover import expand

JOB = "resources:\n  accelerators: H100:8\n  use_spot: false\nrun: python train.py\n"


def _tree(root: Path) -> None:
    for path in [
        "jobs/a.yaml",
        "jobs/team/b.yml",
        "jobs/team/deep/c.json",
        "jobs/generated/d.yaml",
        "jobs/vendor/e.yaml",
        "jobs/notes.txt",
        ".git/f.yaml",
    ]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(
            '{"resources": {"accelerators": "H100:8"}}' if path.endswith(".json") else JOB
        )
    (root / ".gitignore").write_text("jobs/generated/\n")


def _rel(paths: list[str], root: Path) -> list[str]:
    return [os.path.relpath(p, root) for p in paths]


def test_directory_recurses_honouring_gitignore_and_excludes(tmp_path: Path) -> None:
    _tree(tmp_path)
    files, unmatched = expand([str(tmp_path / "jobs")], ["vendor/"])
    assert _rel(files, tmp_path) == ["jobs/a.yaml", "jobs/team/b.yml", "jobs/team/deep/c.json"]
    assert unmatched == []
    everything, _ = expand([str(tmp_path / "jobs")])
    assert "jobs/vendor/e.yaml" in _rel(everything, tmp_path)
    assert "jobs/generated/d.yaml" not in _rel(everything, tmp_path)  # the root .gitignore
    assert not any(p.endswith(".txt") for p in everything)
    whole, _ = expand([str(tmp_path)])
    assert not any(".git" in p for p in _rel(whole, tmp_path)) and len(whole) == 4


def test_globs_expand_and_explicit_files_are_always_read(tmp_path: Path) -> None:
    _tree(tmp_path)
    files, unmatched = expand([str(tmp_path / "jobs/**/*.yml"), str(tmp_path / "jobs/notes.txt")])
    assert _rel(files, tmp_path) == ["jobs/team/b.yml", "jobs/notes.txt"]
    files, _ = expand([str(tmp_path / "jobs/vendor/e.yaml")], ["vendor/"])
    assert _rel(files, tmp_path) == ["jobs/vendor/e.yaml"]
    _, unmatched = expand([str(tmp_path / "nothing/*.yaml")])
    assert unmatched and "no job file matches" in unmatched[0]


def test_check_dir_end_to_end_with_exclude_flag_and_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["check", "jobs", "--format", "json", "--fail-on", "none"])
    files = json.loads(result.stdout)["scope"]["files"]
    assert result.exit_code == 0, result.output
    assert sorted(files) == [
        "jobs/a.yaml",
        "jobs/team/b.yml",
        "jobs/team/deep/c.json",
        "jobs/vendor/e.yaml",
    ]
    result = runner.invoke(
        main, ["check", "jobs", "--exclude", "deep", "--format", "json", "--fail-on", "none"]
    )
    assert "jobs/team/deep/c.json" not in json.loads(result.stdout)["scope"]["files"]
    (tmp_path / ".gpu-audit.yaml").write_text("exclude: [vendor/]\n")
    result = runner.invoke(main, ["check", "jobs", "--format", "json", "--fail-on", "none"])
    assert "jobs/vendor/e.yaml" not in json.loads(result.stdout)["scope"]["files"]
    result = runner.invoke(main, ["check", "missing/*.yaml"])
    assert result.exit_code == 2
    assert "missing/*.yaml: no job file matches this pattern" in result.stderr
