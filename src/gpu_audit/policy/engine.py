"""Judge resources against compiled rules: findings, not-evaluated records and waiver states."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from operator import attrgetter

from gpu_audit.core.fields import TAG_PREFIX, field_spec
from gpu_audit.core.frozen import record
from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.resource import Kind, Resource, State
from gpu_audit.core.results import Finding, NotEvaluated, Waiver, WaiverState, WaiverStatus
from gpu_audit.policy.conditions import Leaf
from gpu_audit.policy.loader import CompiledWaiver, Policy, Rule
from gpu_audit.policy.repeats import merge_repeats
from gpu_audit.policy.savings import (
    billed_saving,
    downsize_target,
    job_saving,
    rule_saving,
    run_saving,
    transfer_bound,
)

EXPIRING_WITHIN = timedelta(days=30)


@record
class Evaluation:
    """What evaluating a policy found."""

    findings: tuple[Finding, ...]
    not_evaluated: tuple[NotEvaluated, ...]
    waivers: tuple[WaiverStatus, ...]


class _Plan:
    """One rule, ready for the hot loop: its judge, its explanation and its savings."""

    __slots__ = ("aliases", "id", "info", "job_savings", "judge", "rule", "savings", "share")

    def __init__(self, rule: Rule) -> None:
        info = rule.info
        self.rule = rule
        self.id = info.id
        self.aliases = info.aliases
        self.judge = _judge(rule)
        target = downsize_target(rule)
        self.savings = rule_saving(info.savings, target)
        self.job_savings = job_saving(info.savings, target)
        self.share = transfer_bound(rule.require) if info.savings == "locality" else None
        self.info = info

    def finding(
        self,
        resource: Resource,
        explained: Explanation,
        line: int | None,
        suppressed: str | None = None,
    ) -> Finding:
        """The rule's finding on `resource`: the field, expected and actual value, its line, its
        saving (per period for a billed resource or a finished run, per run for a job file, else
        per month) and the severity (by that saving where the rule says so)."""
        info = self.info
        field, expected, actual = explained
        # A job file is priced per run, never per month; a running managed job (SageMaker,
        # Vertex) is live capacity, billed by the month like an instance.
        monthly: float | None
        if resource.kind is Kind.BILLED:  # dollars as billed over the period, never per month
            monthly, amount = None, billed_saving(info.savings, resource, self.share)
            unit = None if amount is None else "period"
        elif resource.kind is Kind.RESERVATION:  # its unused instances, to its end in the month
            unused = resource.reservation.unused_usd if info.savings == "stop" else None
            monthly = amount = unused
            unit = None if amount is None else "month"
        elif resource.kind is Kind.RUN:  # a finished run: what it spent in the period
            monthly, amount = None, run_saving(info.savings, resource)
            unit = None if amount is None else "period"
        elif resource.kind is Kind.JOB and resource.state is not State.RUNNING:
            amount, unit = self.job_savings(resource) if self.job_savings else (None, None)
            monthly = None
        else:
            monthly = amount = self.savings(resource) if self.savings else None
            unit = None if amount is None else "month"
        severity = info.severity_for(amount) if info.by_saving else info.severity
        return Finding(
            rule_id=info.id,
            severity=severity,
            title=info.title,
            resource=resource,
            field=field,
            expected=expected,
            actual=actual,
            line=line,
            monthly_savings_usd=monthly,
            remediation=info.remediation,
            suppressed=suppressed,
            saving_usd=amount,
            saving_unit=unit,
        )


def evaluate(resources: Iterable[Resource], policy: Policy, now: datetime) -> Evaluation:
    """Every rule over every resource it targets; O(resources × rules) with compiled conditions."""
    with paused_gc():
        return _evaluate(resources, policy, now)


def _evaluate(resources: Iterable[Resource], policy: Policy, now: datetime) -> Evaluation:
    plans = {
        kind: tuple(_Plan(rule) for rule in policy.rules if kind in rule.info.targets)
        for kind in Kind
    }
    findings: list[Finding] = []
    not_evaluated: list[NotEvaluated] = []
    matched: dict[int, int] = {}
    waivers = bool(policy.waivers)
    for resource in resources:
        for plan in plans[resource.kind]:
            verdict = plan.judge(resource)
            if verdict is None:
                continue
            if verdict.__class__ is str:
                not_evaluated.append(
                    NotEvaluated(rule_id=plan.id, resource=resource, missing=verdict)
                )
                continue
            explained: Explanation = verdict  # type: ignore[assignment]
            source = resource.source
            if source.key_lines or source.suppressions:
                finding = _job_finding(plan, resource, explained)
            else:  # an instance: no key lines, no inline comments (the common, hot case)
                finding = plan.finding(resource, explained, source.line)
            findings.append(_waive(finding, policy, now, matched) if waivers else finding)
    findings = merge_repeats(findings)
    statuses = tuple(
        WaiverStatus(
            waiver=w.waiver, state=waiver_state(w.waiver, now), matched=matched.get(index, 0)
        )
        for index, w in enumerate(policy.waivers)
    )
    return Evaluation(tuple(findings), tuple(not_evaluated), statuses)


Explanation = tuple[str | None, str, str]  # (field, expected, actual) of a finding
Judge = Callable[[Resource], "Explanation | str | None"]
_DISCRETE = frozenset(["enum", "str", "gpu", "bool", "tag", "list"])
_MEMO_LIMIT = 50_000  # distinct value combinations remembered per rule


def _judge(rule: Rule) -> Judge:
    """One call per rule and resource: None (out of scope, or passes), the missing field's name
    (not evaluated), or the finding's (field, expected, actual).

    A rule whose fields are all discrete (states, names, GPU classes, tags, bucket regions) gives
    the same verdict and explanation for the same values, and a fleet repeats a few hundred
    combinations of them: such rules look the answer up by those values, worked out once each.
    """
    scope, require = rule.where, rule.require
    leaf = require.failure if isinstance(require, Leaf) else None

    def judge(resource: Resource) -> Explanation | str | None:
        if scope is not None:
            verdict = scope.test(resource)
            if verdict is False:
                return None
            if verdict is not True:
                return verdict
        verdict = require.test(resource)
        if verdict is True:
            return None
        if verdict is not False:
            return verdict
        if leaf is not None:  # most rules require one thing: it is known to fail
            return leaf(resource)
        failures = require.failures(resource)
        if len(failures) > 1 and all(
            f[1:] == (f"{f[0]} present", f"{f[0]} absent") for f in failures
        ):
            names = ", ".join(f[0] for f in failures)  # the missing keys (tags), named once each
            return (failures[0][0], f"{names} present", f"{names} absent")
        return (
            failures[0][0] if failures else None,
            "; ".join(f[1] for f in failures) or require.describe(),
            "; ".join(f[2] for f in failures) or "condition does not hold",
        )

    names = set(require.fields) | set(scope.fields if scope else ())
    specs = [field_spec(name) for name in sorted(names)]
    if not all(spec is not None and spec.type in _DISCRETE for spec in specs):
        return judge
    attrs = [name for name in sorted(names) if not name.startswith(TAG_PREFIX)]
    tag_keys = tuple(
        name[len(TAG_PREFIX) :] for name in sorted(names) if name.startswith(TAG_PREFIX)
    )
    values = attrgetter(*attrs) if attrs else None
    memo: dict[object, Explanation | str | None] = {}

    def remembered(resource: Resource) -> Explanation | str | None:
        base = values(resource) if values is not None else None
        key = (base, *map(resource.tags.get, tag_keys)) if tag_keys else base
        if resource.source.templated:  # a field set at deploy time is not evaluated, not absent
            key = (key, resource.source.templated)
        try:
            return memo[key]
        except KeyError:
            verdict = judge(resource)
            if len(memo) < _MEMO_LIMIT:
                memo[key] = verdict
            return verdict

    return remembered


def waiver_state(waiver: Waiver, now: datetime) -> WaiverState:
    """ACTIVE for a waiver without an expiry or further off than EXPIRING_WITHIN, EXPIRING until it
    expires, then EXPIRED."""
    if waiver.expires is None or waiver.expires - now >= EXPIRING_WITHIN:  # no overflow at 9999
        return WaiverState.ACTIVE
    return WaiverState.EXPIRING if waiver.expires >= now else WaiverState.EXPIRED


def _job_finding(plan: _Plan, resource: Resource, explained: Explanation) -> Finding:
    """A finding in a job file points at the offending key and honours inline suppressions."""
    source = resource.source
    line = source.line
    suppressed = None
    field = explained[0]
    if source.key_lines and field is not None:  # a job file: point at the offending key
        fallback = line
        if field.startswith(TAG_PREFIX):  # a tag no key states: the resource's own line
            fallback = source.key_lines.get("tags", line)
        line = source.key_lines.get(field, fallback)
    if source.suppressions:
        suppressed = _suppression(resource, plan.id, plan.aliases, line)
    return plan.finding(resource, explained, line, suppressed)


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
