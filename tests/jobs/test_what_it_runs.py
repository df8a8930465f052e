"""What a job runs decides its workload (issue 48): an evaluation or generation with a pretrained
model is not training; a Kubernetes Job named for training that writes checkpoints to a mounted
volume is, and on on-demand GPUs it is told to use spot."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import NOW

from gpu_audit.audit import audit
from gpu_audit.core.resource import Workload
from gpu_audit.core.results import Scope
from gpu_audit.jobs import load_jobs
from gpu_audit.jobs.evidence import Ran, classify
from gpu_audit.policy.loader import load_policy

# commands as public repositories run them (EleutherAI/lm-evaluation-harness scripts/eval.sh, MIT;
# the diffusers examples' --pretrained_model_name_or_path), and training beside them
NOT_TRAINING = [
    "accelerate launch -m lm_eval --model hf --model_args dtype=bfloat16,pretrained=$1 "
    "--tasks wikitext,openbookqa,piqa --batch_size auto",
    "lm_eval --model vllm --model_args pretrained=org/llama-3-8b-finetuned,tensor_parallel_size=2",
    "lm-eval run --model hf --model_args pretrained=EleutherAI/pythia-160m --tasks hellaswag",
    "python inference.py --pretrained_model_name_or_path stabilityai/stable-diffusion-2-1 "
    "--prompt 'a photo of an astronaut'",
]
TRAINING = [
    ("torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2", "pretrain_gpt"),
    ("python run_pretraining.py --input_file gs://b/wiki", "pretraining"),
    ("accelerate launch train_dreambooth.py --pretrained_model_name_or_path=stabilityai/sd-2",
     "train_dreambooth.py"),
    ("python -m nanotron.run --config pretrain.yaml", "nanotron"),
]  # fmt: skip


@pytest.mark.parametrize("run", NOT_TRAINING)
def test_an_evaluation_or_generation_with_a_pretrained_model_is_not_training(run: str) -> None:
    found = classify([Ran(run, "`run`")])
    assert found is None or found[0] is not Workload.TRAINING, found


@pytest.mark.parametrize(("run", "evidence"), TRAINING)
def test_pretraining_and_fine_tuning_stay_training(run: str, evidence: str) -> None:
    found = classify([Ran(run, "`run`")])
    assert found is not None and found[0] is Workload.TRAINING, found
    assert evidence in found[1]


SKY_EVAL = """\
name: eval-llama
resources:
  accelerators: A100:8
  cloud: aws
run: |
  RUN
"""


def _rules(tmp_path: Path, name: str, text: str) -> set[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    loaded = load_jobs([str(path)])
    result = audit(loaded.resources, load_policy(None), NOW, Scope(command="check"))
    return {f.rule_id for f in result.findings}


@pytest.mark.parametrize("run", NOT_TRAINING)
def test_an_evaluation_job_on_demand_is_not_told_to_use_spot(run: str, tmp_path: Path) -> None:
    assert "spot-for-training" not in _rules(tmp_path, "eval.yaml", SKY_EVAL.replace("RUN", run))


TRAIN_LLM = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: JOB
  labels: {team: llm, project: base, owner: ana}
spec:
  activeDeadlineSeconds: 86400
  template:
    spec:
      restartPolicy: OnFailure
      nodeSelector:
        node.kubernetes.io/instance-type: p5.48xlarge
        karpenter.sh/capacity-type: on-demand
      containers:
        - name: CONTAINER
          image: ghcr.io/example/llm:1.2
          command: ["python", "-m", "llm.main"]
          args: ["--config", "/configs/base.yaml", "--checkpoint-dir", "/checkpoints/base"]
          volumeMounts:
            - {name: checkpoints, mountPath: MOUNT}
          resources:
            limits: {nvidia.com/gpu: 8}
      volumes:
        - name: checkpoints
          persistentVolumeClaim: {claimName: llm-checkpoints}
"""


def _job(job: str = "train-llm", container: str = "train", mount: str = "/checkpoints") -> str:
    return TRAIN_LLM.replace("JOB", job).replace("CONTAINER", container).replace("MOUNT", mount)


def test_a_job_named_for_training_writing_checkpoints_to_a_mount_is_training(
    tmp_path: Path,
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(_job(), encoding="utf-8")
    (job,) = load_jobs([str(path)]).resources
    assert job.workload is Workload.TRAINING
    assert "named for training, writing checkpoints to the mounted /checkpoints/base" in (
        job.source.note or ""
    )
    assert "spot-for-training" in _rules(tmp_path, "job.yaml", _job())


@pytest.mark.parametrize(
    ("job", "container", "mount"),
    [
        ("serve-llm", "server", "/checkpoints"),  # no name says training
        ("train-llm", "train", "/data"),  # checkpoints written outside any mount
        ("eval-llm", "eval", "/checkpoints"),  # an evaluation reads checkpoints
    ],
)
def test_either_half_missing_leaves_the_workload_unknown(
    job: str, container: str, mount: str, tmp_path: Path
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(_job(job, container, mount), encoding="utf-8")
    (resource,) = load_jobs([str(path)]).resources
    assert resource.workload is Workload.UNKNOWN


@pytest.mark.parametrize(("deadline", "advised"), [(600, False), (1200, False), (1800, True)])
def test_no_spot_advice_for_a_run_capped_at_a_few_minutes(
    deadline: int, advised: bool, tmp_path: Path
) -> None:
    text = _job().replace("activeDeadlineSeconds: 86400", f"activeDeadlineSeconds: {deadline}")
    assert ("spot-for-training" in _rules(tmp_path, "job.yaml", text)) is advised
