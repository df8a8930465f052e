"""Catalog lookups: every family resolves, names are normalised, aliases fold to canonical names."""

from __future__ import annotations

import pytest

from gpu_audit.catalog import (
    REFERENCE_REGION,
    canonical_gpu,
    class_rank,
    gpu_hour_price,
    instance_spec,
    instance_types,
    price,
)

# One or more sizes of every family the catalog promises, with the GPU model it must report.
FAMILIES = [
    ("p3.2xlarge", "V100", 1),
    ("p3.16xlarge", "V100", 8),
    ("p3dn.24xlarge", "V100-32GB", 8),
    ("p4d.24xlarge", "A100-40GB", 8),
    ("p4de.24xlarge", "A100-80GB", 8),
    ("p5.4xlarge", "H100", 1),
    ("p5.48xlarge", "H100", 8),
    ("p5e.48xlarge", "H200", 8),
    ("p5en.48xlarge", "H200", 8),
    ("p6-b200.48xlarge", "B200", 8),
    ("g4dn.xlarge", "T4", 1),
    ("g4dn.metal", "T4", 8),
    ("g4ad.16xlarge", "Radeon-Pro-V520", 4),
    ("g5.xlarge", "A10G", 1),
    ("g5.48xlarge", "A10G", 8),
    ("g5g.16xlarge", "T4G", 2),
    ("g6.12xlarge", "L4", 4),
    ("g6e.48xlarge", "L40S", 8),
    ("gr6.4xlarge", "L4", 1),
    ("trn1.2xlarge", "Trainium", 1),
    ("trn1.32xlarge", "Trainium", 16),
    ("trn1n.32xlarge", "Trainium", 16),
    ("trn2.48xlarge", "Trainium2", 16),
    ("inf2.xlarge", "Inferentia2", 1),
    ("inf2.48xlarge", "Inferentia2", 12),
    ("dl1.24xlarge", "Gaudi", 8),
    ("a2-highgpu-1g", "A100-40GB", 1),
    ("a2-highgpu-8g", "A100-40GB", 8),
    ("a2-megagpu-16g", "A100-40GB", 16),
    ("a2-ultragpu-1g", "A100-80GB", 1),
    ("a2-ultragpu-8g", "A100-80GB", 8),
    ("a3-highgpu-1g", "H100", 1),
    ("a3-highgpu-8g", "H100", 8),
    ("a3-megagpu-8g", "H100", 8),
    ("a3-edgegpu-8g", "H100", 8),
    ("a3-ultragpu-8g", "H200", 8),
    ("a4-highgpu-8g", "B200", 8),
    ("g2-standard-4", "L4", 1),
    ("g2-standard-24", "L4", 2),
    ("g2-standard-96", "L4", 8),
    ("Standard_NC6s_v3", "V100", 1),
    ("Standard_NC24rs_v3", "V100", 4),
    ("Standard_NC4as_T4_v3", "T4", 1),
    ("Standard_NC64as_T4_v3", "T4", 4),
    ("Standard_NC24ads_A100_v4", "A100-80GB", 1),
    ("Standard_NC96ads_A100_v4", "A100-80GB", 4),
    ("Standard_NC40ads_H100_v5", "H100-NVL", 1),
    ("Standard_NC80adis_H100_v5", "H100-NVL", 2),
    ("Standard_ND40rs_v2", "V100-32GB", 8),
    ("Standard_ND96asr_v4", "A100-40GB", 8),
    ("Standard_ND96amsr_A100_v4", "A100-80GB", 8),
    ("Standard_ND96isr_H100_v5", "H100", 8),
    ("Standard_ND96isr_H200_v5", "H200", 8),
    ("Standard_ND96isr_MI300X_v5", "MI300X", 8),
    ("Standard_NV12s_v3", "M60", 1),
    ("Standard_NV6ads_A10_v5", "A10", 1),
    ("Standard_NV72ads_A10_v5", "A10", 2),
]


@pytest.mark.parametrize(("instance_type", "model", "count"), FAMILIES)
def test_every_family_resolves(instance_type: str, model: str, count: int) -> None:
    spec = instance_spec(instance_type)
    assert spec is not None, instance_type
    assert (spec.gpu_model, spec.gpu_count) == (model, count)


def test_sagemaker_prefix_is_stripped() -> None:
    assert instance_spec("ml.g5.xlarge") == instance_spec("g5.xlarge")
    assert instance_spec("ML.P4D.24XLARGE") == instance_spec("p4d.24xlarge")
    assert price("ml.g5.xlarge", "us-east-1") == price("g5.xlarge", "us-east-1")


