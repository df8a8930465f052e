"""The GPU class ladder: canonical names, ranks, memory, and the aliases sources spell them with."""

from __future__ import annotations

from gpu_audit.core.frozen import record
from gpu_audit.core.lazyre import lazy


@record
class GpuClass:
    """A GPU class: its place in the ladder, memory and aliases."""

    name: str
    rank: int | None  # None: an accelerator outside the NVIDIA ladder (Trainium, TPU, Gaudi, AMD)
    memory_gib: float | None
    vendor: str


# Ranks follow ../shared/reference/README.md; A40, L40 and GH200 are placed by their generation
# and memory, between the reference's neighbours.
_LADDER: tuple[GpuClass, ...] = (
    GpuClass("K80", 10, 12, "nvidia"),
    GpuClass("M60", 20, 8, "nvidia"),
    GpuClass("P4", 30, 8, "nvidia"),
    GpuClass("T4", 40, 16, "nvidia"),
    GpuClass("T4G", 40, 16, "nvidia"),
    GpuClass("P100", 45, 16, "nvidia"),
    GpuClass("L4", 50, 24, "nvidia"),
    GpuClass("A10G", 55, 24, "nvidia"),
    GpuClass("A10", 55, 24, "nvidia"),
    GpuClass("RTX-4090", 56, 24, "nvidia"),  # Ada, 24 GB: above A10/A10G, below A40
    GpuClass("A40", 58, 48, "nvidia"),
    GpuClass("V100", 60, 16, "nvidia"),
    GpuClass("V100-32GB", 62, 32, "nvidia"),
    GpuClass("A100-40GB", 70, 40, "nvidia"),
    GpuClass("L40", 71, 48, "nvidia"),
    GpuClass("L40S", 72, 48, "nvidia"),
    GpuClass("A100-80GB", 75, 80, "nvidia"),
    GpuClass("RTX-PRO-6000", 78, 96, "nvidia"),  # Blackwell server edition; reference rank 78
    GpuClass("H100", 80, 80, "nvidia"),
    GpuClass("H100-NVL", 81, 94, "nvidia"),
    # AMD Instinct MI300X is outside the NVIDIA ladder by vendor, but a class cap must judge it:
    # ranked by what it replaces, an H100/H200-generation training GPU with 192 GB, at 84 (above
    # H100-NVL, below H200). `at-most: A100-80GB` and `at-most: H100` fail it; `at-most: H200`
    # passes it. Other AMD and non-NVIDIA accelerators stay off the ladder.
    GpuClass("MI300X", 84, 192, "amd"),
    GpuClass("H200", 85, 141, "nvidia"),
    GpuClass("GH200", 86, 96, "nvidia"),
    GpuClass("B200", 90, 180, "nvidia"),
    GpuClass("B300", 95, 288, "nvidia"),
    GpuClass("GB200", 95, 186, "nvidia"),
    # Outside the ladder: a policy names these explicitly (`gpu.model: {in: [Trainium2]}`).
    GpuClass("Trainium", None, 32, "aws"),
    GpuClass("Trainium2", None, 96, "aws"),
    GpuClass("Inferentia", None, 8, "aws"),
    GpuClass("Inferentia2", None, 32, "aws"),
    GpuClass("Gaudi", None, 32, "intel"),
    GpuClass("Gaudi2", None, 96, "intel"),
    GpuClass("Radeon-Pro-V520", None, 8, "amd"),
    GpuClass("MI210", None, 64, "amd"),
    GpuClass("MI250X", None, 128, "amd"),
    GpuClass("Qualcomm-AI100", None, 16, "qualcomm"),
    GpuClass("TPU-v2", None, 8, "google"),
    GpuClass("TPU-v3", None, 16, "google"),
    GpuClass("TPU-v4", None, 32, "google"),
    GpuClass("TPU-v5e", None, 16, "google"),
    GpuClass("TPU-v5p", None, 95, "google"),
    GpuClass("TPU-v6e", None, 32, "google"),
)

