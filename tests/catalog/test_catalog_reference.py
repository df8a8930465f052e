"""The catalog checked against ../shared/reference/gpu_catalog.csv, with its known errors fixed.

Every reference row is either compared or named in an allow-list below with its reason;
mismatches are collected and reported together.
"""

from __future__ import annotations

import csv
import math
import re

import pytest
from tests.conftest import SHARED, need_shared

from gpu_audit.catalog import canonical_gpu, instance_spec, price

REFERENCE = SHARED / "reference" / "gpu_catalog.csv"

# Reference types the catalog does not carry, by pattern, with the reason.
NOT_CARRIED = {
    r"dl2q\.24xlarge": "Qualcomm AI100: priced only outside us-east-1; not an ML-training GPU",
    r"g6f\..*|gr6f\..*": "fractional L4 (1/8 to 1/2 GPU): gpu_count is an integer",
    r"g7e?\..*": "NVIDIA RTX PRO 4500/6000 instance types: not carried yet (RTX-PRO-6000 is a "
    "class on the ladder)",
    r"tpu-.*": "TPU slices are not instance types; TPU chips are classes in gpus.py",
    r"Standard_NC(8|16|32)ads_A10_v4": "GPU count is blank in the reference and not documented",
    r"Standard_NCC40ads_H100_v5": "confidential-computing size, priced only in eastus2",
    r"Standard_NV(4|8|16|32)as_v4": "fractional AMD MI25: gpu_count is an integer",
    r"Standard_NG(8|16|32)ads_V620_v1": "fractional AMD V620: gpu_count is an integer",
    r"Standard_NC(6|12|24|24r)": "K80 NC series, retired by Azure in 2023",
}

# Per-GPU memory: the reference has the API's MiB figure; we carry the nominal size.
NOMINAL_MEMORY = {
    ("A10G", 22.35): "AWS API 22888 MiB; nominal 24 GB",
    ("L4", 22.35): "AWS API 22888 MiB; nominal 24 GB",
    ("L40S", 44.7): "AWS API 45776 MiB; nominal 48 GB",
    ("B200", 179.0): "183359 MiB from the API; nominal 180 GB",
    ("B300", 268.0): "about 275040 MiB from the API; nominal 288 GB",
}

# Rows whose prices we deliberately do not take from the reference.
PRE_CUT = "pre-June-2025 P4/P5 on-demand; we carry the post-cut price, which must be lower"
LOCAL_SSD = "reference excludes the bundled local SSD; we carry the list price including it"
PRICE_DIFFERENCES = {
    ("p4d.24xlarge", "us-west-2"): PRE_CUT,
    ("p4d.24xlarge", "eu-west-1"): PRE_CUT,
    ("p4de.24xlarge", "us-west-2"): PRE_CUT,
    ("p5.48xlarge", "us-west-2"): PRE_CUT,
    ("p5.48xlarge", "eu-west-2"): PRE_CUT,
    ("p5en.48xlarge", "us-west-2"): PRE_CUT,
    ("a3-highgpu-1g", "us-east4"): LOCAL_SSD,
    ("a3-highgpu-8g", "us-east4"): LOCAL_SSD,
    ("a3-edgegpu-8g", "us-east4"): LOCAL_SSD + " (priced as a3-highgpu-8g)",
    # The reference has SkyPilot's B200 rows only (90.216 = 0.7 x the on-demand slice SKU, a
    # DWS rate) and no on-demand total; we carry the on-demand A4 slice SKU x 8 in us-central1.
    ("a4-highgpu-8g", "us-central1"): "reference has a DWS-rate GPU row, not the A4 list price",
    ("a4-highgpu-8g", "us-east4"): "reference has a DWS-rate GPU row; us-east4 is not carried",
}
# Reference rows flagged ANOMALY (discounted-looking GCP SKUs) are never trusted: we carry the
# list price from another source, or nothing.


def _reference_rows() -> list[dict[str, str]]:
    need_shared(REFERENCE)
    with REFERENCE.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _close(ours: float | None, theirs: str) -> bool:
    if not theirs.strip():
        return ours is None
    return ours is not None and math.isclose(ours, float(theirs), rel_tol=1e-6, abs_tol=1e-4)


def _not_carried(instance_type: str) -> bool:
    return any(re.fullmatch(pattern, instance_type) for pattern in NOT_CARRIED)


def _n1_gpu(row: dict[str, str]) -> tuple[str, int] | None:
    match = re.fullmatch(r"n1-\*\+(.+)x(\d+)", row["instance_type"])
    return (match.group(1), int(match.group(2))) if match else None


