"""A text field given a mapping or a list (`region: {a: 1}`) is one located error, exit 2, in
any job format: never a crash in the catalog join (found by the fourth fuzz campaign)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main

SAGEMAKER = {
    "apiVersion": "sagemaker.aws.amazon.com/v1",
    "kind": "TrainingJob",
    "metadata": {"name": "ranker"},
    "spec": {
        "region": "us-east-1",
        "algorithmSpecification": {"trainingImage": "x", "trainingInputMode": "File"},
        "resourceConfig": {"instanceType": "ml.p3.2xlarge", "instanceCount": 1},
        "stoppingCondition": {"maxRuntimeInSeconds": 3600},
    },
}


@pytest.mark.parametrize("value", [{"1": ["task"]}, ["us-east-1"]])
def test_a_region_that_is_no_text_is_located(tmp_path: Path, value: object) -> None:
    body = json.loads(json.dumps(SAGEMAKER))
    body["spec"]["region"] = value
    path = tmp_path / "job.json"
    path.write_text(json.dumps(body, indent=2))
    result = CliRunner().invoke(main, ["check", str(path), "-q"])
    assert result.exit_code == 2, result.stderr
    kind = "a mapping" if isinstance(value, dict) else "a list"
    assert f"gpu-audit: error: {path}:8: region: expected text, got {kind}" in result.stderr
    assert "internal error" not in result.stderr