# Spellings seen in provider APIs and job configs, after `_fold` (lower case, `_`→`-`,
# `nvidia-`/`tesla-` prefixes dropped). Each canonical name also matches itself.
_ALIASES: dict[str, str] = {
    "a100": "A100-40GB",
    "a100-40g": "A100-40GB",
    "a100-sxm4-40gb": "A100-40GB",
    "a100-80g": "A100-80GB",
    "a100-sxm4-80gb": "A100-80GB",
    "a100-pcie-80gb": "A100-80GB",
    "h100-sxm": "H100",
    "h100-sxm5": "H100",
    "h100-80gb": "H100",
    "h100-mega": "H100",
    "h100-mega-80gb": "H100",
    "h100-pcie": "H100",
    "h100-nvl-94gb": "H100-NVL",
    "h200-141gb": "H200",
    "h200-sxm": "H200",
    "h100-94gb": "H100-NVL",
    "b200-sxm": "B200",
    "b200-180gb": "B200",
    "gb200-186gb": "GB200",
    "b300-288gb": "B300",
    "v100-16gb": "V100",
    "v100-sxm2": "V100",
    "v100-pcie-16gb": "V100",
    "v100-32g": "V100-32GB",
    "v100-sxm2-16gb": "V100",
    "v100-sxm2-32gb": "V100-32GB",
    "l40s-48gb": "L40S",
    "a10g-24gb": "A10G",
    "a10-24gb": "A10",
    "l4-24gb": "L4",
    "t4-16gb": "T4",
    "l40s-45gb": "L40S",
    "l4-vws": "L4",
    "t4-vws": "T4",
    "p4-vws": "P4",
    "p100-vws": "P100",
    "t4g": "T4G",
    "trainium1": "Trainium",
    "trn1": "Trainium",
    "trn2": "Trainium2",
    "inferentia1": "Inferentia",
    "inf1": "Inferentia",
    "inf2": "Inferentia2",
    "gaudi-hl-205": "Gaudi",
    "hl-205": "Gaudi",
    "habana-gaudi": "Gaudi",
    "gaudi1": "Gaudi",
    "habana-gaudi2": "Gaudi2",
    "hl-225": "Gaudi2",
    "gaudi1-hl205": "Gaudi",
    "amd-v520": "Radeon-Pro-V520",
    "radeon-pro-v520": "Radeon-Pro-V520",
    "v520": "Radeon-Pro-V520",
    "instinct-mi300x": "MI300X",
    "amd-mi300x": "MI300X",
    "mi300x-192gb": "MI300X",
    "qualcomm-ai100": "Qualcomm-AI100",
    "rtx4090": "RTX-4090",
    "geforce-rtx-4090": "RTX-4090",
    "rtx-4090-24gb": "RTX-4090",
    "rtxpro6000": "RTX-PRO-6000",
    "rtx-pro-6000-blackwell": "RTX-PRO-6000",
    "rtx-pro-6000-blackwell-server": "RTX-PRO-6000",
    "rtx-pro-6000-blackwell-server-edition": "RTX-PRO-6000",
    "rtx-pro-6000-96gb": "RTX-PRO-6000",
    "rtxpro6000-96gb": "RTX-PRO-6000",
    "mi300x": "MI300X",
    "ai100": "Qualcomm-AI100",
}

_BY_NAME: dict[str, GpuClass] = {g.name: g for g in _LADDER}
_INDEX: dict[str, GpuClass] = {}
for _g in _LADDER:
    _INDEX[_g.name.lower()] = _g
for _alias, _name in _ALIASES.items():
    _INDEX[_alias] = _BY_NAME[_name]

_PREFIXES = ("nvidia-", "tesla-", "amd-instinct-", "intel-")
_TPU = lazy(r"^tpu-?(v\d+(?:-?lite(?:pod)?|[a-z])?)", needs=("tpu",))
_TPU_NAMES = {"v5lite": "TPU-v5e", "v5litepod": "TPU-v5e"}


def _fold(text: str) -> str:
    folded = text.strip().lower().replace("_", "-").replace(" ", "-")
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if folded.startswith(prefix):
                folded = folded[len(prefix) :]
                changed = True
    return folded


def gpu_class(name: str | None) -> GpuClass | None:
    """The class for any spelling of a GPU or accelerator name, or None if unknown."""
    if not name:
        return None
    folded = _fold(name)
    found = _INDEX.get(folded)
    if found is not None:
        return found
    tpu = _TPU.match(folded)
    if tpu:
        version = tpu.group(1).replace("-", "")
        canonical = _TPU_NAMES.get(version, f"TPU-{version}")
        return _BY_NAME.get(canonical) or GpuClass(canonical, None, None, "google")
    return None


def canonical_gpu(name: str | None) -> str | None:
    """The ladder's name for a GPU however a source spells it (`NVIDIA-A100-SXM4-80GB` →
    `A100-80GB`), None for one it does not know."""
    found = gpu_class(name)
    return found.name if found else None


def class_rank(name: str | None) -> int | None:
    """The class rank on the NVIDIA ladder; None for unknown names and off-ladder accelerators."""
    found = gpu_class(name)
    return found.rank if found else None


def ladder() -> tuple[GpuClass, ...]:
    """Every GPU class, lowest rank first."""
    return _LADDER