def test_reference_specs_match() -> None:
    mismatches = []
    compared = 0
    for row in _reference_rows():
        if _n1_gpu(row) or _not_carried(row["instance_type"]):
            continue
        spec = instance_spec(row["instance_type"])
        if spec is None:
            mismatches.append(f"{row['instance_type']}: in the reference, not in the catalog")
            continue
        compared += 1
        model = canonical_gpu(row["accelerator_class"])
        if model != spec.gpu_model:
            mismatches.append(f"{spec.instance_type}: model {spec.gpu_model} != {model}")
        if int(float(row["gpu_count"])) != spec.gpu_count:
            mismatches.append(f"{spec.instance_type}: count {spec.gpu_count} != {row['gpu_count']}")
        memory = float(row["gpu_mem_gib_each"])
        if memory != spec.gpu_memory_gib and (spec.gpu_model, memory) not in NOMINAL_MEMORY:
            mismatches.append(f"{spec.instance_type}: memory {spec.gpu_memory_gib} != {memory}")
    assert compared > 250
    assert mismatches == []


def test_reference_prices_match() -> None:
    mismatches = []
    compared = 0
    for row in _reference_rows():
        instance_type, region = row["instance_type"], row["region"]
        n1 = _n1_gpu(row)
        if n1 is not None:
            model, count = n1
            quote = price(None, gpu_model=model, gpu_count=count)
            attached = price("n1-standard-8", region, gpu_model=model, gpu_count=count)
            host = price("n1-standard-8", region)
            if region != "us-central1":  # N1 hosts are priced in us-central1 only
                continue
            compared += 1
            assert quote is not None and attached is not None and host is not None
            expected = float(row["accel_ondemand_usd_hr"])
            assert attached.on_demand is not None and host.on_demand is not None
            if not math.isclose(attached.on_demand - host.on_demand, expected, abs_tol=1e-4):
                mismatches.append(
                    f"{instance_type} {region}: {attached.on_demand - host.on_demand}"
                )
            continue
        if _not_carried(instance_type) or "ANOMALY" in row["notes"]:
            continue
        reason = PRICE_DIFFERENCES.get((instance_type, region))
        quote = price(instance_type, region)
        exact = quote if quote is not None and quote.exact_region else None
        if reason == PRE_CUT:
            assert exact is not None and exact.on_demand is not None, (instance_type, region)
            assert exact.on_demand < float(row["ondemand_usd_hr"]), (instance_type, region)
            continue
        if reason is not None:
            continue
        compared += 1
        if exact is None:
            mismatches.append(f"{instance_type} {region}: not priced")
            continue
        on_demand = row["ondemand_us_east_1_2026_07_20"] or row["ondemand_usd_hr"]
        no_spot = "SpotPrice == on-demand" in row["notes"]
        spot = "" if no_spot else row["spot_usd_hr"]
        if not _close(exact.on_demand, on_demand):
            mismatches.append(
                f"{instance_type} {region}: on-demand {exact.on_demand} != {on_demand}"
            )
        if not _close(exact.spot, spot):
            mismatches.append(f"{instance_type} {region}: spot {exact.spot} != {spot}")
    assert compared > 250
    assert mismatches == []


def test_known_reference_errors_are_corrected() -> None:
    rows = {(r["instance_type"], r["region"]): r for r in _reference_rows()}
    p4d = price("p4d.24xlarge", "us-east-1")
    p5 = price("p5.48xlarge", "us-east-1")
    assert p4d is not None and p4d.on_demand == pytest.approx(21.96, abs=0.005)
    assert p5 is not None and p5.on_demand == pytest.approx(55.04)
    assert float(rows[("p4d.24xlarge", "us-east-1")]["ondemand_usd_hr"]) > 30  # the stale figure
    nd_h100 = instance_spec("Standard_ND96isr_H100_v5")
    assert nd_h100 is not None and nd_h100.gpu_count == 8
    # GCP: the list price per H100, not the discounted-looking $4.20 SKU of the reference.
    a3 = price("a3-highgpu-1g", "us-central1")
    assert a3 is not None and a3.on_demand is not None and a3.on_demand > 9.0
    assert "ANOMALY" in rows[("a3-highgpu-1g", "us-central1")]["notes"]
    # Nominal, not API, memory.
    for instance_type, memory in [("g5.xlarge", 24), ("g6.xlarge", 24), ("g6e.xlarge", 48)]:
        spec = instance_spec(instance_type)
        assert spec is not None and spec.gpu_memory_gib == memory
