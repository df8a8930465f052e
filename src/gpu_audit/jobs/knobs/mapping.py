"""Knobs in a config mapping: HF TrainingArguments (a YAML/JSON args file, SageMaker
hyperparameters), an Accelerate config, a DeepSpeed JSON, a Lightning or NeMo YAML, torchtune.

A key is read by its name and, where the name is generic, its parent (`trainer.precision`,
`data.num_workers`, torchtune's top-level `dtype`). `false`, `"auto"`, `null` and templated values
(`${model.micro_batch_size}`, `{{ x }}`) are not settings.
"""

from __future__ import annotations

from typing import Any

from gpu_audit.core.knobs import duration, spellings
from gpu_audit.core.knobs.found import Knob
from gpu_audit.core.yamlsrc import as_bool, is_templated

_BATCH = frozenset(
    {"per_device_train_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size"}
)
_ACCUM = frozenset({"gradient_accumulation_steps", "accumulate_grad_batches"})
_CHECKPOINTING = frozenset(
    {
        "gradient_checkpointing",
        "activation_checkpointing",
        "enable_activation_checkpointing",
        "fsdp_activation_checkpointing",
    }
)
_GRANULARITY = frozenset({"activations_checkpoint_granularity", "activations_checkpoint_method"})
_WORKERS = frozenset({"dataloader_num_workers"})
_MODEL = frozenset({"model_name_or_path", "pretrained_model_name_or_path", "base_model"})
_DATA_PARENTS = frozenset({"data", "init_args", "dataloader", "train_dataloader", "train_ds"})
_LORA = frozenset({"lora_r", "lora_rank", "lora_alpha", "use_peft", "peft_config", "lora"})
INTERVAL = duration.KNOB
# follow-ups a config names: Accelerate's DeepSpeed file
FOLLOW_KEYS = frozenset({"deepspeed_config_file", "deepspeed"})


def read_mapping(
    data: Any, path: str, budget: int = 4000
) -> tuple[list[Knob], list[tuple[str, int | None]]]:
    """The knobs a mapping states, and the files it names (`deepspeed_config_file`)."""
    found: list[Knob] = []
    names: list[tuple[str, int | None]] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack and budget > 0:
        node, parents = stack.pop()
        if not isinstance(node, dict):
            if isinstance(node, list):
                stack.extend(
                    (item, parents) for item in reversed(node) if isinstance(item, dict | list)
                )
            continue
        line_of = getattr(node, "line_of", None)
        if _names_checkpoint(node):  # `_target_`/`class_path: ...ModelCheckpoint`: its keys
            parents = (*parents, CHECKPOINT)  # and its `init_args` are a checkpoint's
        for key, value in node.items():
            budget -= 1
            if not isinstance(key, str):
                continue
            line = line_of(key) if line_of is not None else None
            if isinstance(value, dict):
                _section(found, key, value, path, line)
                if key == duration.KEY:
                    if _under_checkpoint(parents):
                        _interval(found, value, path, line)
                    continue
                stack.append((value, (*parents, key)))
                continue
            if isinstance(value, list):
                stack.append((value, (*parents, key)))
                continue
            if key in FOLLOW_KEYS and isinstance(value, str) and not is_templated(value):
                names.append((value, line))
            _leaf(found, key, value, parents, path, line)
    return found, names


CHECKPOINT = "(checkpoint)"  # a parent standing for a checkpoint callback's own mapping


def _names_checkpoint(node: dict[Any, Any]) -> bool:
    """A Hydra `_target_` or Lightning CLI `class_path` naming a checkpoint callback."""
    named = node.get("_target_") or node.get("class_path")
    return isinstance(named, str) and "checkpoint" in named.lower()


def _under_checkpoint(parents: tuple[str, ...]) -> bool:
    """`train_time_interval` is a checkpoint's interval only in a checkpoint's settings (NeMo
    `checkpoint_callback_params`, `model_checkpoint`, a `ModelCheckpoint` target), never a
    logger's or another callback's of the same name."""
    return any("checkpoint" in p.lower() for p in parents)


def _section(
    found: list[Knob], key: str, value: dict[Any, Any], path: str, line: int | None
) -> None:
    """DeepSpeed's `bf16: {enabled: true}` and `fp16: {enabled: "auto"}`."""
    name = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16"}.get(key)
    if name is None or "enabled" not in value:
        return
    enabled = value["enabled"]
    at = getattr(value, "line_of", lambda _k: line)("enabled")
    if spellings.is_auto(enabled):
        found.append(
            Knob("precision", None, path, at, f'`{key}.enabled: "auto"`: set by the launcher')
        )
    elif as_bool(enabled) is True:
        found.append(Knob("precision", name, path, at))


