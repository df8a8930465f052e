"""The `jq` one-liners of docs/reports.md run on a real report (the demo's golden JSON) and
give what they say; skipped where jq is not installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT

DOC = ROOT / "docs" / "reports.md"
GOLDEN = ROOT / "fixtures" / "golden" / "demo.json"  # instances
JOBS = ROOT / "fixtures" / "golden" / "jobs.json"  # job files, with lines
JQ = shutil.which("jq")


def _recipes() -> list[str]:
    """Each command of the sh block after 'With `jq`', continuation lines joined."""
    text = DOC.read_text()
    block = text[text.index("With `jq`") :]
    block = block[block.index("```sh\n") + 6 : block.index("```\n", block.index("```sh\n") + 6)]
    commands: list[str] = []
    for line in block.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("jq "):
            commands.append(line)
        else:
            commands[-1] += "\n" + line
    return commands


@pytest.mark.skipif(JQ is None, reason="jq is not installed")
@pytest.mark.parametrize("command", _recipes())
def test_each_jq_recipe_runs_on_a_version_3_report(command: str) -> None:
    program = re.match(r"jq (-\w+ )?'(.*)' report\.json$", command, re.S)
    assert program, command
    flags = [program.group(1).strip()] if program.group(1) else []
    outputs = []
    for report in (GOLDEN, JOBS):
        done = subprocess.run(
            [JQ, *flags, program.group(2), str(report)], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.strip())
    assert any(outputs), "the recipe printed nothing on either report"
    assert not any(out.startswith("null") for out in outputs), outputs


@pytest.mark.skipif(JQ is None, reason="jq is not installed")
def test_the_join_recipe_rebuilds_each_findings_resource() -> None:
    report = json.loads(GOLDEN.read_text())
    done = subprocess.run(
        [JQ, ".resources as $r | .findings |= map(.resource = $r[.resource])", str(GOLDEN)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    joined = json.loads(done.stdout)["findings"]
    assert [f["resource"] for f in joined] == [
        report["resources"][f["resource"]] for f in report["findings"]
    ]
    assert len(_recipes()) >= 6
