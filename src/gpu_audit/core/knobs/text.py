"""Knobs in a command line or a script: HF Trainer and Megatron flags, Accelerate's launcher,
Lightning CLI and Hydra overrides (`trainer.precision=bf16-mixed`), and in a Python script the
keyword arguments (`TrainingArguments(bf16=True)`, `DataLoader(num_workers=4)`, `torch.compile(`).

A shell comment (`# --fp16`) is not a setting; `--bf16 False` states it off. Each knob keeps the
line of the text it was read on (`line_at`).
"""

from __future__ import annotations

import re

from gpu_audit.core.knobs import duration, spellings
from gpu_audit.core.knobs.found import Knob
from gpu_audit.core.lazyre import lazy
from gpu_audit.core.yamlsrc import as_bool, is_templated

# `--name value`, `--name=value` or a bare `--name`; Hydra (`a.b=value`, `++a.b=value`)
_FLAG = lazy(
    r"(?:(?<=\s)|^)(?:(--?[A-Za-z][\w.-]*)(?:=|[ \t]+(?!-|[\w.]+=))?"
    r"|\+{0,2}([a-z_]+(?:\.[a-z_]+)*)=)([^\s\\;&|]*)",
)
# Python keyword arguments a training script passes
_KWARG = lazy(
    r"\b(bf16|fp16|tf32|per_device_train_batch_size|gradient_accumulation_steps|"
    r"gradient_checkpointing|dataloader_num_workers|num_workers|torch_compile|precision|"
    r"accumulate_grad_batches|mixed_precision)\s*=\s*([\"']?[\w.-]+[\"']?)",
    needs=(
        "bf16",
        "fp16",
        "tf32",
        "batch",
        "accumulat",
        "checkpointing",
        "workers",
        "compile",
        "precision",
    ),
)
_COMPILE_CALL = lazy(r"\btorch\.compile\s*\(", needs=("torch.compile",))
_CHECKPOINT_CALL = lazy(r"\.gradient_checkpointing_enable\s*\(", needs=("gradient_checkpointing",))
_FROM_PRETRAINED = lazy(
    r"from_pretrained\(\s*[\"']([A-Za-z0-9][\w.-]*/[\w.-]+)[\"']", needs=("from_pretrained",)
)
# Lightning `ModelCheckpoint(train_time_interval=timedelta(hours=6))`, or a name set elsewhere
_TIME_INTERVAL = lazy(
    r"\btrain_time_interval\s*=\s*(?:(?:datetime\.)?timedelta\s*\(([^)]*)\)|([\w.\[\]\"']+))",
    needs=("train_time_interval",),
)
_COMMENT = lazy(r"(?:^|[ \t])#.*$", re.MULTILINE)

# a flag's name (dashes as underscores, leading dashes and `trainer.`/`model.` kept) → knob
# a table: one knob's spellings a line, as ruff format would not keep it
# fmt: off
_FLAGS = {
    "bf16": "precision", "fp16": "precision", "fp8": "precision", "bfloat16": "precision",
    "tf32": "tf32",
    "mixed_precision": "precision", "precision": "precision", "trainer.precision": "precision",
    "per_device_train_batch_size": "batch_size", "micro_batch_size": "batch_size",
    "model.micro_batch_size": "batch_size", "train_micro_batch_size_per_gpu": "batch_size",
    "batch_size": "batch_size",  # torchtune `batch_size=4` override only (see _DASHLESS)
    "gradient_accumulation_steps": "grad_accum", "trainer.accumulate_grad_batches": "grad_accum",
    "accumulate_grad_batches": "grad_accum",
    "gradient_checkpointing": "checkpointing", "activation_checkpointing": "checkpointing",
    "enable_activation_checkpointing": "checkpointing", "recompute_activations": "checkpointing",
    "model.activations_checkpoint_granularity": "checkpointing",
    "dataloader_num_workers": "workers", "num_workers": "workers", "data.num_workers": "workers",
    "model.data.num_workers": "workers",
    "torch_compile": "compile", "compile": "compile",
    "model_name_or_path": "model", "model_name": "model", "model_id": "model",
    "use_peft": "method", "lora_r": "method", "lora_rank": "method",
}
# fmt: on
_BOOLEAN_FLAGS = frozenset(
    {
        "bf16",
        "fp16",
        "fp8",
        "bfloat16",
        "tf32",
        "gradient_checkpointing",
        "activation_checkpointing",
        "enable_activation_checkpointing",
        "recompute_activations",
        "torch_compile",
        "compile",
        "use_peft",
    }
)
_INTERVAL = duration.KNOB
_DASHLESS = frozenset({"batch_size", "dtype", "compile", "enable_activation_checkpointing"})
_NEEDLES = (
    "bf16",
    "fp16",
    "fp8",
    "tf32",
    "precision",
    "batch",
    "accumulat",
    "checkpoint",
    "workers",
    "compile",
    "model",
    "peft",
    "lora",
    "recompute",
    "dtype",
    "train_time",
)


def without_comments(text: str) -> str:
    """The text with shell and Python comments blanked (lengths kept, so offsets and lines hold)."""
    if "#" not in text:
        return text
    return _COMMENT.sub(lambda m: " " * len(m.group(0)), text)


def line_at(text: str, position: int, first: int | None) -> int | None:
    """The line of `position` in a text whose first line is `first`."""
    return None if first is None else first + text.count("\n", 0, position)


