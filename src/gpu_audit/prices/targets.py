"""What a refresh asks for: the catalog's own instance types and items, in its priced regions."""

from __future__ import annotations

from gpu_audit.catalog import bundled_prices, instance_types
from gpu_audit.core.frozen import record


@record
class Targets:
    provider: str
    regions: tuple[str, ...]
    types: tuple[str, ...]  # the provider's GPU instance types (EC2, Compute Engine, Azure VMs)
    managed: tuple[str, ...]  # managed-service instance names (SageMaker `ml.*`), else ()


def targets(provider: str, regions: tuple[str, ...] = ()) -> Targets:
    """The catalog's types of `provider`; `regions` default to the ones it prices today."""
    bundled = [(cloud, quote) for cloud, quote in bundled_prices() if cloud == provider]
    known = tuple(sorted({quote.region for _, quote in bundled}))
    types = tuple(sorted({s.instance_type for s in instance_types() if s.cloud == provider}))
    managed = sorted(
        {
            (quote.item or "").partition(":")[2]
            for _, quote in bundled
            if (quote.item or "").startswith(("sagemaker:", "sagemaker-hosting:"))
        }
    )
    return Targets(provider, tuple(dict.fromkeys(regions)) or known, types, tuple(managed))
