"""The knobs a training job states, read with their file and line: from the job file, from the
scripts and configs its command names (real published configs among them, fixtures/knobs/real),
and from a ConfigMap in the same file; the traps a naive reader falls into are not settings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpu_audit.core.resource import Resource
from gpu_audit.jobs import load_jobs

KNOBS = Path(__file__).resolve().parents[2] / "fixtures" / "knobs"


def _one(path: Path | str) -> Resource:
    (resource,) = load_jobs([str(path)]).resources
    return resource


def _knobs(resource: Resource) -> dict[str, Any]:
    training = resource.training
    names = ("precision", "tf32", "batch_size", "grad_accum", "checkpointing", "workers",
             "compile", "model", "params_b", "method")  # fmt: skip
    return {n: getattr(training, n) for n in names if getattr(training, n) is not None}


def _at(resource: Resource, knob: str) -> str:
    """`file-name:line` of where a knob was read (the folder left out)."""
    where = resource.training.located[knob]
    return os.path.basename(where.split(" ")[0])


def test_torchtune_shipped_full_config_through_a_kubernetes_job() -> None:
    job = _one(KNOBS / "kubernetes-torchtune.yaml")
    assert _knobs(job) == {
        "precision": "bf16", "batch_size": 2, "grad_accum": 1, "checkpointing": True,
        "model": "llama3_1_8b", "params_b": 8.0, "method": "full",
    }  # fmt: skip
    name = "torchtune-llama3_1-8B_full.yaml"
    assert _at(job, "precision") == f"{name}:73"  # `dtype: bf16`
    assert _at(job, "checkpointing") == f"{name}:69"
    assert _at(job, "batch_size") == f"{name}:51"
    # a finding about a knob in the config points at the job file's line that names it
    assert job.source.key_lines["training.precision"] == 15


def test_deepspeed_json_gives_the_precision_the_flags_the_batch() -> None:
    job = _one(KNOBS / "skypilot-hf-deepspeed.yaml")
    knobs = _knobs(job)
    assert knobs["precision"] == "fp16"  # `"fp16": {"enabled": true}` in the DeepSpeed JSON
    assert _at(job, "precision") == "deepspeed-zero_stage2_config.json:3"
    # the JSON's `"auto"` batch is the launcher's: the flag states it
    assert (knobs["batch_size"], knobs["grad_accum"]) == (4, 4)
    assert _at(job, "batch_size") == "skypilot-hf-deepspeed.yaml:12"
    assert knobs["model"] == "meta-llama/Llama-2-7b-hf" and knobs["params_b"] == 6.74
    assert knobs["method"] == "full"
    # HF Trainer's documented default: no `dataloader_num_workers` means 0
    assert knobs["workers"] == 0 and job.training.located["workers"].endswith("(default)")
    assert "checkpointing" not in knobs  # the script's commented TrainingArguments say nothing


def test_nemo_config_with_a_hydra_override() -> None:
    job = _one(KNOBS / "ray-nemo.yaml")
    knobs = _knobs(job)
    # `trainer.precision=bf16-mixed` on the command wins over the config's `precision: 32`
    assert knobs["precision"] == "bf16" and _at(job, "precision") == "ray-nemo.yaml:16"
    assert knobs["batch_size"] == 4  # model.micro_batch_size
    assert _at(job, "batch_size") == "nemo-megatron_llama_config.head.yaml:47"
    # `activations_checkpoint_granularity: null` is no setting
    assert "checkpointing" not in knobs


def test_litgpt_lora_config_on_vertex() -> None:
    job = _one(KNOBS / "vertex-litgpt.yaml")
    knobs = _knobs(job)
    assert knobs["precision"] == "bf16" and knobs["method"] == "lora"  # `bf16-true`, `lora_r`
    assert (knobs["batch_size"], knobs["workers"]) == (1, 4)
    assert _at(job, "workers") == "litgpt-llama-3.1-8b-lora.yaml:54"


def test_a_configmap_in_the_same_file_is_read_at_its_lines() -> None:
    job = _one(KNOBS / "kubernetes-configmap.yaml")
    knobs = _knobs(job)
    assert knobs["precision"] == "bf16"  # Accelerate's `mixed_precision`, the DS JSON is "auto"
    assert job.training.located["precision"].endswith("kubernetes-configmap.yaml:9")
    assert knobs["batch_size"] == 2
    assert job.training.located["batch_size"].endswith("kubernetes-configmap.yaml:16")


def test_sagemaker_hyperparameters() -> None:
    job = _one(KNOBS / "sagemaker-hyperparameters.json")
    knobs = _knobs(job)
    assert knobs["model"] == "google-bert/bert-large-uncased"  # JSON-encoded, unquoted
    assert (knobs["batch_size"], knobs["workers"]) == (32, 0)
    assert _at(job, "workers") == "sagemaker-hyperparameters.json:13"  # stated, not defaulted
    assert "precision" not in knobs  # `"fp16": "false"` is no precision


def test_the_traps_are_not_settings() -> None:
    job = _one(KNOBS / "skypilot-traps.yaml")
    knobs = _knobs(job)
    # a commented `--bf16`, `--fp16 False` and a DeepSpeed "auto" are not settings; the
    # Lightning spelling `16-mixed` is fp16
    assert knobs["precision"] == "fp16" and _at(job, "precision") == "skypilot-traps.yaml:11"
    assert "batch_size" not in knobs  # `${BATCH_SIZE}`
    assert "batch_size not evaluated" in (job.source.note or "")
    assert job.source.key_lines["training.batch_size"] == 9


def test_paths_out_of_the_job_folder_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ds.json").write_text('{"bf16": {"enabled": true}}')
    job_dir = tmp_path / "repo"
    (job_dir / "configs").mkdir(parents=True)
    (job_dir / "configs" / "link.json").symlink_to(outside / "ds.json")
    job = job_dir / "task.yaml"
    job.write_text(
        "resources:\n  accelerators: A10G:1\nrun: |\n"
        f"  python train.py --deepspeed ../outside/ds.json --config_file {outside}/ds.json\n"
        "  python train.py --deepspeed configs/link.json\n"
    )
    resource = _one(job)
    assert resource.training.precision is None
    note = resource.source.note or ""
    assert "not followed: `../outside/ds.json` leads out of the job's folder" in note
    assert "is an absolute path" in note
    assert "not followed: `configs/link.json` leads out of the job's folder" in note


def test_deepspeed_auto_alone_is_not_evaluated(tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text('{\n  "bf16": {"enabled": "auto"}\n}\n')
    job = tmp_path / "task.yaml"
    job.write_text(
        "resources:\n  accelerators: A100:2\nrun: deepspeed train.py --deepspeed ds.json\n"
    )
    resource = _one(job)
    assert resource.training.precision is None
    assert 'precision not evaluated: `bf16.enabled: "auto"`: set by the launcher' in (
        resource.source.note or ""
    )


@pytest.mark.parametrize(
    ("flags", "precision"),
    [
        ("--bf16", "bf16"),
        ("--bf16 True", "bf16"),
        ("--bf16=true", "bf16"),
        ("--bf16 False", None),
        ("--fp16", "fp16"),
        ("--trainer.precision bf16-mixed", "bf16"),
        ("--trainer.precision=16-mixed", "fp16"),
        ("--precision 32", "fp32"),
        ("trainer.precision=16", "fp16"),
        ("--mixed_precision fp8", "fp8"),
        ("--mixed_precision no", "fp32"),
        ("dtype=fp32", "fp32"),
        ("--bf16 ${USE_BF16}", None),
        ("", None),
    ],
)
def test_precision_spellings(tmp_path: Path, flags: str, precision: str | None) -> None:
    job = tmp_path / "task.yaml"
    job.write_text(f"resources:\n  accelerators: A100:1\nrun: python train.py {flags}\n")
    assert _one(job).training.precision == precision


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("fp16: false\nbf16: false\n", {}),
        ("bf16: true\ntf32: true\n", {"precision": "bf16", "tf32": True}),
        ("bf16: auto\n", {}),  # Axolotl's auto
        ("trainer:\n  precision: bf16-mixed\n  accumulate_grad_batches: 8\n",
         {"precision": "bf16", "grad_accum": 8}),
        ("data:\n  init_args:\n    batch_size: 16\n    num_workers: 0\n",
         {"batch_size": 16, "workers": 0}),
        ("gradient_checkpointing: true\ntorch_compile: true\n",
         {"checkpointing": True, "compile": True}),
        ("micro_batch_size: ${oc.env:MBS}\n", {}),
        ("dynamo_config:\n  dynamo_backend: 'NO'\nmixed_precision: bf16\n",
         {"compile": False, "precision": "bf16"}),
    ],
)  # fmt: skip
def test_config_keys(tmp_path: Path, config: str, expected: dict[str, Any]) -> None:
    (tmp_path / "cfg.yaml").write_text(config)
    job = tmp_path / "task.yaml"
    job.write_text("resources:\n  accelerators: A100:1\nrun: python train.py --config cfg.yaml\n")
    knobs = _knobs(_one(job))
    knobs.pop("workers", None) if "workers" not in expected else None
    assert knobs == expected


def test_python_script_keywords(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "# args = TrainingArguments(bf16=True)\n"
        "args = TrainingArguments(\n"
        "    fp16=True,\n"
        "    per_device_train_batch_size=8,\n"
        "    dataloader_num_workers=2,\n"
        ")\n"
        "model = torch.compile(model)\n"
    )
    job = tmp_path / "task.yaml"
    job.write_text("resources:\n  accelerators: T4:1\nrun: python train.py\n")
    resource = _one(job)
    assert _knobs(resource) == {"precision": "fp16", "batch_size": 8, "workers": 2, "compile": True}
    assert _at(resource, "precision") == "train.py:4"
    assert _at(resource, "compile") == "train.py:8"
    assert resource.source.key_lines["training.precision"] == 3  # the `run` line names train.py


def test_a_job_that_states_no_knob_has_none() -> None:
    job = _one(KNOBS / "skypilot-plain.yaml")
    assert _knobs(job) == {} and dict(job.training.located) == {}


def test_the_json_report_carries_each_knob_with_file_and_line() -> None:
    from click.testing import CliRunner

    from gpu_audit.cli.main import main

    result = CliRunner().invoke(
        main, ["check", str(KNOBS / "kubernetes-torchtune.yaml"), "--format", "json"]
    )
    assert result.exit_code in (0, 1), result.output
    (resource,) = json.loads(result.output)["resources"]
    training = resource["training"]
    assert training["precision"] == "bf16" and training["batch_size"] == 2
    assert training["located"]["precision"].endswith("torchtune-llama3_1-8B_full.yaml:73")


# ---- the knob rules over the fixtures, end to end (load, enrich, judge) ----

KNOB_RULES = (
    "precision-supported", "tf32-supported", "mixed-precision-on-tensor-cores",
    "full-fine-tune-fits-smaller", "dataloader-workers",
)  # fmt: skip


def _judged(path: Path | str) -> tuple[Resource, dict[str, Any], set[str]]:
    """The enriched job, its knob findings by rule, and the knob rules it was not evaluated by."""
    from tests.conftest import NOW

    from gpu_audit.audit import audit
    from gpu_audit.core.results import Scope
    from gpu_audit.policy.loader import load_policy

    result = audit([_one(path)], load_policy(None), NOW, Scope(command="check"))
    (resource,) = result.resources
    findings = {f.rule_id: f for f in result.findings if f.rule_id in KNOB_RULES}
    missing = {n.rule_id for n in result.not_evaluated if n.rule_id in KNOB_RULES}
    return resource, findings, missing


def test_bf16_on_v100s_is_an_error_at_the_line_naming_the_config() -> None:
    _, findings, _ = _judged(KNOBS / "kubernetes-torchtune.yaml")
    finding = findings["precision-supported"]
    assert finding.severity.label == "high" and finding.line == 15
    # 8B parameters need 131 GiB: no smaller one-machine shape of its generation holds it
    assert set(findings) == {"precision-supported"}


def test_bf16_on_t4s_from_a_configmap_points_at_the_configmap_line() -> None:
    _, findings, _ = _judged(KNOBS / "kubernetes-configmap.yaml")
    assert findings["precision-supported"].line == 9
    assert "gpu.precisions = fp64, fp32, fp16" in findings["precision-supported"].actual


def test_fp32_on_an_a100_is_priced_at_a_third_of_its_hours() -> None:
    resource, findings, _ = _judged(KNOBS / "skypilot-fp32-a100.yaml")
    finding = findings["mixed-precision-on-tensor-cores"]
    assert finding.line == 7  # `--mixed_precision no`
    hourly = resource.price.hourly_usd
    assert hourly and finding.saving_unit == "gpu-hour"  # no runtime cap: per GPU-hour
    assert finding.saving_usd == pytest.approx(hourly / 3, abs=0.01)
    assert "dataloader-workers" not in findings  # one GPU


def test_a_7b_full_fine_tune_on_8_a100s_is_named_a_smaller_shape() -> None:
    resource, findings, _ = _judged(KNOBS / "skypilot-hf-deepspeed.yaml")
    training = resource.training
    # 6.74B × 16 bytes × 1.1 = 110.5 GiB: 13.8 GiB a GPU over 8 L4s (24 GiB, 21.6 usable)
    assert training.fits == "8× L4 (g6.48xlarge) for 110.5 GiB"
    finding = findings["full-fine-tune-fits-smaller"]
    assert finding.line == 10  # `--model_name_or_path`
    hourly, target = resource.price.hourly_usd, training.fits_hourly_usd
    assert hourly and target and target < hourly
    assert finding.saving_usd == pytest.approx((hourly - target) / 8, abs=0.0001)
    assert findings["dataloader-workers"].line == 4  # HF Trainer's default 0, on 8 GPUs


def test_a_small_model_fits_one_smaller_gpu(tmp_path: Path) -> None:
    job = tmp_path / "task.yaml"
    job.write_text(
        "resources:\n  accelerators: A100-80GB:1\n  cloud: aws\n  region: us-east-1\n"
        "run: python train.py --model_name_or_path meta-llama/Llama-3.2-1B --bf16 --do_train\n"
    )
    resource, findings, _ = _judged(job)
    # 1.23B × 16 × 1.1 = 20.2 GiB: one 24 GB card of Ampere or later holds it
    assert resource.training.fits is not None and resource.training.fits.startswith("1× ")
    assert "20.2 GiB" in resource.training.fits
    assert findings["full-fine-tune-fits-smaller"].saving_usd


def test_lora_on_one_l4_and_a_plain_job_get_no_knob_finding() -> None:
    _, lora, lora_missing = _judged(KNOBS / "vertex-litgpt.yaml")
    assert lora == {} and lora_missing == set()
    _, plain, plain_missing = _judged(KNOBS / "skypilot-plain.yaml")
    assert plain == {} and plain_missing == set()  # unstated knobs: no lines of their own


def test_tf32_on_a_v100(tmp_path: Path) -> None:
    job = tmp_path / "task.yaml"
    job.write_text("resources:\n  accelerators: V100:1\nrun: python train.py --fp16 --tf32\n")
    _, findings, _ = _judged(job)
    assert set(findings) == {"tf32-supported"} and findings["tf32-supported"].line == 3


# ---- the shared corpus: real job files nobody here wrote ----


def test_knobs_in_the_real_corpus() -> None:
    from tests.conftest import SHARED, need_shared

    corpus = SHARED / "corpus"
    need_shared(corpus)
    bionemo = _one(corpus / "kubernetes" / "aionEKS__bionemo_esm2nv-training-job.yaml")
    # Hydra `++` overrides in a PyTorchJob's args; the absolute --config-path is not followed
    assert _knobs(bionemo) == {"precision": "fp16", "batch_size": 2, "grad_accum": 1}
    assert (
        "`/workspace/bionemo/examples/protein/esm2nv/conf/pretrain_esm2_8M.yaml` is an "
        "absolute path" in (bionemo.source.note or "")
    )
    vicuna = _one(corpus / "skypilot" / "sky__llm_vicuna-llama-2_train.yaml")
    knobs = _knobs(vicuna)
    assert (knobs["precision"], knobs["tf32"], knobs["checkpointing"]) == ("bf16", True, True)
    assert vicuna.training.located["precision"].endswith("sky__llm_vicuna-llama-2_train.yaml:74")
    assert knobs["workers"] == 0  # HF Trainer's default: the run states no workers
    # a 4-bit unsloth model is no full fine-tune
    unsloth = _one(corpus / "dstack" / "rodrigomeireles__finetuner_train.dstack.yml")
    assert unsloth.training.model == "unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit"
    assert unsloth.training.method is None


def test_sagemaker_train_script_named_by_its_hyperparameters(tmp_path: Path) -> None:
    """SageMaker's framework containers run `sagemaker_program`: the script beside the job file
    is read for its TrainingArguments."""
    (tmp_path / "train.py").write_text(
        "args = TrainingArguments(\n    bf16=True,\n    gradient_checkpointing=True,\n)\n"
    )
    job = json.loads((KNOBS / "sagemaker-hyperparameters.json").read_text())
    job["HyperParameters"]["fp16"] = "false"
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job, indent=2))
    resource = _one(path)
    knobs = _knobs(resource)
    assert (knobs["precision"], knobs["checkpointing"]) == ("bf16", True)
    assert _at(resource, "precision") == "train.py:2"
    assert resource.training.located["batch_size"].endswith("job.json:11")


def test_a_pytorchjob_on_v100s_asking_for_bf16(tmp_path: Path) -> None:
    job = tmp_path / "pytorchjob.yaml"
    job.write_text(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: ft\nspec:\n"
        "  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n        spec:\n"
        "          nodeSelector:\n            node.kubernetes.io/instance-type: p3.8xlarge\n"
        "          containers:\n            - name: pytorch\n              image: x/train:1\n"
        '              args: ["--bf16", "--per_device_train_batch_size", "8",\n'
        '                     "--dataloader_num_workers", "4"]\n'
        "              resources: {limits: {nvidia.com/gpu: 4}}\n"
    )
    resource, findings, _ = _judged(job)
    assert _knobs(resource) == {"precision": "bf16", "batch_size": 8, "workers": 4}
    assert findings["precision-supported"].line == 16  # the `args` line
    assert "dataloader-workers" not in findings
