"""Catalog data: provenance on every price, a reference-region price per type, nominal memory."""

from __future__ import annotations

import csv
from importlib import resources

from gpu_audit.catalog import (
    RATE_CARDS,
    REFERENCE_REGION,
    gpu_class,
    instance_types,
    normalise_type,
)

# Types with no on-demand price in their cloud's reference region, and why (docs/catalog.md).
NO_REFERENCE_PRICE = {
    "p5e.48xlarge": "EC2 Capacity Blocks only (a reservation fee, not on-demand); spot is carried",
    "trn2.48xlarge": "not offered in us-east-1; priced in us-east-2",
    "standard_nd96isr_h200_v5": "no dated public list price found",
    "standard_nd96isr_mi300x_v5": "no dated public list price found",
}

# Partial-GPU sizes carry the VM's share of the GPU memory, not the whole card's.
PARTIAL_GPU_MEMORY = {
    "standard_nv6ads_a10_v5": 4,
    "standard_nv12ads_a10_v5": 8,
    "standard_nv18ads_a10_v5": 12,
}


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("gpu_audit.catalog").joinpath("data", name).read_text("utf-8")
    return list(
        csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#"))
    )


def test_every_price_row_has_as_of_and_source() -> None:
    rows = _rows("prices.csv")
    assert len(rows) > 300
    for row in rows:
        assert row["as_of"] and row["source"], row
        assert len(row["as_of"]) == 10 and row["as_of"][4] == "-", row
        assert row["on_demand_usd_hr"] or row["spot_usd_hr"], row
        assert row["cloud"] in REFERENCE_REGION, row


def test_price_rows_are_unique_and_name_known_items() -> None:
    rows = _rows("prices.csv")
    keys = [(normalise_type(row["item"]), row["region"]) for row in rows]
    assert len(keys) == len(set(keys))
    known = {normalise_type(spec.instance_type) for spec in instance_types()}
    for row in rows:
        card, separator, rest = row["item"].partition(":")
        item = rest if separator and card in RATE_CARDS else row["item"]
        if item.startswith("gpu:"):
            assert gpu_class(item[4:]) is not None and row["cloud"] == "gcp", row
        elif item.startswith("n1-"):
            assert row["cloud"] == "gcp", row
        else:
            assert normalise_type(item) in known, row


def test_every_instance_type_has_a_reference_region_price() -> None:
    priced = {
        normalise_type(row["item"])
        for row in _rows("prices.csv")
        if row["region"] == REFERENCE_REGION[row["cloud"]]
        and row["on_demand_usd_hr"]
        and ":" not in row["item"].removeprefix("gpu:")  # the plain price, not a rate card
    }
    unpriced = {
        normalise_type(spec.instance_type)
        for spec in instance_types()
        if normalise_type(spec.instance_type) not in priced
    }
    assert unpriced == set(NO_REFERENCE_PRICE)


def test_gcp_n1_hosts_and_attachable_gpus_are_priced() -> None:
    items = {row["item"] for row in _rows("prices.csv") if row["region"] == "us-central1"}
    for size in (4, 8, 16, 32, 64, 96):
        assert f"n1-standard-{size}" in items
        assert f"n1-highmem-{size}" in items
    for model in ("T4", "V100", "P100", "P4", "K80"):
        assert f"gpu:{model}" in items


def test_instance_types_are_unique_with_canonical_models_and_nominal_memory() -> None:
    specs = instance_types()
    assert len(specs) > 120
    assert len(_rows("instances.csv")) == len(specs)  # no duplicate type collapsed by the index
    for spec in specs:
        found = gpu_class(spec.gpu_model)
        assert found is not None and found.name == spec.gpu_model, spec
        assert spec.gpu_count >= 1, spec
        key = normalise_type(spec.instance_type)
        assert spec.gpu_memory_gib == PARTIAL_GPU_MEMORY.get(key, found.memory_gib), spec


def test_nominal_memory_is_consistent_across_clouds() -> None:
    by_model: dict[str, set[float]] = {}
    for spec in instance_types():
        if normalise_type(spec.instance_type) not in PARTIAL_GPU_MEMORY:
            by_model.setdefault(spec.gpu_model, set()).add(spec.gpu_memory_gib)
    assert by_model["A10G"] == {24} and by_model["L4"] == {24} and by_model["L40S"] == {48}
    assert by_model["A100-40GB"] == {40} and by_model["A100-80GB"] == {80}
    assert by_model["H100"] == {80} and by_model["H200"] == {141} and by_model["B200"] == {180}
    assert all(len(sizes) == 1 for sizes in by_model.values()), by_model
