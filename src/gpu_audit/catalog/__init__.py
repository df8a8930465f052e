"""Instance type → GPU, GPU class ranks, and hourly prices: lookups over bundled data."""

from gpu_audit.catalog.gpus import GpuClass, canonical_gpu, class_rank, gpu_class, ladder
from gpu_audit.catalog.lookup import (
    RATE_CARDS,
    REFERENCE_REGION,
    InstanceSpec,
    PriceQuote,
    bundled_prices,
    gpu_hour_price,
    instance_spec,
    instance_types,
    normalise_type,
    price,
    rate_cards,
    regional_prices,
    set_overlay,
)

__all__ = [
    "RATE_CARDS",
    "REFERENCE_REGION",
    "GpuClass",
    "InstanceSpec",
    "PriceQuote",
    "bundled_prices",
    "canonical_gpu",
    "class_rank",
    "gpu_class",
    "gpu_hour_price",
    "instance_spec",
    "instance_types",
    "ladder",
    "normalise_type",
    "price",
    "rate_cards",
    "regional_prices",
    "set_overlay",
]
