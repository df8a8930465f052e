"""Load policy files: YAML with lines → JSON Schema → semantic compile; `extends:` layers files.

Validation runs in layers, as in Cloud Custodian: structure (the JSON Schema), then operators and
values (compiling each condition), then the policy as a whole (duplicate ids, waivers naming rules
that do not exist). Every error is one line: `file:line: rule 'id': key: message`.
"""

from __future__ import annotations

import binascii
import os
from dataclasses import field
from datetime import UTC, date, datetime
from typing import Any

from gpu_audit.catalog import canonical_gpu
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Kind, Severity
from gpu_audit.core.results import RuleInfo, Waiver
from gpu_audit.core.yamlsrc import LineMap, load_documents, read_text
from gpu_audit.errors import InputError, PolicyError, PolicyErrors
from gpu_audit.policy.conditions import Condition, Located, compile_condition, messages_of
from gpu_audit.policy.structure import (
    did_you_mean,
    key_problems,
    plain,
    schema_problems,
    shown,
)
from gpu_audit.policy.validated import SHIPPED, known_valid, remember_valid, validation_key

BUILTIN_PACKS = ("runbook",)


@record
class Rule:
    """A compiled rule: its conditions and what a finding says."""

    info: RuleInfo
    where: Condition | None
    require: Condition
    downsize_to: str | None  # the GPU class a `downsize` saving is priced against


@record
class CompiledWaiver:
    """A waiver with its scope compiled."""

    waiver: Waiver
    rules: frozenset[str]  # rule ids; "*" waives every rule
    where: Condition | None


@record
class Policy:
    """The compiled rules and waivers of the layered policy files."""

    rules: tuple[Rule, ...]
    waivers: tuple[CompiledWaiver, ...]
    files: tuple[str, ...]
    versions: tuple[str, ...]
    aliases: dict[str, str]  # an old rule id → its current id


@record(frozen=False)
class _Layer:
    """The policy being built, file by file."""

    rules: dict[str, Rule]
    waivers: list[CompiledWaiver]
    files: list[str]
    versions: list[str]
    errors: list[str] = field(default_factory=list)  # every problem, one located line each
    declared: set[str] = field(default_factory=set)  # rule ids written, compiled or not
    # the rules a waiver that failed to compile names (`path:line`, ids): still checked, so an
    # unknown one is said in the same run as the waiver's other mistakes
    named: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


_HERE = os.path.dirname(os.path.abspath(__file__))


def builtin_pack_path(name: str) -> str:
    """The shipped pack: inside the wheel, or `policies/` beside `src/` in a checkout."""
    packaged = os.path.join(_HERE, os.pardir, "policies", f"{name}.yaml")
    if os.path.isfile(packaged):
        return os.path.normpath(packaged)
    checkout = os.path.join(_HERE, os.pardir, os.pardir, os.pardir, "policies", f"{name}.yaml")
    return os.path.normpath(checkout)


def policy_path(given: str) -> str:
    """The file a `--policy` or `policies:` entry names: a shipped pack by its name (`runbook`,
    as `extends:` takes it), else the path as given."""
    return builtin_pack_path(given) if given in BUILTIN_PACKS else given


def load_policy(paths: list[str] | tuple[str, ...] | None) -> Policy:
    """Load and layer policy files in order (a shipped pack by its name, as `extends:` takes
    it); with none given, the shipped runbook pack."""
    layer = _Layer({}, [], [], [])
    for path in map(policy_path, paths or ["runbook"]):
        try:
            _apply_file(layer, path, stack=())
        except PolicyError as exc:  # a file that cannot be read at all: the others still are
            layer.errors.append(str(exc))
    aliases: dict[str, str] = {}
    for rule in layer.rules.values():
        for alias in rule.info.aliases:
            aliases[alias] = rule.info.id
    known = set(layer.rules) | set(aliases)
    declared = known | layer.declared  # a rule that failed to compile has its own error
    named = [(w.waiver.source, tuple(w.rules)) for w in layer.waivers] + layer.named
    for source, rules in named:
        for name in sorted(r for r in rules if r != "*" and r not in declared):
            layer.errors.append(
                f"{source}: waiver: rule: unknown rule '{shown(name)}'"
                f"{did_you_mean(name, declared)}"
            )
    if layer.errors:
        raise PolicyErrors(in_line_order(layer.errors))
    waivers = tuple(
        CompiledWaiver(w.waiver, frozenset(aliases.get(r, r) for r in w.rules), w.where)
        for w in layer.waivers
    )
    return Policy(
        tuple(layer.rules.values()), waivers, tuple(layer.files), tuple(layer.versions), aliases
    )