def test_azure_names_are_case_insensitive() -> None:
    expected = instance_spec("Standard_NC24ads_A100_v4")
    assert expected is not None
    assert instance_spec("standard_nc24ads_a100_v4") == expected
    assert instance_spec(" STANDARD_NC24ADS_A100_V4 ") == expected


@pytest.mark.parametrize(
    "instance_type", ["m5.large", "foo", "", None, "n1-standard-8", "ml.m5.xlarge"]
)
def test_unknown_and_non_gpu_types_give_none(instance_type: str | None) -> None:
    assert instance_spec(instance_type) is None


def test_unknown_type_has_no_price() -> None:
    assert price("m5.large", "us-east-1") is None
    assert price("foo") is None
    assert price(None) is None


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("A100", "A100-40GB"),
        ("nvidia-tesla-a100", "A100-40GB"),
        ("nvidia-a100-80gb", "A100-80GB"),
        ("NVIDIA_A100_80GB", "A100-80GB"),
        ("H100-SXM", "H100"),
        ("nvidia-h100-80gb", "H100"),
        ("NVIDIA_H100_80GB", "H100"),
        ("nvidia-h100-mega-80gb", "H100"),
        ("A10g", "A10G"),
        ("nvidia-l4", "L4"),
        ("NVIDIA_L4", "L4"),
        ("nvidia-tesla-t4", "T4"),
        ("V100-16GB", "V100"),
        ("nvidia-h200-141gb", "H200"),
        ("nvidia-b200", "B200"),
        ("Gaudi HL-205", "Gaudi"),
        ("AMD-V520", "Radeon-Pro-V520"),
        ("tpu-v5-lite-podslice", "TPU-v5e"),
        ("tpu-v5litepod-8", "TPU-v5e"),
        ("tpu-v6e-slice", "TPU-v6e"),
    ],
)
def test_aliases_fold_to_canonical_names(alias: str, canonical: str) -> None:
    assert canonical_gpu(alias) == canonical


@pytest.mark.parametrize(
    "name",
    [
        "Trainium",
        "Trainium2",
        "Inferentia",
        "Inferentia2",
        "Gaudi",
        "MI250X",
        "TPU-v5e",
        "tpu-v4-8",
    ],
)
def test_accelerators_off_the_ladder_have_no_rank(name: str) -> None:
    assert canonical_gpu(name) is not None
    assert class_rank(name) is None


def test_mi300x_rtx_4090_and_rtx_pro_6000_have_class_ranks() -> None:
    """A class cap judges them: MI300X sits between H100-NVL and H200 (docs/policy-language.md),
    RTX 4090 between A10 and A40, RTX PRO 6000 at the reference's 78."""
    assert class_rank("H100-NVL") < class_rank("AMD Instinct MI300X") < class_rank("H200")  # type: ignore[operator]
    assert class_rank("A10") < class_rank("RTX4090") < class_rank("A40")  # type: ignore[operator]
    assert class_rank("RTX PRO 6000 Blackwell Server Edition") == 78


def test_ladder_order_follows_the_reference() -> None:
    order = [
        "K80",
        "M60",
        "P4",
        "T4",
        "P100",
        "L4",
        "A10G",
        "V100",
        "V100-32GB",
        "A100-40GB",
        "L40S",
    ]
    order += ["A100-80GB", "H100", "H100-NVL", "H200", "B200", "B300"]
    ranks = [class_rank(name) for name in order]
    assert all(rank is not None for rank in ranks)
    assert ranks == sorted(ranks)


def test_unpriced_region_falls_back_to_the_reference_region() -> None:
    quote = price("g5.xlarge", "ap-south-1")
    assert quote is not None
    assert (quote.region, quote.exact_region) == ("us-east-1", False)
    exact = price("g5.xlarge", "us-west-2")
    assert exact is not None and exact.exact_region and exact.region == "us-west-2"


def test_type_without_a_reference_region_price_falls_back_to_any_region() -> None:
    quote = price("trn2.48xlarge", "us-east-1")
    assert quote is not None
    assert quote.region == "us-east-2"
    assert not quote.exact_region


def test_gcp_n1_host_plus_attached_gpus() -> None:
    host = price("n1-standard-8", "us-central1")
    gpu = price(None, gpu_model="nvidia-tesla-t4", gpu_count=1)
    both = price("n1-standard-8", "us-central1", gpu_model="nvidia-tesla-t4", gpu_count=2)
    assert host is not None and gpu is not None and both is not None
    assert host.on_demand is not None and both.on_demand is not None
    assert both.on_demand == pytest.approx(host.on_demand + 2 * 0.35)
    assert both.exact_region


