"""The price APIs' answers for the refresh tests, in their real shapes, traps included."""

from __future__ import annotations

from typing import Any

from gpu_audit.catalog import instance_types

EFFECTIVE = "2026-11-01T00:00:00Z"
# us-east-1's Linux on-demand prices at the fake source (the bundled p4d is 21.95764)
EC2 = {"p4d.24xlarge": 19.5, "g5.xlarge": 0.95, "p5.48xlarge": 52.0}


def _term(sku: str, code: str, usd: float, effective: str, **attributes: str) -> dict[str, Any]:
    rate = f"{sku}.{code}.6YS6EN2CT7"
    return {
        f"{sku}.{code}": {
            "priceDimensions": {
                rate: {
                    "unit": "Hrs",
                    "endRange": "Inf",
                    "description": f"${usd} per hour",
                    "appliesTo": [],
                    "rateCode": rate,
                    "beginRange": "0",
                    "pricePerUnit": {"USD": f"{usd:.10f}"},
                }
            },
            "sku": sku,
            "effectiveDate": effective,
            "offerTermCode": code,
            "termAttributes": attributes,
        }
    }


def ec2_product(
    sku: str,
    name: str,
    usd: float,
    region: str = "us-east-1",
    effective: str = EFFECTIVE,
    **attributes: str,
) -> dict[str, Any]:
    base = {
        "instanceType": name,
        "regionCode": region,
        "location": "US East (N. Virginia)",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "usagetype": f"USE1-BoxUsage:{name}",
        "operation": "RunInstances",
    }
    return {
        "product": {
            "productFamily": "Compute Instance",
            "attributes": {**base, **attributes},
            "sku": sku,
        },
        "serviceCode": "AmazonEC2",
        "terms": {
            "OnDemand": _term(sku, "JRTCKXETXF", usd, effective),
            # a 1-year reservation's hourly rate: cheaper, and never an on-demand price
            "Reserved": _term(
                sku, "4NA7Y494T4", round(usd * 0.6, 4), effective, LeaseContractLength="1yr"
            ),
        },
        "version": "20261120190311",
        "publicationDate": "2026-11-20T19:03:11Z",
    }


def ec2_products() -> list[dict[str, Any]]:
    products = []
    for n, (name, usd) in enumerate(sorted(EC2.items())):
        products += [
            ec2_product(f"LIN{n}", name, usd),
            ec2_product(f"WIN{n}", name, usd + 7, operatingSystem="Windows"),
            ec2_product(f"SQL{n}", name, usd + 9, preInstalledSw="SQL Std"),
            ec2_product(f"DED{n}", name, usd + 3, tenancy="Dedicated"),
            ec2_product(f"ACR{n}", name, usd - 0.1, capacitystatus="AllocatedCapacityReservation"),
            ec2_product(f"UCR{n}", name, usd - 0.2, capacitystatus="UnusedCapacityReservation"),
        ]
    products.append(ec2_product("OTHER", "m5.large", 0.096))  # not a catalog type
    products.append(ec2_product("WEST", "p4d.24xlarge", 23.0, region="us-west-2"))
    return products


def sagemaker_product(sku: str, name: str, component: str, usd: float) -> dict[str, Any]:
    return {
        "product": {
            "productFamily": "ML Instance",
            "attributes": {
                "regionCode": "us-east-1",
                "instanceName": name,
                "component": component,
                "usagetype": f"USE1-{component[:5]}:{name}",
            },
            "sku": sku,
        },
        "serviceCode": "AmazonSageMaker",
        "terms": {"OnDemand": _term(sku, "JRTCKXETXF", usd, EFFECTIVE)},
        "version": "20261120190311",
        "publicationDate": "2026-11-20T19:03:11Z",
    }


def sagemaker_products() -> list[dict[str, Any]]:
    return [
        sagemaker_product("SMT", "ml.p4d.24xlarge", "Training", 25.25),
        sagemaker_product("SMH", "ml.p4d.24xlarge", "Hosting", 26.5),
        sagemaker_product("SMN", "ml.p4d.24xlarge", "Notebook", 24.0),
    ]


# (type, zone, price, time, product): each zone's latest Linux price counts, nothing else
SPOT = [
    ("p4d.24xlarge", "us-east-1a", "5.000000", "2026-11-24T08:00:00.000Z", "Linux/UNIX"),
    ("p4d.24xlarge", "us-east-1a", "9.000000", "2026-11-25T09:58:00.000Z", "Linux/UNIX"),
    ("p4d.24xlarge", "us-east-1b", "10.000000", "2026-11-25T07:00:00.000Z", "Linux/UNIX"),
    ("p4d.24xlarge", "us-east-1c", "1.000000", "2026-11-20T01:00:00.000Z", "Linux/UNIX"),
    ("p4d.24xlarge", "us-east-1c", "12.000000", "2026-11-25T06:00:00.000Z", "Linux/UNIX"),
    ("p4d.24xlarge", "us-east-1d", "2.000000", "2026-11-25T09:00:00.000Z", "Windows"),
    ("g5.xlarge", "us-east-1a", "0.500000", "2026-11-25T09:00:00.000Z", "Linux/UNIX"),
    ("g5.xlarge", "us-east-1b", "0.700000", "2026-11-25T09:00:00.000Z", "Linux/UNIX"),
]
SPOT_MEDIAN = {"p4d.24xlarge": 10.0, "g5.xlarge": 0.6}