def in_line_order(errors: list[str]) -> list[str]:
    """Each file's errors by line (files in the order first named); unlocated ones keep their
    place after their file's."""
    files: dict[str, int] = {}
    keyed = []
    for index, message in enumerate(errors):
        path, line = _located(message)
        rank = files.setdefault(path, len(files))
        keyed.append((rank, line, index, message))
    return [message for *_, message in sorted(keyed)]


def _located(message: str) -> tuple[str, int]:
    """(`path`, line) of `path:line: …` or `path:line:col: …`; unlocated: after the rest."""
    import re  # an error's path only

    found = re.match(r"(.*?):(\d+)(?::\d+)?: ", message)
    if found is None:
        return message.partition(": ")[0], 1 << 30
    return found[1], int(found[2])


def _resolve(base: str, relative_to: str) -> str:
    if base in BUILTIN_PACKS:
        return builtin_pack_path(base)
    return os.path.join(os.path.dirname(relative_to), base)


def _apply_file(layer: _Layer, path: str, stack: tuple[str, ...]) -> None:
    """Layer one file (its bases first); every problem found goes to `layer.errors`, and the
    rest of the file is still checked."""
    real = os.path.realpath(path)
    if real in stack:
        raise PolicyError(f"{path}: extends: circular extends ({' → '.join([*stack, real])})")
    data, digest, problems = _read_policy(path)
    layer.errors.extend(message for _, message in problems)
    bad = {at[:2] if at[:1] in (("rules",), ("waivers",)) else at[:1] for at, _ in problems}
    if ("extends",) not in bad:
        _extend(layer, path, data, (*stack, real))
    for rule_id in data.get("disable") or [] if ("disable",) not in bad else []:
        if rule_id not in layer.rules:
            line = data.line_of("disable")
            hint = did_you_mean(rule_id, layer.rules)
            layer.errors.append(
                f"{path}:{line}: policy: disable: unknown rule '{shown(rule_id)}'{hint}"
            )
            continue
        del layer.rules[rule_id]
    seen: dict[str, int] = {}
    for index, raw in enumerate(data.get("rules") or [] if ("rules",) not in bad else []):
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            layer.declared.add(raw["id"])
        if ("rules", index) in bad:  # its keys the schema named are not said twice
            said = {_key_of(m) for m in layer.errors}
            layer.errors += [m for m in _condition_problems(path, raw) if _key_of(m) not in said]
            continue
        try:
            rule = _compile_rule(path, raw)
        except PolicyError as exc:
            layer.errors += messages_of(exc)
            continue
        if rule.info.id in seen:
            layer.errors.append(
                f"{path}:{raw.line_of('id')}: rule '{rule.info.id}': id: duplicate id "
                f"(first defined on line {seen[rule.info.id]})"
            )
        seen[rule.info.id] = raw.line_of("id")
        layer.rules[rule.info.id] = rule  # a later layer's rule replaces a base rule's
    waivers = data.get("waivers") or [] if ("waivers",) not in bad else []
    for index, raw in enumerate(waivers, start=1):
        if ("waivers", index - 1) in bad:
            layer.named += _waiver_rules(path, raw)
            continue
        try:
            layer.waivers.append(_compile_waiver(path, index, raw))
        except PolicyError as exc:
            layer.errors += messages_of(exc)
            layer.named += _waiver_rules(path, raw)
    layer.files.append(path)
    revision = data.get("revision")
    layer.versions.append(f"{os.path.basename(path)}@{revision if revision else digest}")


