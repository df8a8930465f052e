"""The price-API server fixture, with the environment that points the refresh at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.catalog.price_data import (
    azure_items,
    ec2_products,
    gcp_skus,
    sagemaker_products,
    spot_points,
    vertex_skus,
)
from tests.catalog.price_server import FakePrices, serve

from gpu_audit.prices.overlay import use_prices


@pytest.fixture
def price_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePrices]:
    fake = FakePrices(
        products={"AmazonEC2": ec2_products(), "AmazonSageMaker": sagemaker_products()},
        spot=spot_points(),
        azure=azure_items(),
        skus=gcp_skus(),
        vertex=vertex_skus(),
    )
    with serve(fake) as base:
        for name in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AWS_ENDPOINT_URL", base)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        monkeypatch.setenv("AWS_RETRY_MODE", "standard")
        monkeypatch.setenv("GPU_AUDIT_AZURE_PRICES_ENDPOINT", f"{base}/api/retail/prices")
        monkeypatch.setenv("GPU_AUDIT_GCP_BILLING_ENDPOINT", base)
        yield fake


@pytest.fixture(autouse=True)
def _bundled_prices_after() -> Iterator[None]:
    """An in-process CLI run with --prices leaves its file laid over the catalog: lift it."""
    yield
    use_prices(None)
