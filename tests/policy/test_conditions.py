"""Every operator, three-valued logic, durations and GPU class ordering, on compiled conditions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpu_audit.core.canonical import from_mapping
from gpu_audit.core.yamlsrc import load_documents
from gpu_audit.errors import PolicyError
from gpu_audit.policy.conditions import Located, compile_condition
from gpu_audit.policy.operators import OPERATORS

BASE: dict[str, Any] = {
    "kind": "instance",
    "provider": "aws",
    "id": "i-1",
    "region": "us-east-1",
    "instance_type": "p4d.24xlarge",
    "state": "running",
    "capacity": "on-demand",
    "gpu": {"model": "A100-40GB", "count": 8},
    "tags": {"team": "nlp", "env": "prod"},
    "uptime_hours": 30,
    "utilization": {"gpu_avg": 40.0, "gpu_p95": 85.0},
    "data": {"uris": ["s3://corpus/a"], "regions": ["us-east-1", "us-west-2"]},
}
RESOURCE = from_mapping(BASE)


def judge(text: str, resource: Any = RESOURCE) -> Any:
    node = load_documents("t.yaml", text)[0].data
    return compile_condition(node, Located("t.yaml", "rule 't'")).test(resource)


@pytest.mark.parametrize(
    ("condition", "verdict"),
    [
        ("capacity: on-demand", True),
        ("capacity: spot", False),
        ("capacity: {eq: on-demand}", True),
        ("capacity: {ne: spot}", True),
        ("capacity: [spot, reserved]", False),
        ("capacity: {in: [spot, on-demand]}", True),
        ("capacity: {not-in: [spot, reserved]}", True),
        ("gpu.count: {lt: 8}", False),
        ("gpu.count: {lte: 8}", True),
        ("gpu.count: {gt: 4, lt: 16}", True),
        ("gpu.count: {gte: 9}", False),
        ("uptime_hours: {gte: 24h}", True),
        ("uptime_hours: {gte: 2d}", False),
        ("uptime_hours: {lt: 1800m}", False),
        ("instance_type: {regex: '^p4d?\\.'}", True),
        ("instance_type: {glob: 'p4*.24xlarge'}", True),
        ("instance_type: {glob: 'g5.*'}", False),
        ("gpu.model: {at-most: A100-80GB}", True),
        ("gpu.model: {at-most: L4}", False),
        ("gpu.model: {at-least: nvidia-tesla-v100}", True),
        ("gpu.model: nvidia-tesla-a100", True),
        ("gpu.model: {in: [H100, NVIDIA_A100_80GB]}", False),
        ("region: {in-field: data.regions}", True),
        ("zone: {eq-field: region}", "zone"),
        ("utilization.gpu_avg: {lt-field: utilization.gpu_p95}", True),
        ("utilization.gpu_avg: {lte-field: utilization.gpu_p95}", True),
        ("utilization.gpu_avg: {gt-field: utilization.gpu_p95}", False),
        ("utilization.gpu_avg: {gte-field: utilization.gpu_p95}", False),
        ("uptime_hours: {gt-field: limits.max_runtime_hours}", "limits.max_runtime_hours"),
        # the c7n shorthand: a bare present/absent is the operator, for every field
        ("tags.team: present", True),
        ("tags.owner: present", False),
        ("tags.owner: absent", True),
        ("utilization.gpu_avg: present", True),
        ("utilization.window_hours: absent", True),
        ("checkpoint.uri: present", False),
        ("capacity: present", True),
        ("tags.team: {eq: present}", False),
        ("utilization.gpu_avg: {present: true}", True),
        ("utilization.window_hours: {present: true}", False),
        ("utilization.window_hours: {absent: true}", True),
        ("data.uris: {glob: 's3://corpus/*'}", True),
        ("tags.team: nlp", True),
        ("tags.owner: {present: true}", False),
        # a tag map is complete: an unset tag is absent (known), never missing
        ("tags.owner: alice", False),
        ("tags.owner: {ne: alice}", True),
        # any other operator on a missing field is unknown: the field's name comes back
        ("utilization.window_hours: {gte: 1}", "utilization.window_hours"),
        ("launched_at: {lt: 2026-01-01}", "launched_at"),
        # Kleene logic
        ("{all: [{capacity: spot}, {zone: x}]}", False),
        ("{all: [{capacity: on-demand}, {zone: x}]}", "zone"),
        ("{any: [{capacity: on-demand}, {zone: x}]}", True),
        ("{any: [{capacity: spot}, {zone: x}]}", "zone"),
        ("{not: {capacity: spot}}", True),
        ("{not: {zone: x}}", "zone"),
    ],
)
def test_operator(condition: str, verdict: Any) -> None:
    assert judge(condition) == verdict


def test_off_ladder_accelerators_are_unknown_to_class_order() -> None:
    trainium = from_mapping({**BASE, "gpu": {"model": "Trainium", "count": 16}})
    verdict = judge("gpu.model: {at-most: H100}", trainium)
    assert isinstance(verdict, str) and verdict.startswith("gpu.model")
    assert judge("gpu.model: Trainium", trainium) is True


def test_every_operator_is_exercised_above() -> None:
    source = Path(__file__).read_text()
    unused = [op for op in OPERATORS if op != "eq" and f"{op}:" not in source]
    assert unused == []


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (
            "capacity: {'gte ': 1}",
            "t.yaml:1: rule 't': gte : unknown operator 'gte ' (did you mean 'gte'?)",
        ),
        ("capacity: {gtee: 1}", "unknown operator 'gtee' (did you mean 'gte'?)"),
        ("region: {lt-field: zone}", "'lt-field' compares two number or date fields"),
        (
            "capcity: spot",
            "t.yaml:1: rule 't': capcity: unknown field 'capcity' (did you mean 'capacity'?)",
        ),
        ("capacity: spto", "capacity: 'spto' is not one of on-demand, reserved, spot, unknown"),
        ("gpu.model: {at-most: A100-90GB}", "at-most: unknown GPU class 'A100-90GB'"),
        ("gpu.model: {at-most: Trainium}", "outside the GPU class ladder"),
        ("region: {at-most: H100}", "'at-most' applies to gpu.model only"),
        ("gpu.count: {gte: lots}", "expected a number, got 'lots'"),
        ("gpu.count: {gte: 3h}", "'gpu.count' is not a duration"),
        ("uptime_hours: {gte: soon}", "expected a number or a duration like 30m, 24h, 7d"),
        ("region: {gt: 3}", "'gt' needs a number or date field"),
        ("instance_type: {regex: '('}", "invalid regex"),
        ("region: {in-field: data.regionz}", "unknown field 'data.regionz'"),
        ("tags.team: {present: yes please}", "'present' takes true or false"),
        ("{all: []}", "takes a non-empty list"),
    ],
)
def test_compile_errors_are_located(condition: str, message: str) -> None:
    with pytest.raises(PolicyError) as raised:
        judge(condition)
    assert message in str(raised.value)
    assert str(raised.value).startswith("t.yaml:1: rule 't': ")


def test_failures_explain_expected_and_actual() -> None:
    node = load_documents("t.yaml", "capacity: {in: [spot, reserved]}")[0].data
    condition = compile_condition(node, Located("t.yaml", "rule 't'"))
    [(field, expected, actual)] = condition.failures(RESOURCE)
    assert field == "capacity"
    assert expected == "capacity in [spot, reserved]"
    assert actual == "capacity = on-demand"
