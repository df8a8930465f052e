"""What GPUs a job asks for: one ask per alternative, the largest of them, and instance-type GPUs.

Formats that allow alternatives (SkyPilot `any_of`, a set of accelerators, dstack GPU names, a
Kubernetes `In` affinity) are judged and priced on the cheapest they accept (the lowest GPU class):
the launcher picks the cheapest that is available, so that is what the job costs as written.
"""

from __future__ import annotations

import math
import re

from gpu_audit.catalog import canonical_gpu, class_rank, instance_spec
from gpu_audit.core.frozen import record
from gpu_audit.core.lazyre import fold
from gpu_audit.jobs.values import as_number


@record
class GpuAsk:
    """One way a job may be placed: a GPU model (or none named) and GPUs per node."""

    model: str | None
    count: float | None
    line: int | None = None
    label: str = ""  # how the config spelled it, for notes
    memory_gib: float | None = None


def _re(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    """The patterns below, compiled when first used (re's cache keeps them): most runs reach
    none of these fallbacks, and compiling them all on import was ~1.5 ms of every commit."""
    return re.compile(pattern, flags)


def rank_key(ask: GpuAsk) -> tuple[int, float]:
    """How asks are ordered for "the largest": the GPU class's rank (an unnamed GPU lowest, an
    off-ladder one next), then the count."""
    rank = class_rank(ask.model)
    if rank is None:
        rank = 0 if ask.model is None else 1  # off-ladder accelerators above "unnamed"
    return rank, ask.count or 0


def largest(asks: list[GpuAsk]) -> GpuAsk | None:
    """The largest ask by rank_key, None for no asks."""
    return max(asks, key=rank_key) if asks else None


def cheapest(asks: list[GpuAsk]) -> GpuAsk | None:
    """Of the alternatives a job accepts (`H100` or `H200`, SkyPilot `any_of`), the one it is
    judged and priced on: the lowest GPU class, then the fewest GPUs; an ask that names its GPU
    before one that names none (which says nothing about cost)."""
    named = [ask for ask in asks if ask.model is not None]
    return min(named or asks, key=rank_key) if asks else None


def alternatives_note(asks: list[GpuAsk], chosen: GpuAsk) -> str | None:
    """The note naming a job's GPU alternatives and the one it is judged by; None for fewer than
    two."""
    labels = list(dict.fromkeys(a.label for a in asks if a.label))
    if len(labels) < 2:
        return None
    return f"alternatives {', '.join(labels)}; judged by the cheapest it accepts, {chosen.label}"


def whole(count: float | None) -> int | None:
    """GPUs as a whole number: a fractional share (SkyPilot `A100:0.5`) still holds one GPU."""
    if count is None or count <= 0:
        return None if count is None else 0
    return math.ceil(count)


def parse_name_count(text: str, line: int | None = None) -> GpuAsk | None:
    """`A100:8`, `V100`, `tpu-v2-8`, `H100-SXM:1` → an ask; None for empty or templated text."""
    text = text.strip()
    if not text:
        return None
    name, _, count_text = text.rpartition(":") if ":" in text else (text, "", "")
    count = as_number(count_text) if count_text else 1
    if count is None:  # `A100:${N}`: the model is known, the count is not
        return GpuAsk(model=_model(name), count=None, line=line, label=text)
    return GpuAsk(model=_model(name), count=count, line=line, label=text)


def _model(name: str) -> str | None:
    return gpu_name(name)


# Spelling variants the catalog does not list: form factor and memory type suffixes, `GeForce`,
# and workstation GPUs the catalog has no class for (kept in one spelling so rules can name them).
_NOISE = r"[-_ ](?:sxm\d?|pcie|hbm\d?e?|nvlink)(?=$|[-_ ])"
_GEFORCE = r"^(?:nvidia[-_ ])?geforce[-_ ]"
_RTX_PRO = r"^(?:nvidia[-_ ]?)?rtx[-_ ]?pro[-_ ]?(\d{4})(?:[-_ ].*|[a-z]+)?$"
_RTX = r"^(?:nvidia[-_ ]?)?(?:geforce[-_ ]?)?rtx[-_ ]?(a?\d{4})(?:[-_ ]?ti)?$"


def gpu_name(name: str | None) -> str | None:
    """The catalog's name for any spelling (`A100-80GB-SXM`, `NVIDIA-H100-80GB-HBM3`,
    `RTX 4090`); a name the catalog lacks is kept as written, stripped; blank → None."""
    if name is None or not name.strip():
        return None
    name = name.strip()
    found = canonical_gpu(name)
    if found:
        return found
    bare = _re(_GEFORCE).sub("", _re(_NOISE).sub("", name))
    found = canonical_gpu(bare)
    if found:
        return found
    if match := _re(_RTX_PRO).match(bare.replace(" ", "")):
        return f"RTX-PRO-{match.group(1)}"
    if match := _re(_RTX).match(bare):
        return f"RTX-{match.group(1).upper()}"
    return name


# Instance families that carry accelerators, for types the catalog does not list (yet).
_GPU_TYPE = (
    r"^(?:ml\.)?(?:p\d[a-z]*|g\d[a-z]*|gr\d|trn\d[a-z]*|inf\d|dl\d[a-z]*)\.\w+$"
    r"|^(?:a\d[a-z]?|g[2-9]|ct\d[a-z]*)-\w+"
    r"|^standard_n[cdv]\w*$"
    r"|-nvidia-"
)


def gpu_instance(instance_type: str) -> bool:
    """Does this instance type carry GPUs or other accelerators (catalog first, family second)?"""
    spec = instance_spec(instance_type)
    if spec is not None:
        return spec.gpu_count > 0
    return bool(_re(_GPU_TYPE, 0).search(fold(instance_type.strip())))


_EMBEDDED = r"-(nvidia-[a-z0-9-]+?)-(\d+)$"


def instance_ask(instance_type: str, line: int | None) -> GpuAsk | None:
    """GPUs of one instance: from the catalog, or from an Anyscale-style `…-nvidia-l4-1` suffix."""
    spec = instance_spec(instance_type)
    if spec is not None and spec.gpu_count > 0:
        return GpuAsk(spec.gpu_model, spec.gpu_count, line, instance_type, spec.gpu_memory_gib)
    embedded = _re(_EMBEDDED, 0).search(fold(instance_type))
    if embedded:
        model = canonical_gpu(embedded.group(1))
        if model:
            return GpuAsk(model, int(embedded.group(2)), line, instance_type)
    return None


_ACCELERATOR_TYPE = r"accelerator_type[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9][\w-]*)"


def ray_accelerator_type(text: str) -> str | None:
    """The GPU a Ray Serve deployment or a node type names: `accelerator_type: "H100"` in
    `ray_actor_options`, or the `accelerator_type:H100` custom resource; None if none is known."""
    for match in _re(_ACCELERATOR_TYPE, 0).finditer(text):
        model = canonical_gpu(match.group(1))
        if model is not None:
            return model
    return None
