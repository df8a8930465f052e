"""Generated rule judges give exactly the verdicts of the reference closures."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gpu_audit.canonical import from_mapping
from gpu_audit.model import Resource
from gpu_audit.policy.codegen import compile_judge
from gpu_audit.policy.conditions import Condition, Located, compile_condition
from gpu_audit.policy.loader import load_policy
from gpu_audit.yamlsrc import load_documents
from tests.conftest import ROOT
from tests.policy.test_conditions import test_operator

POOLS: dict[str, list[Any]] = {
    "kind": ["instance", "job"],
    "region": ["us-east-1", "us-west-2", "eu-west-1", None],
    "zone": ["us-east-1a", "us-east-1", None],
    "account": ["111122223333", "acme-ml-dev", None],
    "instance_type": ["p4d.24xlarge", "g5.xlarge", "a2-highgpu-1g", "x9.mystery", None],
    "state": ["running", "stopped", "pending", "defined", None],
    "capacity": ["spot", "on-demand", "reserved", "unknown", None],
    "workload": ["training", "inference", "notebook", "unknown"],
    "uptime_hours": [0.5, 23.9, 24, 100, 168, 800, None],
    "launched_at": ["2026-01-01T00:00:00Z", None],
}


def random_resource(rng: random.Random, index: int) -> Resource:
    raw: dict[str, Any] = {"provider": rng.choice(["aws", "gcp", "skypilot"]), "id": f"r{index}"}
    for key, pool in POOLS.items():
        value = rng.choice(pool)
        if value is not None:
            raw[key] = value
    if rng.random() < 0.8:
        raw["gpu"] = {
            k: v
            for k, v in {
                "model": rng.choice(
                    ["T4", "L4", "A10G", "A100-40GB", "A100-80GB", "H100", "B200", "Trainium", None]
                ),
                "count": rng.choice([1, 8, 16, None]),
            }.items()
            if v is not None
        }
    if rng.random() < 0.7:
        raw["utilization"] = {
            k: rng.choice([0.0, 5, 9.99, 10, 49, 50, 90, None]) for k in ("gpu_avg", "gpu_p95")
        }
        raw["utilization"] = {k: v for k, v in raw["utilization"].items() if v is not None}
    if rng.random() < 0.6:
        raw["data"] = {
            "regions": rng.sample(["us-east-1", "us-west-2", "eu-west-1"], rng.randint(0, 2))
        }
    raw["tags"] = {
        k: rng.choice(["nlp", "vision", "", "alice"])
        for k in ("team", "project", "owner", "env")
        if rng.random() < 0.6
    }
    if rng.random() < 0.5:
        raw["hpo"] = {
            k: v
            for k, v in {
                "max_trials": rng.choice([10, 100, 500, None]),
                "early_stopping": rng.choice([True, False, None]),
            }.items()
            if v is not None
        }
    if rng.random() < 0.5:
        raw["limits"] = {"max_runtime_hours": rng.choice([1, 24, 100])}
    if rng.random() < 0.5:
        raw["checkpoint"] = {"uri": "s3://ckpt", "interval_minutes": rng.choice([10, 30, 60])}
    return from_mapping(raw)


def reference(where: Condition | None, require: Condition, resource: Resource) -> Any:
    if where is not None:
        scoped = where.test(resource)
        if scoped is False:
            return None
        if scoped is not True:
            return scoped
    verdict = require.test(resource)
    return None if verdict is True else verdict


def _rules() -> list[Any]:
    params = []
    for path in sorted((ROOT / "policies").rglob("*.yaml")):
        for rule in load_policy([str(path)]).rules:
            params.append(pytest.param(rule.where, rule.require, id=f"{path.stem}:{rule.info.id}"))
    for case in test_operator.pytestmark[0].args[1]:  # the operator table of test_conditions
        text = case[0]
        node = load_documents("t.yaml", text)[0].data
        condition = compile_condition(node, Located("t.yaml", "rule 't'"))
        params.append(pytest.param(None, condition, id=f"require {text}"))
        params.append(pytest.param(condition, condition, id=f"where+require {text}"))
    return params


RESOURCES = [random_resource(random.Random(seed), seed) for seed in range(400)]


@pytest.mark.parametrize(("where", "require"), _rules())
def test_generated_judge_matches_the_closures(where: Condition | None, require: Condition) -> None:
    judge = compile_judge(where, require)
    mismatches = [
        (r.id, judge(r), reference(where, require, r))
        for r in RESOURCES
        if judge(r) != reference(where, require, r)
        or type(judge(r)) is not type(reference(where, require, r))
    ]
    assert mismatches == [], judge.__doc__