def test_gpu_hour_price_is_the_cheapest_per_gpu() -> None:
    h100 = gpu_hour_price("nvidia-h100-80gb")
    assert h100 is not None and h100.on_demand == pytest.approx(55.04 / 8)
    k80 = gpu_hour_price("K80")
    assert k80 is not None and k80.on_demand is not None
    assert gpu_hour_price("not-a-gpu") is None


def test_every_type_resolves_by_its_own_name() -> None:
    for spec in instance_types():
        assert instance_spec(spec.instance_type) == spec
        assert spec.cloud in REFERENCE_REGION


def test_per_gpu_price_is_the_named_instances_price() -> None:
    """Issue 12.6: a per-GPU price names its instance, and both figures are that instance's."""
    a100 = gpu_hour_price("nvidia-tesla-a100")
    assert a100 is not None and a100.item == "p4d.24xlarge"
    assert "(p4d.24xlarge per GPU)" in a100.source
    assert a100.spot == pytest.approx(5.0933 / 8, abs=1e-5)  # not another size's spot
    models = {spec.gpu_model for spec in instance_types()}
    for model in models:
        quote = gpu_hour_price(model)
        if quote is None or quote.item is None or quote.item.startswith("gpu:"):
            continue
        spec = instance_spec(quote.item)
        whole = price(quote.item, quote.region)
        assert spec is not None and whole is not None and whole.region == quote.region
        assert quote.on_demand == pytest.approx(whole.on_demand / spec.gpu_count, abs=1e-5)
        if whole.spot is None:
            assert quote.spot is None, model
        else:
            assert quote.spot == pytest.approx(whole.spot / spec.gpu_count, abs=1e-5), model


def test_a4_is_priced_as_eight_bundled_b200_slices() -> None:
    """The A4 slice SKU bundles vCPU and RAM: the VM price is 8 × the per-slice rate."""
    quote = price("a4-highgpu-8g", "us-central1")
    assert quote is not None and quote.exact_region and quote.as_of == "2026-07-07"
    assert quote.on_demand == pytest.approx(8 * 16.11)
    assert quote.spot == pytest.approx(8 * 4.9542)
    assert "1 gpu slice" in quote.source
    borrowed = price("a4-highgpu-8g", "us-east4")  # not carried there: borrowed, and said so
    assert borrowed is not None and not borrowed.exact_region
    assert borrowed.region == "us-central1"


@pytest.mark.parametrize(
    ("instance_type", "on_demand", "spot"),
    [
        ("Standard_NV6ads_A10_v5", 0.454, 0.1135),
        ("Standard_NV12ads_A10_v5", 0.908, 0.227),
        ("Standard_NV18ads_A10_v5", 1.6, 0.4),
    ],
)
def test_partial_a10_sizes_are_priced(instance_type: str, on_demand: float, spot: float) -> None:
    for region in ("eastus", "westus2"):
        quote = price(instance_type, region)
        assert quote is not None and quote.exact_region, (instance_type, region)
        assert (quote.on_demand, quote.spot) == (on_demand, spot)
        assert "@3f5f697" in quote.source
    whole = price("Standard_NV36ads_A10_v5", "eastus")  # the whole card costs more
    assert whole is not None and whole.on_demand is not None and whole.on_demand > on_demand


@pytest.mark.parametrize(
    "instance_type", ["Standard_ND96isr_H200_v5", "Standard_ND96isr_MI300X_v5"]
)
def test_types_without_a_dated_list_price_stay_unpriced(instance_type: str) -> None:
    assert instance_spec(instance_type) is not None
    assert price(instance_type, "eastus") is None
    p5e = price("p5e.48xlarge", "us-east-2")  # capacity blocks only: spot, no on-demand
    assert p5e is not None and p5e.on_demand is None and p5e.spot is not None


def test_lookup_as_json_gives_prices_as_numbers_with_date_and_source() -> None:
    """Issue 38.12: `catalog lookup --format json`, the unknown names listed and exit 2."""
    import json

    from click.testing import CliRunner

    from gpu_audit.cli.main import main

    result = CliRunner().invoke(
        main, ["catalog", "lookup", "p4d.24xlarge", "H100", "p5.48xl", "--format", "json"]
    )
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert data["kind"] == "catalog-lookup" and data["unknown"] == ["p5.48xl"]
    p4d, h100 = data["items"]
    assert (p4d["gpu_model"], p4d["gpu_count"], p4d["on_demand_usd"]) == ("A100-40GB", 8, 21.957642)
    assert p4d["region"] == "us-east-1" and p4d["as_of"] and p4d["source"]
    assert h100["name"] == "H100 (p5.48xlarge per GPU)" and h100["on_demand_usd"] == 6.88
