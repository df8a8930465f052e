"""How many requests a full `gpu-audit catalog refresh` makes, counted at a loopback server.

The server (tests/catalog/price_server.py) answers in the real APIs' shapes and page sizes
(GetProducts 100 products, DescribeSpotPriceHistory 1000 points, Azure 100 items), holding for
every catalog type in every region: 6 EC2 products (Linux + the Windows/SQL/dedicated/reservation
traps, which the filters drop), 6 zones of spot points with 2 points each, SageMaker training and
hosting rates, 6 Azure consumption meters per size, 20,000 Compute Engine SKUs and 10,000
Vertex AI SKUs (both sizes assumptions, not counts of the live services). Run from the
repository root:

    .venv/bin/python benchmarks/refresh_calls.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.catalog.price_data import (
    azure_item,
    ec2_product,
    gcp_sku,
    gcp_skus,
    sagemaker_product,
    vertex_sku,
    vertex_skus,
)
from tests.catalog.price_server import FakePrices, serve

from gpu_audit.prices.run import refresh
from gpu_audit.prices.targets import targets

SKUS = 20_000
VERTEX_SKUS = 10_000  # training, prediction, management fees, generative-AI tokens, ...
TRAPS = (
    {"operatingSystem": "Windows"},
    {"preInstalledSw": "SQL Std"},
    {"tenancy": "Dedicated"},
    {"capacitystatus": "AllocatedCapacityReservation"},
    {"capacitystatus": "UnusedCapacityReservation"},
)


def fake() -> FakePrices:
    aws, azure = targets("aws"), targets("azure")
    products, spot, managed = [], [], []
    for region in aws.regions:
        for n, name in enumerate(aws.types):
            products.append(ec2_product(f"{region}-{n}", name, 1.0 + n, region=region))
            products += [
                ec2_product(f"{region}-{n}-{i}", name, 2.0 + n, region=region, **trap)
                for i, trap in enumerate(TRAPS)
            ]
            for zone in "abcdef":
                for hour in ("06", "09"):
                    spot.append(
                        {
                            "region": region,
                            "type": name,
                            "zone": f"{region}{zone}",
                            "price": "0.5",
                            "time": f"2026-11-25T{hour}:00:00.000Z",
                            "os": "Linux/UNIX",
                        }
                    )
        for n, name in enumerate(aws.managed):
            for component in ("Training", "Hosting"):
                product = sagemaker_product(f"{region}-{component}-{n}", name, component, 2.0)
                product["product"]["attributes"]["regionCode"] = region
                managed.append(product)
    items = []
    for region in azure.regions:
        for name in azure.types:
            for meter, product in (
                ("", ""),
                (" Spot", ""),
                ("", " Windows"),
                (" Spot", " Windows"),
                (" Low Priority", ""),
                (" Low Priority", " Windows"),
            ):
                item = azure_item(name, 3.0, f"{name}{meter}", f"Virtual Machines{product}")
                item["armRegionName"] = region
                items.append(item)
    # the Compute Engine service lists every SKU of every machine family, disk and network:
    # SKUS of them (an assumption, not a count of the live catalog), the GPU ones among them
    skus = gcp_skus() + [gcp_sku(f"Filler SKU {n} running in Americas", 0.01) for n in range(SKUS)]
    vertex = vertex_skus() + [
        vertex_sku(f"Filler SKU {n} in Iowa", 0.01) for n in range(VERTEX_SKUS)
    ]
    return FakePrices(
        products={"AmazonEC2": products, "AmazonSageMaker": managed},
        spot=spot,
        azure=items,
        skus=skus,
        vertex=vertex,
        gcp_page=5000,
        pricing_page=100,
        spot_page=1000,
        azure_page=100,
    )


def main() -> None:
    prices = fake()
    with serve(prices) as base, tempfile.TemporaryDirectory() as folder:
        os.environ.update(
            AWS_ENDPOINT_URL=base,
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            GPU_AUDIT_AZURE_PRICES_ENDPOINT=f"{base}/api/retail/prices",
            GPU_AUDIT_GCP_BILLING_ENDPOINT=base,
        )
        out = os.path.join(folder, "prices.json")
        for provider in ("aws", "azure", "gcp"):
            wanted = targets(provider)
            before = len(prices.requests)
            start = time.perf_counter()
            done = refresh(provider, (), out)
            took = time.perf_counter() - start
            sent = len(prices.requests) - before
            print(
                f"{provider}: {len(wanted.types)} types (+{len(wanted.managed)} managed) in "
                f"{len(wanted.regions)} regions: {sent} requests at the server "
                f"({done.requests} counted by the client), {done.rows} rows, {took:.2f} s"
            )


if __name__ == "__main__":
    main()
