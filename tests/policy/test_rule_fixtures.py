"""Rule behaviour as data: every case in fixtures/rules/*.yaml against the shipped runbook pack."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_audit.catalog.enrich import enrich
from gpu_audit.core.canonical import from_mapping, parse_time
from gpu_audit.policy.engine import evaluate
from gpu_audit.policy.loader import Policy, load_policy
from tests.conftest import FIXTURES, NOW

RULES_DIR = FIXTURES / "rules"
PACK = load_policy(None)


def _cases() -> list[Any]:
    params = []
    for path in sorted(RULES_DIR.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        for case in spec["cases"]:
            params.append(pytest.param(path, spec, case, id=f"{spec['rule']}: {case['name']}"))
    return params


def _resource(spec: dict[str, Any], case: dict[str, Any]) -> Any:
    merged = {**spec.get("base", {}), **case.get("resource", {})}
    resource = from_mapping({k: v for k, v in merged.items() if v is not None})
    if case.get("templated"):  # fields a job file fills in at deploy time (`${VAR}`)
        source = replace(resource.source, templated=frozenset(case["templated"]))
        resource = replace(resource, source=source)
    return resource


def _outcome(policy: Policy, resource: Any, now: Any) -> tuple[str, Any]:
    rule = policy.rules[0]
    result = evaluate([resource], policy, now)
    if result.findings:
        return "fail", result.findings[0].field
    if result.not_evaluated:
        return "not-evaluated", result.not_evaluated[0].missing
    if rule.where is not None and rule.where.test(resource) is False:
        return "out-of-scope", None
    if resource.kind not in rule.info.targets:
        return "out-of-scope", None
    return "pass", None


@pytest.mark.parametrize(("path", "spec", "case"), _cases())
def test_rule_case(path: Path, spec: dict[str, Any], case: dict[str, Any]) -> None:
    rules = tuple(r for r in PACK.rules if r.info.id == spec["rule"])
    assert rules, f"{path.name}: no rule '{spec['rule']}' in the runbook pack"
    policy = Policy(rules, (), (), (), {})
    when = case.get("now", spec.get("now"))  # a case may judge at its own date
    now = parse_time("now", when) if when else NOW
    resource = enrich(_resource(spec, case), now)
    outcome, detail = _outcome(policy, resource, now)
    assert outcome == case["expect"], f"{case['name']}: got {outcome} ({detail})"
    if case["expect"] == "fail" and "field" in case:
        assert detail == case["field"]
    if case["expect"] == "not-evaluated" and "missing" in case:
        assert detail == case["missing"]


def test_every_pack_rule_has_pass_fail_and_not_evaluated_cases() -> None:
    missing = []
    for rule in PACK.rules:
        path = RULES_DIR / f"{rule.info.id}.yaml"
        if not path.exists():
            missing.append(f"{rule.info.id}: no fixture file")
            continue
        expects = {c["expect"] for c in yaml.safe_load(path.read_text())["cases"]}
        for needed in ("pass", "fail", "not-evaluated"):
            if needed not in expects:
                missing.append(f"{rule.info.id}: no '{needed}' case")
    assert missing == []


def test_no_fixture_names_a_rule_the_pack_lacks() -> None:
    ids = {r.info.id for r in PACK.rules}
    strays = [p.name for p in RULES_DIR.glob("*.yaml") if p.stem not in ids]
    assert strays == []