def spot_points() -> list[dict[str, str]]:
    return [
        {"region": "us-east-1", "type": t, "zone": z, "price": p, "time": w, "os": o}
        for t, z, p, w, o in SPOT
    ]


def azure_item(
    sku: str, usd: float, meter: str, product: str, kind: str = "Consumption"
) -> dict[str, Any]:
    return {
        "currencyCode": "USD",
        "tierMinimumUnits": 0.0,
        "retailPrice": usd,
        "unitPrice": usd,
        "armRegionName": "eastus",
        "location": "US East",
        "effectiveStartDate": "2026-10-01T00:00:00Z",
        "meterId": f"meter-{sku}-{meter}".replace(" ", "-"),
        "meterName": meter,
        "productId": "DZH318Z0BQ4L",
        "skuId": "DZH318Z0BQ4L/00ZZ",
        "productName": product,
        "skuName": meter,
        "serviceName": "Virtual Machines",
        "serviceId": "DZH313Z7MMC8",
        "serviceFamily": "Compute",
        "unitOfMeasure": "1 Hour",
        "type": kind,
        "isPrimaryMeterRegion": True,
        "armSkuName": sku,
    }


# eastus: H200 (unpriced in the bundled catalog) and H100 (bundled 98.32)
AZURE = {"Standard_ND96isr_H200_v5": (110.24, 44.1), "Standard_ND96isr_H100_v5": (95.0, 38.0)}


def azure_items() -> list[dict[str, Any]]:
    """Six meters for each of the catalog's Azure sizes (more than one page of 100), the
    traps among them: Windows, Low Priority, DevTest and reservation rows."""
    items = []
    for spec in sorted(instance_types(), key=lambda s: s.instance_type):
        if spec.cloud != "azure":
            continue
        usd, spot = AZURE.get(spec.instance_type, (10.0, 3.0))
        size = spec.instance_type.removeprefix("Standard_").replace("_", " ")
        series = f"Virtual Machines {size} Series"
        items += [
            azure_item(spec.instance_type, usd, size, series),
            azure_item(spec.instance_type, spot, f"{size} Spot", series),
            azure_item(spec.instance_type, usd * 1.3, size, f"{series} Windows"),
            azure_item(spec.instance_type, spot * 1.2, f"{size} Spot", f"{series} Windows"),
            azure_item(spec.instance_type, usd * 0.2, f"{size} Low Priority", series),
            azure_item(spec.instance_type, usd * 0.25, f"{size} Low Priority", f"{series} Windows"),
        ]
        items.append(azure_item(spec.instance_type, usd * 0.9, size, series, "DevTestConsumption"))
        items.append(azure_item(spec.instance_type, usd * 0.5, size, series, "Reservation"))
    return items


def gcp_sku(
    description: str,
    usd: float,
    usage: str = "OnDemand",
    unit: str = "h",
    group: str = "GPU",
    service: tuple[str, str] = ("6F81-5844-456A", "Compute Engine"),
    regions: tuple[str, ...] = ("us-central1", "us-east1"),
) -> dict[str, Any]:
    units, nanos = int(usd), round((usd - int(usd)) * 1e9)
    key = (description, usage, regions, usd)
    return {
        "name": f"services/{service[0]}/skus/{abs(hash(key)) % 10**8:08d}",
        "skuId": f"SKU-{abs(hash(key)) % 10**4:04d}",
        "description": description,
        "category": {
            "serviceDisplayName": service[1],
            "resourceFamily": "Compute",
            "resourceGroup": group,
            "usageType": usage,
        },
        "serviceRegions": list(regions),
        "pricingInfo": [
            {
                "summary": "",
                "pricingExpression": {
                    "usageUnit": unit,
                    "displayQuantity": 1,
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {
                                "currencyCode": "USD",
                                "units": str(units),
                                "nanos": nanos,
                            },
                        }
                    ],
                    "usageUnitDescription": "hour",
                    "baseUnit": "s",
                    "baseUnitDescription": "second",
                    "baseUnitConversionFactor": 3600,
                },
                "currencyConversionRate": 1,
                "effectiveTime": "2026-11-18T21:02:40.215Z",
            }
        ],
        "serviceProviderName": "Google",
    }


