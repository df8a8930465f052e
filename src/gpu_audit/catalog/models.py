"""How big a served model is: parameter counts of common open models (data/models.csv), or the
size its name states (`…-8B-Instruct`), and the memory its weights take at a precision."""

from __future__ import annotations

import csv
import os
from functools import cache

from gpu_audit.core.frozen import record
from gpu_audit.core.lazyre import lazy

GIB = 1024**3
# Bytes per parameter by the precision a serving config states; unstated is 16-bit (vLLM, TGI
# and SGLang load a checkpoint's float16/bfloat16 weights as they are).
BYTES_PER_PARAM = {"32-bit": 4.0, "16-bit": 2.0, "8-bit": 1.0, "4-bit": 0.5}
_SIZE = lazy(r"(?:^|[-_./])(?:(\d+)x)?(\d+(?:\.\d+)?)b(?:$|[-_.])")
_SEPARATORS = ("-", "_", ".")


@record
class ModelSize:
    """A model's parameter count and where it comes from."""

    params_b: float
    source: str


@cache
def _table() -> dict[str, ModelSize]:
    path = os.path.join(os.path.dirname(__file__), "data", "models.csv")
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle.read().splitlines() if line and line[0] != "#"]
    header, *rows = list(csv.reader(lines))
    table = {}
    for raw in rows:
        row = dict(zip(header, raw, strict=True))
        table[row["id"]] = ModelSize(float(row["params_b"]), row["source"])
    return table


def model_size(model_id: str) -> ModelSize | None:
    """The size of a Hugging Face model id (`meta-llama/Llama-3.1-8B-Instruct`): the longest
    table id its name starts with (when the rest names no other size), else the size its name
    states; None when neither says."""
    name = model_id.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    if not name:
        return None
    best = None
    for known, size in _table().items():
        rest = name[len(known) :]
        if not name.startswith(known) or (rest and not rest.startswith(_SEPARATORS)):
            continue
        if _SIZE.search(rest):  # `deepseek-r1-distill-qwen-14b` is not `deepseek-r1`
            continue
        if best is None or len(known) > len(best[0]):
            best = (known, size)
    if best is not None:
        return best[1]
    found = _SIZE.search(name)
    if found is None:
        return None
    experts = int(found.group(1)) if found.group(1) else 1
    params = float(found.group(2)) * experts
    return ModelSize(params, f"the size its name states ({found.group(0).strip('-_./')})")


def weights_gib(params_b: float, precision: str) -> float:
    """GiB the weights take at a precision (`16-bit`): parameters × bytes per parameter."""
    return round(params_b * 1e9 * BYTES_PER_PARAM[precision] / GIB, 1)
