"""AWS Batch parser: what the fixture scheme cannot express, and the real-world corpus."""

from __future__ import annotations

import pytest
from tests.conftest import SHARED, need_shared

from gpu_audit.core.yamlsrc import load_documents
from gpu_audit.jobs import load_jobs
from gpu_audit.jobs.batch.parser import Batch, _range_size

CORPUS = SHARED / "corpus" / "aws-batch"


def _parse(text: str, path: str = "job.json") -> list:
    (document,) = load_documents(path, text)
    fmt = Batch()
    parsed = fmt.parse(document, path)
    assert parsed is not None, "not recognised"
    return parsed


@pytest.mark.parametrize(
    ("target", "nodes", "size"),
    [("0:", 4, 4), ("1:", 4, 3), (":2", None, 3), ("1:2", 8, 2), ("3", 8, 1), ("0:", None, None)],
)
def test_target_node_ranges(target: str, nodes: float | None, size: int | None) -> None:
    assert _range_size(target, nodes) == size


def test_eks_properties_gpu_limits() -> None:
    (job,) = _parse(
        '{"jobDefinitionName": "eks", "type": "container", "eksProperties": {"podProperties": '
        '{"containers": [{"image": "x", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}}'
    )
    assert job.gpu.count == 2 and job.capacity is None


def test_fargate_and_cpu_environments_yield_nothing() -> None:
    for kind, types in (("FARGATE_SPOT", "[]"), ("SPOT", '["optimal"]'), ("EC2", '["m5.large"]')):
        (document,) = load_documents(
            "ce.json",
            f'{{"computeEnvironmentName": "ce", "computeResources": '
            f'{{"type": "{kind}", "instanceTypes": {types}}}}}',
        )
        assert Batch().parse(document, "ce.json") == []  # recognised, no GPUs


def test_ecs_task_definitions_are_not_batch() -> None:
    (document,) = load_documents(
        "task.json",
        '{"family": "x", "containerDefinitions": [{"image": "x", '
        '"resourceRequirements": [{"type": "GPU", "value": "1"}]}]}',
    )
    assert Batch().parse(document, "task.json") is None


GPU_FILES = {  # file → [(name, gpu.model, gpu.count, capacity)]
    "hengl2022__ESMfold2_job-definition.json": [("esmfold2-gpu-jobdef", None, 1, None)],
    "johnewart__batch-environment.cfn.yaml": [("GPUComputeEnvironment", "M60", None, "on-demand")],
    "ntustison__flow_models_job_definition_template.json": [(None, None, 1, None)],
    "porcaro33__gpu-aws-batch_computing_env.json": [("gpu-aws-batch", "V100", None, "spot")],
    "rbreslow__test-gpu.containerProperties.json": [(None, None, 1, None)],
    "snowtimber__gpu-batch-benchmark.cfn.yaml": [
        ("GpuComputeEnvironment", "V100", None, "on-demand"),
        ("gpu-image-processing-benchmark", None, 1, None),
    ],
    "snowtimber__gpu-compute-env.json": [("gpu-compute-environment", "V100", None, "on-demand")],
    "snowtimber__job-definition-example.json": [("gpu-image-processing-benchmark", None, 1, None)],
    "swajahataziz__namd_compute_environment.json": [
        ("namd-compute-environment", "V100-32GB", None, "on-demand")
    ],
    "swajahataziz__namd_job_definition.json": [("namd-job-definition", None, 2, None)],
    "undynamic__sequence-alignment_job-definition.json": [
        ("local-sequence-alignment-job-definition", None, 1, None)
    ],
}


def test_corpus_gpu_jobs_are_recognised() -> None:
    need_shared(CORPUS)
    recognised = {}
    for path in sorted(CORPUS.iterdir()):
        load = load_jobs([str(path)])  # never raises; HCL (.tf) is reported as unreadable YAML
        jobs = [r for r in load.resources if r.provider == "batch"]
        if jobs:
            recognised[path.name] = [
                (j.name, j.gpu.model, j.gpu.count, j.capacity and j.capacity.value) for j in jobs
            ]
    assert recognised == GPU_FILES


def test_tag_findings_in_a_template_point_at_each_resource() -> None:
    """A CloudFormation template holds several resources: a missing tag is reported at the
    resource's logical id, not at the template's first line."""
    from click.testing import CliRunner

    from gpu_audit.cli.main import main

    path = "fixtures/jobs/batch/cloudformation.yaml"
    out = CliRunner().invoke(main, ["check", path, "--fail-on", "none"]).output
    lines = [line for line in out.splitlines() if "cost-allocation-tags" in line]
    assert [line.split(": ", 1)[0] for line in lines] == [f"{path}:9", f"{path}:20"]
