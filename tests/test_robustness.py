"""Issue 26 item 13: fractional counts refused where they enter, a file's many errors bounded,
inventory errors keep their line in the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main


def _run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


GPU = "resources: {limits: {nvidia.com/gpu: 1}}"
JOBS = {
    "sky.yaml": ("name: t\nnum_nodes: 0.5\nresources:\n  accelerators: A100:8\nrun: x\n",
                 ":2: num_nodes: expected a whole number, got 0.5"),
    "job.yaml": ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 0.5\n"
                 f"  template:\n    spec:\n      containers:\n        - {{name: c, image: x, {GPU}}}\n",
                 ":5: parallelism: expected a whole number, got 0.5"),
    "volcano.yaml": ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n"
                     "  tasks:\n    - name: w\n      replicas: 0.5\n      template:\n        spec:\n"
                     f"          containers:\n            - {{name: c, image: x, {GPU}}}\n",
                     ":7: replicas: expected a whole number, got 0.5"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JOBS))
def test_a_fractional_count_is_refused_at_its_line(tmp_path: Path, name: str) -> None:
    body, message = JOBS[name]
    path = tmp_path / name
    path.write_text(body)
    code, out, err = _run("check", path, "--format", "json")
    assert code == 2
    assert f"gpu-audit: error: {path}{message}" in err
    report = json.loads(out)
    assert report["resources"] == [] and report["skipped"][0]["line"] == int(message.split(":")[1])


def test_many_inventory_errors_are_bounded_and_keep_their_lines(tmp_path: Path) -> None:
    resources = [
        {"provider": "aws", "id": f"i-{index}", f"bad_key_{index}": 1, "state": "running"}
        for index in range(5000)
    ]
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps({"version": 1, "resources": resources}, indent=1))
    code, out, err = _run("scan", "--inventory", inventory, "--format", "json")
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 51
    assert "and 4,950 more errors in this file" in lines[-1]
    skipped = json.loads(out)["skipped"]
    assert len(skipped) == 51
    assert all(isinstance(s["line"], int) and s["line"] > 1 for s in skipped)
    assert skipped[0]["line"] < skipped[1]["line"]
