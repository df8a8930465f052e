"""A model must fit the advice: the served model, its size and precision, judged against 24 GB."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import NOW

from gpu_audit.audit import audit
from gpu_audit.catalog.models import model_size, weights_gib
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import Scope
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.loader import load_policy

SKY = """\
name: chat
service:
  readiness_probe: /v1/models
  replicas: 1
resources:
  accelerators: {GPU}
  ports: 8000
envs:
  MODEL: {MODEL}
run: |
  vllm serve $MODEL --port 8000 {FLAGS}
"""


def _load(tmp_path: Path, gpu: str, model: str, flags: str = "") -> Resource:
    path = tmp_path / "serve.yaml"
    path.write_text(SKY.replace("{GPU}", gpu).replace("{MODEL}", model).replace("{FLAGS}", flags))
    (resource,) = load_jobs([str(path)]).resources
    return resource


def _rules(resource: Resource) -> set[str]:
    result = audit([resource], load_policy(None), NOW, Scope(command="check"))
    return {f.rule_id for f in result.findings}


def test_the_table_and_the_name_give_sizes() -> None:
    size = model_size("meta-llama/Llama-3.1-70B-Instruct")
    assert size is not None and size.params_b == 70.6 and "model card" in size.source
    distill = model_size("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B")  # not DeepSeek-R1's 671B
    assert distill is not None and distill.params_b == 14.0 and "name" in distill.source
    assert model_size("acme/house-model") is None
    assert weights_gib(8.03, "16-bit") == 15.0 and weights_gib(70.6, "4-bit") == 32.9


@pytest.mark.parametrize(
    ("gpu", "model", "flags", "fits", "rules"),
    [
        # an 8B model at 16-bit fits one 24 GB card: the H100 is advice it can follow
        ("H100:1", "meta-llama/Llama-3.1-8B-Instruct", "", 15.0, {"inference-small-gpu"}),
        # 70B at 16-bit over 4 GPUs (tensor parallel) is 32.9 GiB a GPU: no small-GPU advice;
        # the class cap judges the H100s once
        ("H100:4", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size 4", 32.9,
         {"gpu-class-cap"}),
        # the same model quantized to 4 bits fits 24 GB cards over the same 4 GPUs
        ("H100:4", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size 4 --quantization awq",
         8.2, {"inference-small-gpu"}),
        # an A100-80GB within the cap, a model that cannot fit 24 GB: nothing to say
        ("A100-80GB:1", "Qwen/Qwen2.5-32B-Instruct", "", 60.5, set()),  # the card's 32.5B
    ],
)  # fmt: skip
def test_the_serving_rule_only_advises_what_the_model_fits(
    tmp_path: Path, gpu: str, model: str, flags: str, fits: float, rules: set[str]
) -> None:
    resource = _load(tmp_path, gpu, model, flags)
    assert resource.served_model.name == model
    assert resource.served_model.gib_per_gpu == fits
    found = _rules(resource) & {"inference-small-gpu", "gpu-class-cap"}
    assert found == rules
    assert model in (resource.source.note or "")


def test_every_model_row_names_its_source_and_says_when_it_was_not_checked() -> None:
    # a row read against its maker's statement carries the figure it states; the others say so
    for known in ("qwen2.5-32b", "llama-3.2-1b", "gemma-7b", "gpt-neox-20b", "deepseek-r1"):
        size = model_size(known)
        assert size is not None and "(unverified)" not in size.source, known
    assert model_size("Qwen/Qwen2.5-32B").params_b == 32.5  # type: ignore[union-attr]
    assert model_size("meta-llama/Llama-3.2-1B").params_b == 1.23  # type: ignore[union-attr]
    nominal = model_size("meta-llama/Llama-3.1-405B")
    assert nominal is not None and "only as 405B" in nominal.source
    assert nominal.source.endswith("(unverified)")


def test_an_unknown_model_keeps_the_advice(tmp_path: Path) -> None:
    resource = _load(tmp_path, "A100:1", "acme/house-model")
    assert resource.served_model.name == "acme/house-model"
    assert resource.served_model.gib_per_gpu is None
    assert "inference-small-gpu" in _rules(resource)


def test_kubernetes_args_and_tgi_environment_name_the_model(tmp_path: Path) -> None:
    path = tmp_path / "tgi.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tgi}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: tgi\n"
        "          image: ghcr.io/huggingface/text-generation-inference:2.0\n"
        "          env:\n            - {name: MODEL_ID, value: mistralai/Mistral-7B-Instruct-v0.3}\n"
        "            - {name: QUANTIZE, value: awq}\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (resource,) = load_jobs([str(path)]).resources
    assert resource.served_model.name == "mistralai/Mistral-7B-Instruct-v0.3"
    assert resource.served_model.precision == "4-bit"


RAYSERVICE = (
    Path(__file__).resolve().parents[2] / "fixtures/precision/k8s-rayservice-deepseek-r1.yaml"
)


def test_a_rayservice_model_source_and_its_parallel_sizes_decide_the_advice(
    tmp_path: Path,
) -> None:
    (resource,) = load_jobs([str(RAYSERVICE)]).resources
    assert resource.served_model.name == "deepseek-ai/DeepSeek-R1"  # model_source, not model_id
    assert resource.served_model.params_b == 671
    # 671B at 16-bit over tensor 8 × pipeline 2 = 16 GPUs: 78.1 GiB a GPU, no 24 GB card holds it
    assert resource.served_model.gib_per_gpu == pytest.approx(78.1, abs=0.1)
    assert _rules(resource) == {"gpu-class-cap"}  # the H100 class cap, no RTX-4090-class advice


def test_a_small_model_in_a_rayservice_is_told_to_use_a_small_gpu(tmp_path: Path) -> None:
    text = RAYSERVICE.read_text(encoding="utf-8")
    text = text.replace("deepseek-ai/DeepSeek-R1", "Qwen/Qwen2.5-7B-Instruct")
    text = text.replace("tensor_parallel_size: 8", "tensor_parallel_size: 1")
    text = text.replace("pipeline_parallel_size: 2", "pipeline_parallel_size: 1")
    path = tmp_path / "small.yaml"
    path.write_text(text, encoding="utf-8")
    (resource,) = load_jobs([str(path)]).resources
    assert resource.served_model.name == "Qwen/Qwen2.5-7B-Instruct"
    assert "inference-small-gpu" in _rules(resource)