def gcp_skus() -> list[dict[str, Any]]:
    """A2 and N1 SKUs in us-central1, the traps among them: a commitment, a DWS rate, a
    description and a usage type that disagree."""
    return [
        gcp_sku("A2 Instance Core running in Americas", 0.031611, group="CPU"),
        gcp_sku("A2 Instance Ram running in Americas", 0.004237, unit="GiBy.h", group="RAM"),
        gcp_sku("Nvidia Tesla A100 GPU running in Americas", 2.8),
        gcp_sku("Spot Preemptible A2 Instance Core running in Americas", 0.0125, "Preemptible"),
        gcp_sku(
            "Spot Preemptible A2 Instance Ram running in Americas",
            0.0017,
            "Preemptible",
            unit="GiBy.h",
        ),
        gcp_sku(
            "Nvidia Tesla A100 GPU attached to Spot Preemptible VMs running in Americas",
            1.1,
            "Preemptible",
        ),
        gcp_sku("Commitment v1: Nvidia Tesla A100 GPU in Americas for 1 Year", 1.8, "Commit1Yr"),
        gcp_sku("Nvidia Tesla A100 GPU running in Americas DWS Defined Duration", 1.4),
        gcp_sku("Nvidia Tesla T4 GPU running in Americas", 0.35, "Preemptible"),  # disagrees
        gcp_sku("Nvidia Tesla T4 GPU running in Americas", 0.33),
        gcp_sku("N1 Predefined Instance Core running in Americas", 0.031611, group="CPU"),
        gcp_sku(
            "N1 Predefined Instance Ram running in Americas", 0.004237, unit="GiBy.h", group="RAM"
        ),
    ]


VERTEX_SERVICE = ("C7E2-9256-1C43", "Vertex AI")
# Vertex AI custom training in us-central1 (Iowa): per H100, per A3 vCPU, per A3 GiB, per N1 vCPU
# and GiB. Made-up figures, in the wording public billing captures show (docs/catalog.md).
VERTEX = {"h100": 11.2660332, "a3_core": 0.0293227, "a3_ram": 0.0025534}
VERTEX_N1 = (0.0379, 0.0051)


def vertex_sku(
    description: str,
    usd: float,
    usage: str = "OnDemand",
    regions: tuple[str, ...] = ("us-central1",),
    **extra: Any,
) -> dict[str, Any]:
    return gcp_sku(description, usd, usage, service=VERTEX_SERVICE, regions=regions, **extra)


def vertex_skus() -> list[dict[str, Any]]:
    """The Vertex AI service's training SKUs for A3 (us-central1, europe-west4) and N1
    (us-central1), among the traps: prediction and management-fee SKUs, a commitment, a
    training description billed as Preemptible, a term-priced one billed as OnDemand, a GPU that is almost the H100 (Mega), and two
    SKUs pricing europe-west4's A3 core differently."""
    on = "Vertex AI: Training/Pipelines on"
    nl = ("europe-west4",)
    return [
        vertex_sku(f"{on} NVIDIA H100 80GB in Iowa", VERTEX["h100"]),
        vertex_sku(f"{on} A3 Instance Core in Iowa", VERTEX["a3_core"], group="CPU"),
        vertex_sku(f"{on} A3 Instance RAM in Iowa", VERTEX["a3_ram"], unit="GiBy.h", group="RAM"),
        vertex_sku(f"{on} SSD backed PD Capacity", 0.000268, unit="GiBy.mo", group="SSD"),
        vertex_sku("Vertex AI: Online/Batch Prediction Nvidia H100 80gb GPU running in Iowa", 9.9),
        vertex_sku(
            "Vertex AI: Online/Batch Prediction A3 Predefined Instance Core running in Iowa", 0.02
        ),
        vertex_sku(
            "Vertex AI: Training/Pipelines management fee on NVIDIA H100 80GB in Iowa", 1.47
        ),
        vertex_sku(f"{on} NVIDIA H100 80GB Mega in Iowa", 12.5),
        vertex_sku(f"{on} NVIDIA H100 80GB in Iowa", 3.1, "Preemptible"),
        vertex_sku(f"Commitment v1: {on} NVIDIA H100 80GB in Iowa for 1 Year", 7.0, "Commit1Yr"),
        vertex_sku(f"{on} NVIDIA H100 80GB in Iowa for 3 Years", 5.0),  # a term, billed OnDemand
        vertex_sku(f"{on} N1 Predefined Instance Core running in Americas", VERTEX_N1[0]),
        vertex_sku(
            f"{on} N1 Predefined Instance Ram running in Americas", VERTEX_N1[1], unit="GiBy.h"
        ),
        vertex_sku(f"{on} NVIDIA H100 80GB in Netherlands", 12.1, regions=nl),
        vertex_sku(f"{on} A3 Instance RAM in Netherlands", 0.0027, regions=nl, unit="GiBy.h"),
        vertex_sku(f"{on} A3 Instance Core in Netherlands", 0.0311, regions=nl),
        vertex_sku(f"{on} A3 Instance Core in Netherlands", 0.0322, regions=nl),  # which one?
    ]