def _extend(layer: _Layer, path: str, data: LineMap, stack: tuple[str, ...]) -> None:
    extends = data.get("extends") or []
    line = data.line_of("extends")
    for base in [extends] if not isinstance(extends, list) else extends:
        if not isinstance(base, str):  # `extends: 2026-01-01`: YAML read a date
            kind = "a date" if isinstance(base, date) else type(base).__name__
            layer.errors.append(
                f"{path}:{line}: policy: extends: expected a pack name or a policy file, got "
                f"{kind} '{shown(base)}' (quote it)"
            )
            continue
        target = _resolve(base, path)
        if not os.path.isfile(target):
            what = "not a policy file" if os.path.exists(target) else "no policy file"
            hint = did_you_mean(base, BUILTIN_PACKS) or f" (the packs: {', '.join(BUILTIN_PACKS)})"
            layer.errors.append(f"{path}:{line}: policy: extends: {what} '{shown(base)}'{hint}")
            continue
        _apply_file(layer, target, stack)


def content_key(text: str) -> str:
    """A short key for a file's content: names the policy version in reports (CRC-32 and
    length; the validation cache has its own key, `validated.validation_key`)."""
    data = text.encode("utf-8")
    return f"{binascii.crc32(data):08x}{len(data):x}"  # zlib's CRC-32; binascii is loaded


def _read_policy(path: str) -> tuple[LineMap, str, list[tuple[tuple[Any, ...], str]]]:
    """The file's mapping, its content key, and its structure problems (where, message)."""
    try:
        text = read_text(path)
    except InputError as exc:
        raise PolicyError(str(exc)) from exc
    key = validation_key(text)
    # Never from a cache: one written by anyone could change the rules. A shipped pack's text
    # is known to nest shallowly and to key every mapping by text (the test suite checks both:
    # tests/policy/test_validated.py), so neither is scanned again.
    shipped = key in SHIPPED
    data = _parse(path, text, shipped=shipped)
    problems = [] if shipped else key_problems(path, data)
    if not known_valid(key):  # the schema, for a policy this version has not seen pass
        keyed = {at for at, _ in problems}
        problems += [p for p in schema_problems(path, data) if p[0] not in keyed]
        if not problems:
            remember_valid(key)
    return data, content_key(text), problems


def _parse(path: str, text: str, shipped: bool = False) -> LineMap:
    try:
        documents = load_documents(path, text, depth_known=shipped, lenient_dates=True)
    except InputError as exc:
        raise PolicyError(str(exc)) from exc
    if len(documents) != 1 or not isinstance(documents[0].data, LineMap):
        raise PolicyError(
            f"{path}:1: policy: expected one YAML mapping with 'version: 1' and 'rules'"
        )
    return documents[0].data


# -- semantics ---------------------------------------------------------------------------------


def _text(raw: LineMap, key: str, located: Located) -> str | None:
    """A text value of a rule or waiver; a date, number or list where text belongs is an error
    (YAML reads `title: 2026-01-01` as a date: quote it)."""
    value = raw.get(key)
    if value is None or isinstance(value, str):
        return value
    kind = {date: "a date", datetime: "a date", bool: "true/false", list: "a list"}
    got = kind.get(type(value), f"{type(value).__name__} {value!r}")
    raise located.error(raw, key, f"expected text, got {got} (quote it)")


