"""Workload evidence: what a job file runs names its workload, and the note says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_audit.core.resource import Workload
from gpu_audit.jobs import load_jobs
from gpu_audit.jobs.evidence import Ran, classify

PRECISION = Path(__file__).resolve().parents[2] / "fixtures" / "precision"


@pytest.mark.parametrize(
    ("script", "workload", "evidence"),
    [
        ("vllm serve mistralai/Mistral-7B --port 8000", Workload.INFERENCE, "a vLLM server"),
        ("text-generation-launcher --num-shard 2", Workload.INFERENCE, "a TGI server"),
        ("python -m sglang.launch_server --model x", Workload.INFERENCE, "an SGLang server"),
        ("ollama serve", Workload.INFERENCE, "an Ollama server"),
        ("serve deploy serve_config.yaml", Workload.INFERENCE, "a Ray Serve application"),
        ("mpirun -np 16 ./build/all_reduce_perf -b 8 -e 8G", Workload.BENCHMARK, "NCCL tests"),
        ("python benchmark_throughput.py --model x", Workload.BENCHMARK, "a benchmark"),
        ("python transcribe.py --model large-v3", Workload.BATCH_INFERENCE, "batch inference"),
        ("python run_alphafold.py --fasta_paths x", Workload.BATCH_INFERENCE, "batch inference"),
        ("accelerate launch eval_harness.py", Workload.BATCH_INFERENCE, "batch inference"),
        ("torchrun --nproc_per_node 8 train.py", Workload.TRAINING, "a training script"),
        ("vllm serve ./rollout & python train_grpo.py", Workload.TRAINING, "a training script"),
        ("deepspeed main.py --zero 3", Workload.TRAINING, "a distributed launcher"),
        ("pip install jupyterlab && jupyter lab", Workload.NOTEBOOK, "a dev box"),
    ],
)
def test_the_first_pattern_that_matches_names_the_workload(
    script: str, workload: Workload, evidence: str
) -> None:
    found = classify([Ran(script, "`run`", 3)])
    assert found is not None
    assert found[0] is workload
    assert found[1].startswith(evidence) and "in `run`" in found[1]
    assert found[2] == 3


def test_nothing_recognisable_is_no_evidence() -> None:
    assert classify([Ran("python main.py --config c.yaml", "`run`")]) is None
    assert classify([Ran("nvidia-smi", "`run`")]) is None


def _load(name: str) -> list:  # type: ignore[type-arg]
    load = load_jobs([str(PRECISION / name)])
    assert load.resources, load.skipped
    return list(load.resources)


def test_a_serving_cluster_is_inference_and_its_note_names_the_command() -> None:
    [workers] = _load("ray-serve-aws.yaml")  # the head has no GPUs
    assert workers.workload is Workload.INFERENCE
    assert "`serve deploy` in `head_start_ray_commands`" in (workers.source.note or "")


def test_a_format_kind_wins_over_commands_and_a_training_kind_yields_to_them() -> None:
    [tgi] = _load("dstack-service-tgi.dstack.yml")
    assert tgi.workload is Workload.INFERENCE and "a dstack service" in (tgi.source.note or "")
    [nccl] = _load("k8s-nccl-mpijob.yaml")  # an MPIJob that runs NCCL tests
    assert nccl.workload is Workload.BENCHMARK
    [kserve] = _load("k8s-kserve-llm.yaml")
    assert kserve.workload is Workload.INFERENCE and kserve.gpu.count == 1  # minReplicas


def test_no_evidence_stays_unknown_and_a_task_without_run_is_a_dev_box(tmp_path: Path) -> None:
    config = tmp_path / "job.yaml"
    config.write_text("resources:\n  accelerators: A100:1\nrun: python main.py\n")
    [job] = load_jobs([str(config)]).resources
    assert job.workload is Workload.UNKNOWN
    assert "workload unknown" in (job.source.note or "")
    [box] = _load("sky-devbox.yaml")
    assert box.workload is Workload.NOTEBOOK and "an interactive cluster" in (box.source.note or "")


RAY_SERVICE = """\
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llm
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: serve_app:app
        deployments:
          - name: VLLMDeployment
            ray_actor_options:
              num_gpus: 1
              accelerator_type: "H100"
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, image: rayproject/ray-ml:2.38.0}]
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        template:
          spec:
            containers:
              - name: worker
                image: rayproject/ray-ml:2.38.0
                resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_ray_serve_accelerator_type_names_the_gpu(tmp_path: Path) -> None:
    config = tmp_path / "rayservice.yaml"
    config.write_text(RAY_SERVICE)
    [service] = load_jobs([str(config)]).resources
    assert service.gpu.model == "H100" and service.workload is Workload.INFERENCE
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "cluster_name: c\nprovider: {type: aws, region: us-east-1}\nhead_node_type: head\n"
        "available_node_types:\n  head: {node_config: {InstanceType: m5.large}, resources: {}}\n"
        "  gpu:\n    min_workers: 1\n    max_workers: 2\n    node_config: {}\n"
        '    resources: {GPU: 8, "accelerator_type:A100": 1}\n'
    )
    [workers] = load_jobs([str(cluster)]).resources
    assert (workers.gpu.model, workers.gpu.count) == ("A100-40GB", 8)


def test_a_workload_label_states_what_nothing_run_says(tmp_path: Path) -> None:
    config = tmp_path / "job.yaml"
    config.write_text(
        "resources:\n  accelerators: A100:1\n  labels:\n    gpu-audit/workload: training\n"
        "run: python main.py\n"
    )
    [job] = load_jobs([str(config)]).resources
    assert job.workload is Workload.TRAINING
    assert "the `gpu-audit/workload` label" in (job.source.note or "")
