"""Each framework's spellings of a knob's value, read into one: `16-mixed` is fp16, `no` is fp32."""

from __future__ import annotations

from typing import Any

from gpu_audit.core.yamlsrc import is_templated

# Lightning `precision` (every spelling 2.6 accepts), NeMo `trainer.precision`, Accelerate
# `mixed_precision`, torchtune `dtype`, Megatron and HF words: → fp32 | fp16 | bf16 | fp8.
# a table: one precision's spellings a line, as ruff format would not keep it
# fmt: off
_PRECISION = {
    "64": "fp64", "64-true": "fp64", "fp64": "fp64", "float64": "fp64",
    "32": "fp32", "32-true": "fp32", "fp32": "fp32", "float32": "fp32", "float": "fp32",
    "no": "fp32", "full": "fp32",
    "16": "fp16", "16-mixed": "fp16", "16-true": "fp16", "fp16": "fp16", "float16": "fp16",
    "half": "fp16", "fp16-mixed": "fp16", "transformer-engine-float16": "fp16",
    "bf16": "bf16", "bf16-mixed": "bf16", "bf16-true": "bf16", "bfloat16": "bf16",
    "fp8": "fp8", "transformer-engine": "fp8", "fp8-mixed": "fp8",
}
# fmt: on


def precision(value: Any) -> str | None:
    """`16-mixed` → fp16, `bf16-true` → bf16, 32 → fp32; None for `auto`, templated or unknown."""
    if isinstance(value, bool) or value is None or is_templated(value):
        return None
    if isinstance(value, int | float):
        value = str(int(value)) if float(value).is_integer() else str(value)
    if not isinstance(value, str):
        return None
    return _PRECISION.get(value.strip().strip("\"'").lower())


def whole(value: Any) -> int | None:
    """A count: 4, "4" → 4; a fraction, `auto`, a template or text → None."""
    if isinstance(value, bool) or value is None or is_templated(value):
        return None
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return int(number) if number.is_integer() else None


def is_auto(value: Any) -> bool:
    """DeepSpeed's and Axolotl's `"auto"`: filled in by the launcher, not a setting here."""
    return isinstance(value, str) and value.strip().lower() == "auto"
