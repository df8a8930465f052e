"""Judge resources against compiled rules: findings, not-evaluated records and waiver states."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from gpu_audit.catalog import gpu_hour_price
from gpu_audit.catalog.enrich import HOURS_PER_MONTH
from gpu_audit.model import (
    Capacity,
    Finding,
    Kind,
    NotEvaluated,
    Resource,
    State,
    Waiver,
    WaiverState,
    WaiverStatus,
)
from gpu_audit.policy.conditions import Condition, Group, Leaf
from gpu_audit.policy.loader import CompiledWaiver, Policy, Rule

EXPIRING_WITHIN = timedelta(days=30)


@dataclass(frozen=True, slots=True)
class Evaluation:
    findings: tuple[Finding, ...]
    not_evaluated: tuple[NotEvaluated, ...]
    waivers: tuple[WaiverStatus, ...]


def evaluate(resources: Iterable[Resource], policy: Policy, now: datetime) -> Evaluation:
    """Every rule over every resource it targets; O(resources × rules) with compiled conditions."""
    plans = {
        kind: tuple(
            (
                rule,
                rule.info.id,
                rule.where.test if rule.where else None,
                rule.require.test,
                _downsize_target(rule),
            )
            for rule in policy.rules
            if kind in rule.info.targets
        )
        for kind in Kind
    }
    findings: list[Finding] = []
    not_evaluated: list[NotEvaluated] = []
    matched: dict[int, int] = {}
    waivers = bool(policy.waivers)
    for resource in resources:
        for rule, rule_id, where, require, downsize_to in plans[resource.kind]:
            if where is not None:
                scoped = where(resource)
                if scoped is False:
                    continue
                if scoped is not True:
                    not_evaluated.append(NotEvaluated(rule_id, resource, scoped))
                    continue
            verdict = require(resource)
            if verdict is True:
                continue
            if verdict is not False:
                not_evaluated.append(NotEvaluated(rule_id, resource, verdict))
                continue
            finding = _finding(rule, resource, downsize_to)
            findings.append(_waive(finding, policy, now, matched) if waivers else finding)
    statuses = tuple(
        WaiverStatus(w.waiver, waiver_state(w.waiver, now), matched.get(index, 0))
        for index, w in enumerate(policy.waivers)
    )
    return Evaluation(tuple(findings), tuple(not_evaluated), statuses)


def waiver_state(waiver: Waiver, now: datetime) -> WaiverState:
    if waiver.expires is None or waiver.expires >= now + EXPIRING_WITHIN:
        return WaiverState.ACTIVE
    return WaiverState.EXPIRING if waiver.expires >= now else WaiverState.EXPIRED


def _finding(rule: Rule, resource: Resource, downsize_to: str | None) -> Finding:
    line = resource.source.line
    if resource.source.key_lines:  # a job file: point at the offending key
        failures = rule.require.failures(resource)
        if failures:
            line = resource.source.key_lines.get(failures[0][0], line)
    info = rule.info
    return Finding(
        rule_id=info.id,
        severity=info.severity,
        title=info.title,
        resource=resource,
        requirement=rule.require,
        line=line,
        monthly_savings_usd=_savings(info.savings, resource, downsize_to),
        remediation=info.remediation,
        suppressed=_suppression(resource, info.id, info.aliases, line)
        if resource.source.suppressions
        else None,
    )


def _suppression(
    resource: Resource, rule_id: str, aliases: tuple[str, ...], line: int | None
) -> str | None:
    table = resource.source.suppressions
    if not table:
        return None
    for at in (line, resource.source.line):
        entries = table.get(at) if at is not None else None
        if not entries:
            continue
        for name in (rule_id, *aliases, "*"):
            if name in entries:
                return entries[name] or "suppressed inline"
    return None


def _waive(finding: Finding, policy: Policy, now: datetime, matched: dict[int, int]) -> Finding:
    if not policy.waivers or finding.suppressed is not None:
        return finding
    for index, compiled in enumerate(policy.waivers):
        if not _applies(compiled, finding):
            continue
        matched[index] = matched.get(index, 0) + 1
        expires = compiled.waiver.expires
        if expires is not None and expires < now:
            continue  # an expired waiver stops applying; the report lists it as expired
        return replace(finding, waiver=compiled.waiver)
    return finding


def _applies(compiled: CompiledWaiver, finding: Finding) -> bool:
    if finding.rule_id not in compiled.rules and "*" not in compiled.rules:
        return False
    return compiled.where is None or compiled.where.test(finding.resource) is True


def _savings(kind: str | None, resource: Resource, downsize_to: str | None) -> float | None:
    """Estimated monthly saving of acting on the finding, in USD; None when it can't be priced."""
    monthly = resource.monthly_cost_usd
    if kind is None or monthly is None:
        return None
    if kind == "stop":
        return monthly
    if kind == "spot":
        if resource.capacity is Capacity.SPOT:
            return 0.0
        on_demand, spot = resource.price.on_demand_hourly_usd, resource.price.spot_hourly_usd
        if on_demand is None or spot is None:
            return None
        if resource.state not in (State.RUNNING, State.PENDING, State.DEFINED, None):
            return 0.0
        return round(max(0.0, on_demand - spot) * HOURS_PER_MONTH, 2)
    if kind == "downsize":
        if downsize_to is None:
            return round(monthly * 0.5, 2)  # one size down: about half the GPUs or half the price
        target = gpu_hour_price(downsize_to)
        count = resource.gpu.count or 1
        if target is None or target.on_demand is None:
            return None
        per_hour = (
            target.spot if resource.capacity is Capacity.SPOT and target.spot else target.on_demand
        )
        return round(max(0.0, monthly - per_hour * count * HOURS_PER_MONTH), 2)
    return None


def _downsize_target(rule: Rule) -> str | None:
    if rule.downsize_to is not None:
        return rule.downsize_to
    if rule.info.savings != "downsize":
        return None
    return _at_most(rule.require)


def _at_most(condition: Condition) -> str | None:
    if isinstance(condition, Leaf):
        if condition.operator == "at-most" and condition.field.name == "gpu.model":
            return condition.operand_text
        return None
    if isinstance(condition, Group):
        for part in condition.parts:
            found = _at_most(part)
            if found:
                return found
    return None