def _compile_rule(path: str, raw: LineMap) -> Rule:
    rule_id = raw["id"]
    where = Located(path, f"rule '{rule_id}'")
    for key in ("id", "title", "remediation", "description"):
        _text(raw, key, where)
    aliases = tuple(raw.get("aliases") or ())
    for index, alias in enumerate(aliases):
        if not isinstance(alias, str):
            raise where.error(raw, "aliases", f"expected text, got {alias!r}")
        if alias in aliases[:index] or alias == rule_id:
            raise where.error(raw, "aliases", f"duplicate alias '{alias}'")
    savings = raw.get("savings")
    downsize_to: str | None = None
    if isinstance(savings, dict):
        target = canonical_gpu(savings["downsize"])
        if target is None:
            raise where.error(raw, "savings", f"unknown GPU class '{savings['downsize']}'")
        downsize_to, savings = target, "downsize"
    info = RuleInfo(
        id=rule_id,
        title=raw.get("title") or rule_id,
        severity=Severity.parse(raw["severity"]),
        targets=tuple(Kind(t) for t in raw.get("targets") or ("instance", "job")),
        remediation=raw.get("remediation"),
        savings=savings,
        description=raw.get("description"),
        source=f"{path}:{raw.line}",
        aliases=aliases,
        by_saving=tuple(
            sorted(
                (
                    (Severity.parse(k), float(v))
                    for k, v in (raw.get("severity-by-saving") or {}).items()
                ),
                reverse=True,
            )
        ),
    )
    scope, require = _conditions(raw, where)
    return Rule(info, scope, require, downsize_to)


def _conditions(raw: LineMap, where: Located) -> tuple[Condition | None, Condition]:
    """The rule's `where` and `require`; the problems of both, every one, when either has any."""
    compiled: dict[str, Condition] = {}
    errors: list[str] = []
    for key in ("where", "require"):
        if key in raw:
            try:
                compiled[key] = compile_condition(raw[key], where, raw, key)
            except PolicyError as exc:
                errors += messages_of(exc)
    if errors:
        raise PolicyErrors(errors) if len(errors) > 1 else PolicyError(errors[0])
    return compiled.get("where"), compiled["require"]


def _key_of(message: str) -> str:
    """`path:line: rule 'x': key` of a located message: what it is about."""
    return ": ".join(message.split(": ", 3)[:3]).lower()  # YAML `true`, Python `True`


def _condition_problems(path: str, raw: Any) -> list[str]:
    """A rule the schema refused (a misspelt severity, say) still has its fields and operators
    checked, so one run reports them too."""
    if not isinstance(raw, LineMap) or not isinstance(raw.get("require"), dict):
        return []
    located = Located(path, f"rule '{shown(raw.get('id'))}'")
    try:
        _conditions(raw, located)
    except PolicyError as exc:
        return messages_of(exc)
    return []


def _waiver_rules(path: str, raw: Any) -> list[tuple[str, tuple[str, ...]]]:
    """The rule ids a waiver names, where it names them as text (for the unknown-rule check)."""
    if not isinstance(raw, LineMap):
        return []
    rules = raw.get("rule")
    ids = [rules] if isinstance(rules, str) else rules if isinstance(rules, list) else []
    names = tuple(r for r in ids if isinstance(r, str))
    return [(f"{path}:{raw.line}", names)] if names else []


def _compile_waiver(path: str, index: int, raw: LineMap) -> CompiledWaiver:
    located = Located(path, f"waiver #{index}")
    for key in ("reason", "owner"):
        _text(raw, key, located)
    rules = raw["rule"]
    for rule in [rules] if not isinstance(rules, list) else rules:
        if not isinstance(rule, str):
            raise located.error(raw, "rule", f"expected a rule id, got {rule!r} (quote it)")
    expires = _expiry(raw.get("expires"))
    if expires is None:
        raise located.error(
            raw, "expires", f"expected a date (YYYY-MM-DD), got '{raw.get('expires')}'"
        )
    waiver = Waiver(
        rule=rules if isinstance(rules, str) else ",".join(rules),
        reason=raw["reason"],
        owner=raw["owner"],
        expires=expires,
        where=plain(raw.get("where") or {}),
        source=f"{path}:{raw.line}",
    )
    scope = compile_condition(raw["where"], located, raw, "where") if "where" in raw else None
    ids = frozenset([rules] if isinstance(rules, str) else rules)
    return CompiledWaiver(waiver, ids, scope)


def _expiry(value: Any) -> datetime | None:
    """A waiver expires at the end of its `expires` day (UTC)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, 23, 59, 59, tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = date.fromisoformat(value)
        except ValueError:
            return None
        return datetime(parsed.year, parsed.month, parsed.day, 23, 59, 59, tzinfo=UTC)
    return None
