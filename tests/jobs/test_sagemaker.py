"""SageMaker parser: what the fixture scheme cannot express, and the real-world corpus."""

from __future__ import annotations

import pytest
from tests.conftest import SHARED, need_shared

from gpu_audit.core.resource import Capacity, Workload
from gpu_audit.core.yamlsrc import Templated, load_documents
from gpu_audit.jobs import load_jobs
from gpu_audit.jobs.aws_bodies import lookup
from gpu_audit.jobs.sagemaker.parser import SageMaker

CORPUS = SHARED / "corpus" / "sagemaker"


def _parse(text: str, path: str = "job.yaml") -> list:
    (document,) = load_documents(path, text)
    fmt = SageMaker()
    parsed = fmt.parse(document, path)
    assert parsed is not None, "not recognised"
    return parsed


def test_step_functions_dollar_key_is_missing_with_its_line() -> None:
    (document,) = load_documents("x.json", '{"A": 1,\n "InstanceType.$": "$.t"}')
    value, line = lookup(document.data, "InstanceType")
    assert isinstance(value, Templated) and line == 2


def test_instance_groups_sum_gpus_and_judge_by_the_largest_class() -> None:
    (job,) = _parse(
        "TrainingJobName: hetero\n"
        "AlgorithmSpecification: {TrainingImage: img, TrainingInputMode: File}\n"
        "ResourceConfig:\n"
        "  InstanceGroups:\n"
        "    - {InstanceGroupName: data, InstanceType: ml.c5.18xlarge, InstanceCount: 2}\n"
        "    - {InstanceGroupName: gpu, InstanceType: ml.p4d.24xlarge, InstanceCount: 2}\n"
        "    - {InstanceGroupName: small, InstanceType: ml.g5.xlarge, InstanceCount: 1}\n"
    )
    assert (job.gpu.model, job.gpu.count) == ("A100-40GB", 17)
    assert job.instance_type == "ml.p4d.24xlarge"
    assert "instance groups" in (job.source.note or "")


def test_pipeline_step_reads_parameter_defaults() -> None:
    (job,) = _parse(
        '{"Version": "2020-12-01",\n'
        ' "Parameters": [{"Name": "Type", "Type": "String", "DefaultValue": "ml.g5.2xlarge"}],\n'
        ' "Steps": [{"Name": "Fit", "Type": "Training", "Arguments": {\n'
        '   "AlgorithmSpecification": {"TrainingImage": "img", "TrainingInputMode": "File"},\n'
        '   "ResourceConfig": {"InstanceCount": 3, "InstanceType": {"Get": "Parameters.Type"}},\n'
        '   "StoppingCondition": {"MaxRuntimeInSeconds": 7200}}}]}\n',
        "pipeline.json",
    )
    assert (job.name, job.instance_type, job.gpu.count) == ("Fit", "ml.g5.2xlarge", 3)
    assert job.source.key_lines["instance_type"] == 5
    assert "parameter defaults used: Type" in (job.source.note or "")


def test_endpoint_config_variants_are_inference() -> None:
    jobs = _parse(
        "EndpointConfigName: ranker\n"
        "ProductionVariants:\n"
        "  - {VariantName: a, InstanceType: ml.g5.xlarge, InitialInstanceCount: 2}\n"
        "  - {VariantName: b, ServerlessConfig: {MemorySizeInMB: 2048}}\n"
    )
    assert [(j.name, j.workload, j.gpu.count) for j in jobs] == [
        ("ranker/a", Workload.INFERENCE, 2)
    ]


def test_other_kubernetes_kinds_are_not_sagemaker() -> None:
    (document,) = load_documents(
        "k.yaml",
        "apiVersion: batch/v1\nkind: Job\nspec:\n  resourceConfig: {instanceType: ml.p3.2xlarge}\n"
        "  algorithmSpecification: {trainingImage: x}\n",
    )
    assert SageMaker().parse(document, "k.yaml") is None


def test_spot_flag_as_text_and_templated() -> None:
    body = (
        "TrainingJobName: t\nResourceConfig: {{InstanceType: ml.g5.xlarge, InstanceCount: 1}}\n"
        "EnableManagedSpotTraining: {flag}\n"
    )
    assert _parse(body.format(flag='"True"'))[0].capacity is Capacity.SPOT
    assert _parse(body.format(flag="no"))[0].capacity is Capacity.ON_DEMAND
    templated = _parse(body.format(flag='"${SPOT}"'))[0]
    assert templated.capacity is None and templated.source.key_lines["capacity"] == 3


# The corpus: every real GPU job must be recognised; CPU-only jobs are skipped with a reason.
GPU_FILES = {
    "blackjackptit__sport-small-llm_training-job.json": ("ml.g5.2xlarge", "A10G", 1),
    "smoperator__image-classifier-augmented-manifest.yaml": ("ml.p3.16xlarge", "V100", 32),
    "smexamples__archived_text-to-image-fine-tuning_template.cfn.yml": ("ml.g5.8xlarge", "A10G", 1),
    "smexamples__remote-function_huggingface_config.yaml": ("ml.g4dn.xlarge", "T4", 1),
}
UNKNOWN_TYPE_FILES = {  # instance type chosen at run time: a job whose GPUs are missing
    "ack__e2e_xgboost_trainingjob.yaml",
    "ohbuchim__managed-spot-training-pipeline_asl.json",
    "smexamples__ground_truth_active_learning_template.sfn.yaml",
    "smoperator__helm_training-jobs_job.helm.yaml",
}


@pytest.fixture(scope="module")
def corpus() -> dict[str, list]:
    need_shared(CORPUS)
    found: dict[str, list] = {}
    for path in sorted(CORPUS.iterdir()):
        load = load_jobs([str(path)])
        found[path.name] = [r for r in load.resources if r.provider == "sagemaker"]
    return found


def test_corpus_gpu_jobs_are_recognised(corpus: dict[str, list]) -> None:
    for name, (instance_type, model, count) in GPU_FILES.items():
        (job,) = corpus[name]
        assert (job.instance_type, job.gpu.model, job.gpu.count) == (instance_type, model, count)
    for name in UNKNOWN_TYPE_FILES:
        (job,) = corpus[name]
        assert job.instance_type is None and job.gpu.model is None, name
    recognised = sum(bool(jobs) for jobs in corpus.values())
    assert recognised == len(GPU_FILES) + len(UNKNOWN_TYPE_FILES)


def test_corpus_spot_step_functions_flag_is_missing(corpus: dict[str, list]) -> None:
    (job,) = corpus["ohbuchim__managed-spot-training-pipeline_asl.json"]
    assert job.capacity is None and job.source.key_lines["capacity"] == 73