def _leaf(
    found: list[Knob], key: str, value: Any, parents: tuple[str, ...], path: str, line: int | None
) -> None:
    parents = tuple(p for p in parents if p != CHECKPOINT) if key != duration.KEY else parents
    parent = parents[-1] if parents else ""
    if isinstance(value, str):  # SageMaker hyperparameters are JSON-encoded: `"\"train.py\""`
        value = value.strip().strip("\"'")
    if key == duration.KEY and (value is None or not _under_checkpoint(parents)):
        return  # `null` (Lightning's default), or another callback's setting of that name
    if value is None or is_templated(value):
        if key in _BATCH | _ACCUM | _CHECKPOINTING | _WORKERS | {
            "precision",
            "bf16",
            "fp16",
            "dtype",
            duration.KEY,
        }:
            found.append(
                Knob(_knob_of(key), None, path, line, f"`{key}` is templated: not a setting")
            )
        return
    if key == duration.KEY:
        _interval(found, value, path, line)
    elif key in ("bf16", "fp16", "bfloat16", "fp8"):
        if spellings.is_auto(value):
            found.append(Knob("precision", None, path, line, f"`{key}: auto`: set by the launcher"))
        elif as_bool(value) is True:
            found.append(Knob("precision", "bf16" if key == "bfloat16" else key, path, line))
    elif key == "tf32" and as_bool(value) is not None:
        found.append(Knob("tf32", as_bool(value), path, line))
    elif _names_precision(key, value, parents):
        found.append(Knob("precision", spellings.precision(value), path, line))
    elif key in _BATCH or (key == "batch_size" and (not parents or parent in _DATA_PARENTS)):
        found.append(Knob("batch_size", spellings.whole(value), path, line))
    elif key in _ACCUM:
        found.append(Knob("grad_accum", spellings.whole(value), path, line))
    elif key in _CHECKPOINTING:
        found.append(Knob("checkpointing", as_bool(value), path, line))
    elif key in _GRANULARITY and isinstance(value, str):
        found.append(Knob("checkpointing", True, path, line))
    elif key in _WORKERS or (key == "num_workers" and (parent in _DATA_PARENTS or not parents)):
        found.append(Knob("workers", spellings.whole(value), path, line))
    elif key in ("torch_compile", "compile") and (key == "torch_compile" or not parents):
        found.append(Knob("compile", as_bool(value), path, line))
    elif key == "dynamo_backend" and isinstance(value, str):
        found.append(Knob("compile", value.strip().lower() not in ("no", "none", ""), path, line))
    elif key in _MODEL and isinstance(value, str):
        found.append(Knob("model", value, path, line))
    elif key == "_component_" and parent == "model" and isinstance(value, str):
        found.append(Knob("model", value.rsplit(".", 1)[-1], path, line))
        if "lora" in value.lower():
            found.append(Knob("method", "lora", path, line))
    elif _names_adapter(key, value):
        found.append(Knob("method", "lora", path, line))


def _interval(found: list[Knob], value: Any, path: str, line: int | None) -> None:
    """Lightning/NeMo `train_time_interval`: the wall-clock checkpoint interval (minutes)."""
    try:
        minutes = duration.minutes_of(value)
    except duration.Templated:
        note = f"`{duration.KEY}` is templated: not a setting"
        found.append(Knob(INTERVAL, None, path, line, note))
        return
    if minutes is not None:
        found.append(Knob(INTERVAL, minutes, path, line))


def _names_precision(key: str, value: Any, parents: tuple[str, ...]) -> bool:
    """Accelerate `mixed_precision`, Lightning/NeMo `trainer.precision` (or a top-level one, as
    litgpt writes it), torchtune's top-level `dtype`."""
    if key == "mixed_precision":
        return isinstance(value, str)
    if key == "precision":
        return not parents or "trainer" in parents
    return key == "dtype" and not parents


def _names_adapter(key: str, value: Any) -> bool:
    if key == "use_peft":
        return as_bool(value) is True
    if key == "adapter":
        return isinstance(value, str) and "lora" in value.lower()
    return key in _LORA


def _knob_of(key: str) -> str:
    if key in _BATCH:
        return "batch_size"
    if key in _ACCUM:
        return "grad_accum"
    if key in _CHECKPOINTING:
        return "checkpointing"
    if key in _WORKERS:
        return "workers"
    if key == duration.KEY:
        return INTERVAL
    return "precision"
