"""Savings on what the file can buy: the pinned cloud's own shapes, unpriced providers, minimums."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gpu_audit.catalog import price
from gpu_audit.catalog.enrich import enrich
from gpu_audit.catalog.shapes import gpu_shape_price
from gpu_audit.jobs import load_jobs
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import load_policy

NOW = datetime(2026, 11, 20, tzinfo=UTC)
PRECISION = Path(__file__).resolve().parents[2] / "fixtures" / "precision"


def _job(tmp_path: Path, text: str) -> object:
    config = tmp_path / "job.yaml"
    config.write_text(text)
    [resource] = load_jobs([str(config)]).resources
    return enrich(resource, NOW)


def test_one_a100_pinned_to_gcp_is_priced_on_a_one_gpu_gcp_machine() -> None:
    [job] = load_jobs([str(PRECISION / "sky-gcp-a100-1.yaml")]).resources
    assert job.service == "gce" and job.region == "us-central1"
    priced = enrich(job, NOW)
    a2 = price("a2-highgpu-1g", "us-central1")
    assert a2 is not None and priced.price.on_demand_hourly_usd == a2.on_demand
    assert priced.price.spot_hourly_usd == a2.spot


def test_a_one_gpu_ask_is_never_an_eighth_of_an_eight_gpu_machine() -> None:
    quote = gpu_shape_price("A100-40GB", 1, "aws", "us-east-1")
    p4d = price("p4d.24xlarge", "us-east-1")
    assert quote is not None and p4d is not None
    assert quote.on_demand == p4d.on_demand  # AWS sells A100s eight at a time: that is the bill
    anywhere = gpu_shape_price("A100-40GB", 1, None, None)
    assert anywhere is not None and anywhere.item == "a2-highgpu-1g"
    two = gpu_shape_price("A100-40GB", 2, "gcp", "us-central1")
    assert two is not None and two.item == "a2-highgpu-2g"


def test_a_provider_the_catalog_does_not_price_leaves_the_saving_unpriced() -> None:
    [job] = load_jobs([str(PRECISION / "sky-runpod-finetune.yaml")]).resources
    assert job.service == "runpod"
    priced = enrich(job, NOW)
    assert priced.price.on_demand_hourly_usd is None
    findings = evaluate([priced], load_policy(None), NOW).findings
    spot = [f for f in findings if f.rule_id == "spot-for-training"]
    assert spot and spot[0].saving_usd is None  # never priced as AWS


def test_autoscaling_clusters_count_at_their_minimum_with_the_maximum_noted() -> None:
    [workers] = load_jobs([str(PRECISION / "ray-serve-aws.yaml")]).resources
    assert workers.gpu.count == 1
    assert "autoscales from 1 to 8 nodes; counted at 1" in (workers.source.note or "")
    [service] = load_jobs([str(PRECISION / "sky-vllm-service.yaml")]).resources
    assert service.gpu.count == 1
    assert "autoscales from 1 to 4 replicas; counted at 1" in (service.source.note or "")


def test_a_ray_head_node_is_no_spot_candidate_but_its_workers_are() -> None:
    head, workers = load_jobs([str(PRECISION / "ray-train-gpu-head.yaml")]).resources
    assert head.role == "head" and workers.role is None
    found = evaluate([head, workers], load_policy(None), NOW).findings
    assert not [f for f in found if f.rule_id == "spot-for-training"]  # head out, workers spot
    assert [f.resource.name for f in found if f.rule_id == "checkpoint-on-spot"] == [
        "ppo-atari/spot_workers"
    ]
    assert [f.rule_id for f in found].count("cost-allocation-tags") == 1  # one line, once