def read_flags(text: str, path: str, first: int | None, python: bool = False) -> list[Knob]:
    """The knobs a command line or script states, each at its line."""
    lowered = text.lower()
    if not any(needle in lowered for needle in _NEEDLES):
        return []
    text = without_comments(text)
    found: list[Knob] = []
    if python:
        _python(found, text, path, first)
        return found
    for match in _FLAG.finditer(text):
        raw_name, value = match.group(1) or match.group(2), match.group(3)
        dashed = raw_name.startswith("-")
        name = raw_name.lstrip("-").replace("-", "_")
        if name.startswith("trainer.") and name not in _FLAGS:
            name = name.removeprefix("trainer.")
        if name == "dtype" and not dashed:
            name = "dtype"
        if name == duration.KEY or name.endswith(f".{duration.KEY}"):
            if "checkpoint" in name.lower():  # NeMo's `checkpoint_callback_params.…`
                line = line_at(text, match.start(), first)
                found.extend(_interval_flag(raw_name, value, path, line))
            continue
        knob = _FLAGS.get(name) if name != "dtype" else "precision"
        if knob is None or (not dashed and "." not in name and name not in _DASHLESS):
            continue
        if name == "batch_size" and dashed:
            continue  # `--batch_size` is global in many scripts: only torchtune's override
        line = line_at(text, match.start(), first)
        value = value.strip("\"'")
        if (value and is_templated(value)) or value.startswith("$"):
            found.append(Knob(knob, None, path, line, f"`{raw_name}` is templated: not a setting"))
            continue
        found.extend(_flag_knob(knob, name, value, path, line))
    return found


def _flag_knob(knob: str, name: str, value: str, path: str, line: int | None) -> list[Knob]:
    if name in _BOOLEAN_FLAGS:
        state = True if not value else as_bool(value)
        if state is None:
            return []
        if knob == "precision":
            return (
                [Knob("precision", "bf16" if name == "bfloat16" else name, path, line)]
                if state
                else []
            )
        if knob == "method":
            return [Knob("method", "lora", path, line)] if state else []
        return [Knob(knob, state, path, line)]
    if knob == "precision":
        return [Knob(knob, spellings.precision(value), path, line)] if value else []
    if knob in ("batch_size", "grad_accum", "workers"):
        return [Knob(knob, spellings.whole(value), path, line)] if value else []
    if knob == "checkpointing":
        return [Knob(knob, value.lower() not in ("null", "none", ""), path, line)]
    if knob == "method":
        return [Knob("method", "lora", path, line)] if value else []
    if knob == "model" and "/" in value and not value.startswith(("/", ".")):
        return [Knob("model", value, path, line)]
    return []


def _interval_flag(raw_name: str, value: str, path: str, line: int | None) -> list[Knob]:
    """`exp_manager.checkpoint_callback_params.train_time_interval=00:30:00` (Hydra, NeMo)."""
    value = value.strip("\"'")
    try:
        minutes = duration.from_text(value) if value and not value.startswith("$") else None
    except duration.Templated:
        minutes = None
    if minutes is None and (value.startswith("$") or is_templated(value)):
        note = f"`{raw_name}` is templated: not a setting"
        return [Knob(_INTERVAL, None, path, line, note)]
    return [] if minutes is None else [Knob(_INTERVAL, minutes, path, line)]


def _enclosing_call(text: str, position: int, reach: int = 2000) -> str:
    """The name of the call whose parentheses hold `position` (`ModelCheckpoint`), or ''."""
    depth = 0
    start = max(0, position - reach)
    for at in range(position - 1, start - 1, -1):
        char = text[at]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                head = text[start:at].rstrip()
                kept = len(head)
                while kept and (head[kept - 1].isalnum() or head[kept - 1] in "_."):
                    kept -= 1
                return head[kept:]
            depth -= 1
    return ""


def _python_interval(found: list[Knob], text: str, path: str, first: int | None) -> None:
    """`ModelCheckpoint(train_time_interval=timedelta(hours=6))`: only inside a checkpoint
    callback's call (a logger's `train_time_interval` is not a checkpoint's)."""
    for match in _TIME_INTERVAL.finditer(text):
        if "checkpoint" not in _enclosing_call(text, match.start()).lower():
            continue
        line = line_at(text, match.start(), first)
        call, name = match.group(1), match.group(2)
        if call is None:
            if name.strip("\"'") != "None":  # a name set elsewhere: not known here
                note = f"`train_time_interval={name}` is set at run time: not a setting"
                found.append(Knob(_INTERVAL, None, path, line, note))
            continue
        try:
            minutes = duration.from_call(call)
        except duration.Templated:
            note = f"`train_time_interval=timedelta({call.strip()})` is set at run time"
            found.append(Knob(_INTERVAL, None, path, line, note))
            continue
        if minutes is not None:
            found.append(Knob(_INTERVAL, minutes, path, line))


def _python(found: list[Knob], text: str, path: str, first: int | None) -> None:
    _python_interval(found, text, path, first)
    for match in _KWARG.finditer(text):
        name, value = match.group(1), match.group(2).strip("\"'")
        line = line_at(text, match.start(), first)
        knob = {"num_workers": "workers", "mixed_precision": "precision"}.get(name) or _FLAGS[name]
        if name == "precision" or name == "mixed_precision":
            found.append(Knob("precision", spellings.precision(value), path, line))
        else:
            found.extend(_flag_knob(knob, name, value, path, line))
    for pattern, knob in ((_COMPILE_CALL, "compile"), (_CHECKPOINT_CALL, "checkpointing")):
        call = pattern.search(text)
        if call:
            found.append(Knob(knob, True, path, line_at(text, call.start(), first)))
    named = _FROM_PRETRAINED.search(text)
    if named:
        found.append(Knob("model", named.group(1), path, line_at(text, named.start(), first)))
