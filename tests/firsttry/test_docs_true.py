"""Item 7 of the reader's report (round three): the docs and help say what the tool does."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT
from tests.firsttry.cli import gpu_audit

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_the_readme_says_how_to_run_the_installed_program() -> None:
    quickstart = README[README.index("## Quickstart") : README.index("## A tour")]
    assert ".venv/bin/gpu-audit" in quickstart
    # the program it names is where the install put it (the suite runs from that virtualenv)
    assert (Path(sys.executable).parent / "gpu-audit").is_file()


def test_the_readme_claims_of_policies_list_are_what_it_prints() -> None:
    result = gpu_audit("policies", "list", columns=200)
    assert result.returncode == 0, result.stderr
    header = result.stdout.splitlines()[0].split()
    assert header == ["id", "severity", "title", "targets"]
    said = re.search(r"`gpu-audit policies list` ([^;)]*)", README)
    assert said is not None
    assert "precision" not in said.group(1) and "prints\nthem" not in README
    for column in header:
        assert column in said.group(1)


def test_reports_md_names_the_json_version_reports_carry() -> None:
    result = gpu_audit("check", str(FIXTURES / "jobs" / "hydra"), "--format", "json",
                       "--fail-on", "none")  # fmt: skip
    version = json.loads(result.stdout)["version"]
    text = _doc("reports.md")
    assert version == 3 and f"`version: {version}`" in text
    assert not re.search(r"schema version stays [0-9]", text)


def test_estimate_md_says_how_sagemaker_is_priced() -> None:
    text = _doc("estimate.md")
    assert "priced at their EC2 equivalent" not in text
    result = gpu_audit("estimate", str(FIXTURES / "jobs" / "sagemaker" / "ack-training-job.yaml"))
    assert "on the sagemaker rate card" in result.stdout  # what the doc now says
    assert "on the sagemaker rate card" in " ".join(text.split())


def test_pre_commit_md_says_when_the_staged_files_line_appears() -> None:
    job = str(FIXTURES / "jobs" / "hydra" / "optuna-submitit.yaml")
    result = gpu_audit("check", job, "--fail-on", "none", env={"PRE_COMMIT": "1"})
    assert "gpu-audit check: this run covers 1 staged file\n" in result.stderr
    text = " ".join(_doc("pre-commit.md").split())
    assert "Every run under pre-commit (`PRE_COMMIT` set, no `-o`) starts with" in text
    assert "each then starts with `gpu-audit check: this run covers" not in text
