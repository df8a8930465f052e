"""Vertex AI parser: what the fixture scheme cannot express, and the real-world corpus."""

from __future__ import annotations

import pytest
from tests.conftest import SHARED, need_shared

from gpu_audit.core.resource import Capacity
from gpu_audit.core.yamlsrc import load_documents
from gpu_audit.jobs import load_jobs
from gpu_audit.jobs.vertex.parser import Vertex

CORPUS = SHARED / "corpus" / "vertex"


def _parse(text: str, path: str = "job.yaml") -> list:
    (document,) = load_documents(path, text)
    fmt = Vertex()
    parsed = fmt.parse(document, path)
    assert parsed is not None, "not recognised"
    return parsed


POOL = (
    "workerPoolSpecs:\n  - machineSpec: {machineType: g2-standard-4, acceleratorType: NVIDIA_L4}\n"
)


@pytest.mark.parametrize(
    ("strategy", "capacity"),
    [
        ("SPOT", Capacity.SPOT),
        ("LOW_COST", Capacity.SPOT),
        ("STANDARD", Capacity.ON_DEMAND),
        ("FLEX_START", Capacity.ON_DEMAND),
        ("spot", Capacity.SPOT),
        ("BOGUS", None),
    ],
)
def test_scheduling_strategy(strategy: str, capacity: Capacity | None) -> None:
    (job,) = _parse(POOL + f"scheduling: {{strategy: {strategy}}}\n")
    assert job.capacity is capacity


def test_no_strategy_is_on_demand_and_accelerator_count_defaults_to_one() -> None:
    (job,) = _parse(POOL)
    assert (job.capacity, job.gpu.model, job.gpu.count) == (Capacity.ON_DEMAND, "L4", 1)


def test_gcsfuse_paths_and_empty_pools() -> None:
    (job,) = _parse(
        "workerPoolSpecs:\n"
        "  - machineSpec: {machineType: a2-highgpu-1g}\n"
        "    containerSpec: {imageUri: x, args: ['--data=/gcs/corpus-bkt/shards', 'gs://out-bkt/{run}']}\n"
        "  - {}\n"
    )
    assert job.data.uris == ("gs://corpus-bkt/shards", "gs://out-bkt")
    assert (job.gpu.model, job.gpu.count) == ("A100-40GB", 1)


def test_kubernetes_and_compose_files_are_not_vertex() -> None:
    for text in (
        "apiVersion: v1\nkind: Pod\nworkerPoolSpecs: []\n",
        "services: {web: {image: x}}\n",
    ):
        (document,) = load_documents("x.yaml", text)
        assert Vertex().parse(document, "x.yaml") is None


GPU_FILES = {
    "daangn__article-classifier_config_gpu.legacy-aiplatform.yaml": ("K80", 5),
    "fabiusnaumann__vertex_job.yaml": ("T4", 1),
    "formigone__ml-engine_config_gpu.legacy-aiplatform.yaml": ("P100", 4),
    "liamconnell__FootyAI_job_config.yaml": ("T4", 1),
    "liamconnell__TinyDiffusionModels_shakespeare-training.yaml": ("V100", 1),
    "rileyseaburg__distillix_vertex_config.yaml": ("L4", 1),
    "sidkris__polars-lm_vertex_job.yaml": ("T4", 1),
    "sophiafi__IDM-VTON_vertex_job.yaml": ("A100-40GB", 1),
    "tinverse__hoopsense_vertex_job.yaml": ("T4", 1),
    "vertexsamples__a3mega_llama3_nemo_job_config.wrapper.json": ("H100", 16),
}


def test_corpus_gpu_jobs_are_recognised() -> None:
    need_shared(CORPUS)
    recognised = {}
    for path in sorted(CORPUS.iterdir()):
        load = load_jobs([str(path)])
        jobs = [r for r in load.resources if r.provider == "vertex"]
        if jobs:
            recognised[path.name] = (jobs[0].gpu.model, jobs[0].gpu.count)
        else:  # the CPU-only configs are recognised as Vertex and skipped for having no GPU
            assert "a vertex config that requests no GPUs" in load.skipped[0].reason, path.name
    assert recognised == GPU_FILES
