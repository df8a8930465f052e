"""GCP prices from the Cloud Billing Catalog API: not implemented yet; refused in one line."""

from __future__ import annotations

from gpu_audit.catalog.refresh.pricefile import PriceRow
from gpu_audit.catalog.refresh.targets import Targets
from gpu_audit.errors import ConfigError

ENDPOINT_ENV = "GPU_AUDIT_GCP_BILLING_ENDPOINT"


def gcp_prices(wanted: Targets, fetched_at: str) -> tuple[list[PriceRow], int]:
    """Compute Engine (6F81-5844-456A) and Vertex AI SKUs are not read yet (issue 23, item 1)."""
    raise ConfigError(
        "catalog refresh: --provider gcp (Cloud Billing Catalog) is not implemented yet; "
        "GCP prices stay the bundled catalog's"
    )
