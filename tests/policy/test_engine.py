"""The engine beyond single rules: savings, memoized verdicts, suppressions, finding lines."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpu_audit.catalog.enrich import enrich
from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.core.canonical import from_mapping
from gpu_audit.core.resource import SourceRef
from gpu_audit.policy import engine
from gpu_audit.policy.loader import load_policy
from tests.conftest import FIXTURES, NOW

DEMO = str(FIXTURES / "inventory" / "demo.yaml")
DEMO_POLICY = str(FIXTURES / "inventory" / "demo-policy.yaml")


def _outcomes(result: engine.Evaluation) -> list[tuple[str, str, str]]:
    found = [(f.rule_id, f.resource.id, str(f.waiver)) for f in result.findings]
    missing = [(n.rule_id, n.resource.id, n.missing) for n in result.not_evaluated]
    return sorted(found) + sorted(missing)


def test_memoized_verdicts_equal_computed_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = load_policy([DEMO_POLICY])
    resources = [enrich(r, NOW) for r in load_inventory(DEMO).resources] * 3
    remembered = engine.evaluate(resources, policy, NOW)
    monkeypatch.setattr(engine, "_MEMO_LIMIT", 0)
    computed = engine.evaluate(resources, policy, NOW)
    assert _outcomes(remembered) == _outcomes(computed)
    assert len(remembered.findings) > 50


def _judge_one(**fields: object) -> engine.Evaluation:
    base = {"provider": "aws", "id": "i-1", "region": "us-east-1", "state": "running"}
    resource = enrich(from_mapping({**base, **fields}), NOW)
    return engine.evaluate([resource], load_policy(None), NOW)


def test_spot_saving_is_the_on_demand_minus_spot_month() -> None:
    result = _judge_one(instance_type="p4d.24xlarge", capacity="on-demand", workload="training")
    [spot] = [f for f in result.findings if f.rule_id == "spot-for-training"]
    price = spot.resource.price
    assert price.on_demand_hourly_usd and price.spot_hourly_usd
    expected = round((price.on_demand_hourly_usd - price.spot_hourly_usd) * 730, 2)
    assert spot.monthly_savings_usd == expected


def test_stop_saving_is_the_monthly_cost_and_stopped_costs_nothing() -> None:
    idle = _judge_one(
        instance_type="g5.xlarge", uptime_hours=48, utilization={"gpu_p95": 1, "gpu_avg": 0.5}
    )
    [finding] = [f for f in idle.findings if f.rule_id == "idle-gpu"]
    assert finding.monthly_savings_usd == finding.resource.monthly_cost_usd > 0
    stopped = _judge_one(instance_type="g5.xlarge", state="stopped")
    assert all(r.monthly_cost_usd == 0 for r in [f.resource for f in stopped.findings])


def test_downsize_saving_prices_the_target_class() -> None:
    result = _judge_one(instance_type="p4de.24xlarge", workload="inference", capacity="on-demand")
    [finding] = [f for f in result.findings if f.rule_id == "inference-small-gpu"]
    monthly = finding.resource.monthly_cost_usd
    assert monthly is not None and finding.monthly_savings_usd is not None
    assert 0 < finding.monthly_savings_usd < monthly  # 8 A10G-class GPUs still cost something


def test_unallocated_saving_is_the_idle_share_of_the_node() -> None:
    node = {"provider": "kubernetes", "cluster": "eks", "instance_type": "g5.12xlarge"}
    result = _judge_one(**node, uptime_hours=48, gpu={"count": 4, "allocated": 1})
    [finding] = [f for f in result.findings if f.rule_id == "gpu-unallocated"]
    monthly = finding.resource.monthly_cost_usd
    assert monthly and finding.monthly_savings_usd == round(monthly * 3 / 4, 2)


def test_minimum_saving_is_the_warm_nodes_share_of_the_cluster() -> None:
    cluster = {"provider": "azure", "service": "azureml", "instance_type": "Standard_NC6s_v3"}
    result = _judge_one(**cluster, min_nodes=2, gpu={"count": 3})  # 3 nodes now, 2 kept warm
    [finding] = [f for f in result.findings if f.rule_id == "warm-gpu-cluster"]
    monthly = finding.resource.monthly_cost_usd
    assert monthly == round(3.06 * 3 * 730, 2)  # priced per node: an Azure ML pool
    assert finding.monthly_savings_usd == round(monthly * 2 / 3, 2)


def test_a_pod_is_priced_by_its_gpus_and_left_out_of_the_spend() -> None:
    from gpu_audit.audit import audit
    from gpu_audit.core.results import Scope
    from gpu_audit.core.savings import summarize

    node = from_mapping(
        {"provider": "kubernetes", "id": "n", "cluster": "eks", "instance_type": "p4d.24xlarge",
         "region": "us-east-1", "state": "running", "capacity": "on-demand",
         "gpu": {"count": 8, "allocated": 4}, "uptime_hours": 48}
    )  # fmt: skip
    pod = from_mapping(
        {"kind": "pod", "provider": "kubernetes", "id": "eks/ns/p", "cluster": "eks",
         "region": "us-east-1", "state": "running", "capacity": "on-demand",
         "gpu": {"model": "A100-40GB", "count": 4}, "uptime_hours": 48,
         "utilization": {"gpu_avg": 1, "gpu_p95": 2, "window_hours": 24}}
    )  # fmt: skip
    result = audit([node, pod], load_policy(None), NOW, Scope(command="scan"))
    node_cost, pod_cost = (r.monthly_cost_usd for r in result.resources)
    assert node_cost and pod_cost and pod_cost < node_cost
    assert summarize(result).monthly_cost_usd == node_cost
    [idle] = [f for f in result.findings if f.rule_id == "idle-gpu"]
    assert idle.resource.kind.value == "pod" and idle.monthly_savings_usd == pod_cost


def test_job_findings_point_at_the_offending_key_and_honour_suppressions() -> None:
    source = SourceRef(
        path="job.yaml",
        line=1,
        key_lines={"capacity": 7, "gpu.model": 4},
        suppressions={4: {"gpu-class-cap": "approved in FIN-9"}},
    )
    job = from_mapping(
        {
            "kind": "job",
            "provider": "skypilot",
            "id": "j",
            "state": "defined",
            "workload": "training",
            "capacity": "on-demand",
            "gpu": {"model": "H100", "count": 8},
        }
    )
    result = engine.evaluate([enrich(replace(job, source=source), NOW)], load_policy(None), NOW)
    by_rule = {f.rule_id: f for f in result.findings}
    assert by_rule["spot-for-training"].line == 7
    assert by_rule["spot-for-training"].suppressed is None
    assert by_rule["gpu-class-cap"].line == 4
    assert by_rule["gpu-class-cap"].suppressed == "approved in FIN-9"
    assert not by_rule["gpu-class-cap"].is_open
    assert by_rule["cost-allocation-tags"].line == 1  # absent keys point at the document
