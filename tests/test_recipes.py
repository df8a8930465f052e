"""The org-scale recipes in docs/recipes/ parse, use the engine's index, and run valid commands."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from gpu_audit.cli import main
from gpu_audit.collectors.workitems import Shard, parse_shard

RECIPES = Path(__file__).resolve().parents[1] / "docs" / "recipes"
_GPU_AUDIT = re.compile(r"gpu-audit (?:scan|merge)\b.*?(?= \|\| | && |; |$)", re.S)


def commands(shell: str, substitutions: dict[str, str] | None = None) -> list[list[str]]:
    """The gpu-audit command lines of a shell string, as argv lists (substitutions applied)."""
    for pattern, value in (substitutions or {}).items():
        shell = shell.replace(pattern, value)
    found = [shlex.split(m.group(0)) for m in _GPU_AUDIT.finditer(" ".join(shell.split()))]
    assert found, shell
    return [argv[1:] for argv in found]


def parsed(argv: list[str]) -> dict[str, Any]:
    """The options click parses from `argv` (an unknown option or a bad value raises)."""
    command = main.get_command(click.Context(main), argv[0])  # registered lazily: load it
    assert command is not None, argv[0]
    with command.make_context(argv[0], argv[1:]) as context:
        return dict(context.params)


def shard_of(argv: list[str], env: dict[str, str]) -> Shard:
    return parse_shard(parsed(argv)["shard_text"], env)


def test_kubernetes_indexed_job_and_merge_job() -> None:
    documents = list(yaml.safe_load_all((RECIPES / "k8s-indexed-job.yaml").read_text()))
    kinds = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    shards, merge = kinds[("Job", "gpu-audit-shards")], kinds[("Job", "gpu-audit-merge")]
    assert ("ServiceAccount", "gpu-audit") in kinds
    claim = next(name for kind, name in kinds if kind == "PersistentVolumeClaim")
    spec = shards["spec"]
    assert spec["completionMode"] == "Indexed" and spec["parallelism"] <= spec["completions"]
    for job in (shards, merge):
        pod = job["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == "gpu-audit"
        assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim
    container = spec["template"]["spec"]["containers"][0]
    (scan,) = commands(container["command"][2])
    assert scan[0] == "scan" and "$JOB_COMPLETION_INDEX" in scan[-1]
    count = spec["completions"]
    for index in range(count):  # every pod's index names its own 1-based shard of `completions`
        assert shard_of(scan, {"JOB_COMPLETION_INDEX": str(index)}) == Shard(index + 1, count)
    assert parsed(scan)["fail_on"] == "none"
    run_id = container["env"][0]
    assert run_id["name"] == "GPU_AUDIT_RUN_ID" and "job-name" in json.dumps(run_id)
    (merged,) = commands(merge["spec"]["template"]["spec"]["containers"][0]["command"][2])
    options = parsed(merged)
    assert merged[0] == "merge" and options["history"] == "/shards/audits.db"
    assert options["shards"] == ("/shards/shard-*.json",)


def test_aws_batch_array_job_and_dependent_merge() -> None:
    definition = json.loads((RECIPES / "aws-batch" / "job-definition.json").read_text())
    array = json.loads((RECIPES / "aws-batch" / "shards.json").read_text())
    merge = json.loads((RECIPES / "aws-batch" / "merge.json").read_text())
    size = array["arrayProperties"]["size"]
    assert 2 <= size <= 10_000 and array["jobDefinition"] == definition["jobDefinitionName"]
    shell = definition["containerProperties"]["command"][2]
    (scan,) = commands(shell)
    assert "AWS_BATCH_JOB_ARRAY_INDEX" in shell
    for index in range(size):
        assert shard_of(scan, {"AWS_BATCH_JOB_ARRAY_INDEX": str(index)}) == Shard(index + 1, size)
    # The merge waits for the whole array (a dependency on the parent, not N_TO_N) and runs last.
    (dependency,) = merge["dependsOn"]
    assert dependency.get("type") is None and dependency["jobId"] == merge["parameters"]["run"]
    (merged,) = commands(merge["containerOverrides"]["command"][2])
    assert merged[0] == "merge" and parsed(merged)["history"] == "/tmp/audits.db"


def test_argo_workflow() -> None:
    workflow = yaml.safe_load((RECIPES / "argo-workflow.yaml").read_text())
    templates = {t["name"]: t for t in workflow["spec"]["templates"]}
    (fan_out,), (fan_in,) = templates["audit"]["steps"]
    count = workflow["spec"]["arguments"]["parameters"][0]["value"]
    assert fan_out["withSequence"]["end"] == "{{workflow.parameters.shards}}"
    assert fan_in["template"] == "merge"
    for k in range(1, int(count) + 1):
        values = {"{{inputs.parameters.k}}": str(k), "{{workflow.parameters.shards}}": count}
        (scan,) = commands(templates["shard"]["container"]["args"][0], values)
        assert shard_of(scan, {}) == Shard(k, int(count))
    (merged,) = commands(templates["merge"]["container"]["args"][0])
    assert parsed(merged)["history"]


def test_github_actions_matrix() -> None:
    workflow = yaml.safe_load((RECIPES / "github-actions.yml").read_text())
    jobs = workflow["jobs"]
    matrix = jobs["shard"]["strategy"]["matrix"]["shard"]
    assert matrix == list(range(1, len(matrix) + 1)) and len(matrix) <= 256
    assert jobs["merge"]["needs"] == "shard"
    (step,) = [s["run"] for s in jobs["shard"]["steps"] if "gpu-audit scan" in s.get("run", "")]
    for k in matrix:
        values = {"${{ matrix.shard }}": str(k), "${{ github.run_id }}": "42"}
        (scan,) = commands(step, values)
        assert shard_of(scan, {}) == Shard(k, len(matrix)) and parsed(scan)["run_id"] == "42"
    (merge_step,) = [
        s["run"] for s in jobs["merge"]["steps"] if "gpu-audit merge" in s.get("run", "")
    ]
    (merged,) = commands(merge_step)
    assert parsed(merged)["shards"] == ("shards/shard-*.json",)


def test_a_bad_command_line_would_fail_here() -> None:
    with pytest.raises(click.UsageError):
        parsed(["scan", "--shrad", "1/2"])
