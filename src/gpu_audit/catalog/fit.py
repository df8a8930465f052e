"""What a full fine-tune needs in memory, and the cheapest smaller or fewer GPUs it fits with mixed
precision and gradient checkpointing (docs/knobs.md has the formula and its basis); pure."""

from __future__ import annotations

from dataclasses import replace

from gpu_audit.catalog.gpus import class_rank, ladder
from gpu_audit.catalog.models import GIB
from gpu_audit.catalog.precision import TENSOR_CORES_SINCE, compute_capability
from gpu_audit.catalog.shapes import gpu_shape_price, pinned_cloud
from gpu_audit.core.resource import Capacity, Gpu, Price, Training

# Bytes per parameter of a full fine-tune with Adam in mixed precision: 16-bit weights (2) and
# gradients (2), 32-bit master weights (4) and Adam's two moments (4 + 4), as ZeRO counts them
# (Rajbhandari et al. 2020, section 3.1: "16Ψ bytes").
BYTES_PER_PARAM = 16
# Activations under gradient checkpointing, as a share of those states: an allowance, not a
# measurement (one layer's activations plus each layer's input, at modest batch and sequence).
ACTIVATIONS = 0.10
USABLE = 0.90  # of a GPU's memory: the CUDA context, the allocator's fragmentation
COUNTS = (1, 2, 4, 8)  # GPUs a shape offers
# GPUs sold only on Arm hosts (AWS g5g): many training stacks ship no arm64 build.
ARM_HOSTS = frozenset({"T4G"})
# Services billed on a rate card of their own: a smaller shape would be priced on the cloud's VM
# card, not theirs, so no shape is named (the saving would not be like for like).
OWN_RATE_CARDS = frozenset({"sagemaker", "vertex", "azureml", "ai-platform"})


def full_tune_gib(params_b: float) -> float:
    """GiB a full fine-tune needs in all: states × (1 + the activations' allowance)."""
    return round(params_b * 1e9 * BYTES_PER_PARAM * (1 + ACTIVATIONS) / GIB, 1)


def smaller_fit(
    training: Training,
    gpu: Gpu,
    price: Price,
    capacity: Capacity | None,
    service: str | None,
    region: str | None,
) -> Training:
    """`training` with `fits` and `fits_hourly_usd` set to the cheapest one-machine shape of fewer
    GPUs or a smaller class (tensor cores, a generation no older than the job's GPU, the states
    sharded over its GPUs) that holds the need and costs less an hour than the job's own;
    unchanged when nothing smaller fits or prices."""
    params, hourly = training.params_b, price.hourly_usd
    rank, count = class_rank(gpu.model), gpu.count
    if not params or hourly is None or rank is None or not count:
        return training
    need = full_tune_gib(params)
    cloud, priced = pinned_cloud(service)
    if not priced or service in OWN_RATE_CARDS:
        return training
    spot = capacity is Capacity.SPOT
    floor = max(TENSOR_CORES_SINCE, compute_capability(gpu.model) or 0.0)
    best: tuple[float, str] | None = None
    for option in ladder():
        capability = compute_capability(option.name)
        if option.rank is None or option.rank > rank or not option.memory_gib:
            continue
        if option.name in ARM_HOSTS:
            continue
        if capability is None or capability < floor:  # no older generation: it trades speed
            continue
        for gpus in COUNTS:
            if gpus > count or (option.rank == rank and gpus >= count):
                continue
            if need / gpus > option.memory_gib * USABLE:
                continue
            quote = gpu_shape_price(option.name, gpus, cloud, region)
            if quote is None or quote.on_demand is None or _machines(quote.item) > 1:
                continue
            per_hour = quote.spot if spot and quote.spot is not None else quote.on_demand
            if per_hour < hourly and (best is None or per_hour < best[0]):
                best = (per_hour, f"{gpus}× {option.name} ({quote.item}) for {need:g} GiB")
    if best is None:
        return training
    return replace(training, fits=best[1], fits_hourly_usd=round(best[0], 5))


def _machines(item: str | None) -> int:
    """How many machines a shape's label rents (`2× g5.xlarge`); one for one machine, and for
    GPUs attached to one host (`4× gpu:T4`): sharded states want one machine's interconnect."""
    head, times, rest = (item or "").partition("× ")
    if not times or rest.startswith("gpu:") or not head.isdigit():
        return 1
    return int(head)
