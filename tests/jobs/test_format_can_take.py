"""No finding the format cannot take (issue 48): a Vertex CustomJobSpec gets its labels on the
command line, and a dstack task ends with its commands."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import NOW

from gpu_audit.audit import audit
from gpu_audit.core.results import ScanResult, Scope
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.loader import load_policy

SPEC = """\
workerPoolSpecs:
  machineSpec: {machineType: g2-standard-8, acceleratorType: NVIDIA_L4, acceleratorCount: 1}
  replicaCount: 1
  containerSpec:
    imageUri: us-docker.pkg.dev/x/train:1
    args: ["python", "train.py", "--epochs", "3"]
scheduling: {strategy: SPOT, timeout: 7200s}
baseOutputDirectory: {outputUriPrefix: gs://x/out}
"""
# the same job as a CustomJob body, which has `labels` and leaves them out
BODY = "displayName: train\njobSpec:\n" + "".join(f"  {line}\n" for line in SPEC.splitlines())


def _audit(tmp_path: Path, files: dict[str, str]) -> ScanResult:
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name))
    return audit(load_jobs(paths).resources, load_policy(None), NOW, Scope(command="check"))


def _by_file(result: ScanResult) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in result.findings:
        found.setdefault(Path(finding.resource.source.path).name, set()).add(finding.rule_id)
    return found


def test_a_custom_job_spec_is_not_told_to_add_labels_a_custom_job_is(tmp_path: Path) -> None:
    # judged together: the rule's verdict cache must not carry one file's verdict to the other
    result = _audit(tmp_path, {"spec.yaml": SPEC, "body.yaml": BODY})
    found = _by_file(result)
    assert "cost-allocation-tags" not in found.get("spec.yaml", set())
    assert "cost-allocation-tags" in found["body.yaml"]
    unknown = {
        (Path(n.resource.source.path).name, n.rule_id, n.missing) for n in result.not_evaluated
    }
    assert ("spec.yaml", "cost-allocation-tags", "tags.team") in unknown


BENCH = """\
type: task
name: nccl-bench
nodes: 2
commands:
  - all_reduce_perf -b 8 -e 8G -f 2 -g 8
resources:
  gpu: H100:8
"""
SLEEPER = """\
type: task
name: box
commands:
  - pip install -r requirements.txt
  - sleep infinity
resources:
  gpu: A100:1
"""
DEV = """\
type: dev-environment
name: ide
ide: vscode
resources:
  gpu: A100:1
"""


def test_a_dstack_task_ends_with_its_commands_a_sleeping_one_does_not(tmp_path: Path) -> None:
    found = _by_file(
        _audit(
            tmp_path,
            {"bench.dstack.yml": BENCH, "box.dstack.yml": SLEEPER, "ide.dstack.yml": DEV},
        )
    )
    assert "idle-teardown" not in found.get("bench.dstack.yml", set())
    assert "idle-teardown" in found["box.dstack.yml"]
    assert "idle-teardown" in found["ide.dstack.yml"]
