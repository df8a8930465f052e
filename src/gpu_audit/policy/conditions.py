"""Conditions compiled once into closures; evaluation is three-valued.

A compiled condition returns True, False, or the name of the missing field it needed (a `str`),
which means *unknown*: the rule is not evaluated for that resource. `all`/`any`/`not` follow
Kleene logic. Tags are the exception: a resource's tag map is complete, so a tag that is not set
is *absent* (a known state), never missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from gpu_audit.catalog import canonical_gpu
from gpu_audit.core.fields import FIELDS, FieldSpec, field_spec
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.core.yamlsrc import is_templated
from gpu_audit.errors import PolicyError, PolicyErrors
from gpu_audit.policy.operators import OPERATORS, SHORTHANDS, Test, Verdict

COMBINATORS = ("all", "any", "not")


@record
class Located:
    """Where a condition sits, for error messages: file, rule id and the mapping holding it."""

    path: str
    owner: str  # "rule 'idle-gpu'" or "waiver #2"

    def error(self, node: Any, key: Any, message: str) -> PolicyError:
        """A PolicyError located at `key`'s line in `node` (else the node's line, else the file
        alone), naming the rule."""
        items = getattr(node, "item_lines", None)
        if hasattr(node, "line_of"):
            line = node.line_of(key)
        elif items is not None and isinstance(key, int) and 0 <= key < len(items):
            line = items[key]
        else:
            line = getattr(node, "line", None)
        where = f"{self.path}:{line}" if line else self.path
        return PolicyError(f"{where}: {self.owner}: {key}: {message}")


class Condition:
    """A compiled condition: `test` decides, `explain` says what failed (only called on failure)."""

    __slots__ = ("fields", "test")

    def __init__(self, test: Test, fields: tuple[str, ...]) -> None:
        self.test = test
        self.fields = fields

    def describe(self) -> str:
        """The condition as the report words it (`gpu.count >= 8`)."""
        raise NotImplementedError

    def failures(self, resource: Resource) -> list[tuple[str, str, str]]:
        """(field, expected, actual) for each leaf that is False for this resource."""
        raise NotImplementedError


class Leaf(Condition):
    __slots__ = ("description", "field", "operand_text", "operator", "other", "shown")

    def __init__(
        self,
        test: Test,
        field: FieldSpec,
        operator: str,
        operand_text: str,
        other: FieldSpec | None,
        shown: Callable[[Any], str] | None = None,
    ) -> None:
        super().__init__(test, (field.name,) + ((other.name,) if other else ()))
        self.shown = shown or show  # the actual value as the rule states its operand (`13.9d`)
        self.field = field
        self.operator = operator
        self.operand_text = operand_text
        self.other = other
        if OPERATORS[operator].kind == "presence":
            self.description = f"{field.name} {operand_text}"
        else:
            symbol = OPERATORS[operator].symbol or operator
            self.description = f"{field.name} {symbol} {operand_text}"

    def describe(self) -> str:
        """The leaf condition's words, as compiled."""
        return self.description

    def failures(self, resource: Resource) -> list[tuple[str, str, str]]:
        if self.test(resource) is not False:
            return []
        return [self.failure(resource)]

    def failure(self, resource: Resource) -> tuple[str, str, str]:
        """(field, expected, actual) of a resource this leaf is known to fail."""
        value = self.field.getter(resource)
        actual = f"{self.field.name} {'absent' if value is None else '= ' + self.shown(value)}"
        if self.other is not None:
            actual += f" ({self.other.name} = {show(self.other.getter(resource))})"
        return (self.field.name, self.description, actual)


class Group(Condition):
    __slots__ = ("mode", "parts")

    def __init__(self, test: Test, mode: str, parts: tuple[Condition, ...]) -> None:
        fields = tuple(dict.fromkeys(f for part in parts for f in part.fields))
        super().__init__(test, fields)
        self.mode = mode
        self.parts = parts

    def describe(self) -> str:
        if self.mode == "not":
            return f"not ({self.parts[0].describe()})"
        joiner = " and " if self.mode == "all" else " or "
        return joiner.join(p.describe() for p in self.parts)

    def failures(self, resource: Resource) -> list[tuple[str, str, str]]:
        if self.mode == "not":
            return [(self.fields[0], self.describe(), "it holds")]
        found: list[tuple[str, str, str]] = []
        for part in self.parts:
            found.extend(part.failures(resource))
        if self.mode == "any" and found:
            return [(found[0][0], self.describe(), "; ".join(f[2] for f in found))]
        return found


def show(value: Any) -> str:
    """A value as the policy language writes it (`true`, not `True`)."""
    if value is None:
        return "missing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return ", ".join(map(show, value)) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _all(parts: tuple[Condition, ...]) -> Test:
    tests = tuple(p.test for p in parts)
    if len(tests) == 1:
        return tests[0]

    def run(resource: Resource) -> Verdict:
        unknown: str | None = None
        for test in tests:
            verdict = test(resource)
            if verdict is False:
                return False
            if verdict is not True and unknown is None:
                unknown = verdict
        return True if unknown is None else unknown

    return run


def _any(parts: tuple[Condition, ...]) -> Test:
    tests = tuple(p.test for p in parts)

    def run(resource: Resource) -> Verdict:
        unknown: str | None = None
        for test in tests:
            verdict = test(resource)
            if verdict is True:
                return True
            if verdict is not False and unknown is None:
                unknown = verdict
        return False if unknown is None else unknown

    return run


def _not(part: Condition) -> Test:
    test = part.test

    def run(resource: Resource) -> Verdict:
        verdict = test(resource)
        if verdict is True:
            return False
        if verdict is False:
            return True
        return verdict

    return run


def compile_condition(
    node: Any, where: Located, parent: Any = None, key: Any = "condition"
) -> Condition:
    """Compile a condition mapping (`{field: operand, all: [...], ...}`); errors are located,
    at the key holding the condition (`parent[key]`) when the condition itself has no line."""
    if not isinstance(node, Mapping) or not node:
        at = node if parent is None else parent
        raise where.error(at, key, "must be a non-empty mapping of field: value")
    parts: list[Condition] = []
    errors: list[str] = []  # every field's and operator's problem, not the first alone
    for key, value in node.items():
        try:
            parts.append(_compile_key(node, key, value, where))
        except PolicyError as exc:
            errors += messages_of(exc)
    if errors:
        raise PolicyErrors(errors) if len(errors) > 1 else PolicyError(errors[0])
    if len(parts) == 1:
        return parts[0]
    group = tuple(parts)
    return Group(_all(group), "all", group)


def messages_of(exc: PolicyError) -> list[str]:
    """The located lines of one error, or of every error it gathers."""
    return list(getattr(exc, "messages", None) or (str(exc),))


def _compile_key(node: Any, key: Any, value: Any, where: Located) -> Condition:
    if not isinstance(key, str):
        raise where.error(node, key, f"a field name must be text, got {key!r}")
    if key in ("all", "any"):
        if not isinstance(value, list) or not value:
            raise where.error(node, key, "takes a non-empty list of conditions")
        subs: list[Condition] = []
        errors: list[str] = []
        for index, item in enumerate(value):
            try:
                subs.append(compile_condition(item, where, value, index))
            except PolicyError as exc:
                errors += messages_of(exc)
        if errors:
            raise PolicyErrors(errors) if len(errors) > 1 else PolicyError(errors[0])
        test = _all(tuple(subs)) if key == "all" else _any(tuple(subs))
        return Group(test, key, tuple(subs))
    if key == "not":
        sub = compile_condition(value, where, node, key)
        return Group(_not(sub), "not", (sub,))
    return _compile_field(node, key, value, where)


def _compile_field(node: Any, name: str, operand: Any, where: Located) -> Condition:
    spec = field_spec(name)
    if spec is None:
        raise where.error(node, name, f"unknown field '{name}'{_suggest(name)}")
    if isinstance(operand, Mapping):
        if not operand:
            raise where.error(node, name, "empty operator mapping")
        leaves = []
        errors: list[str] = []
        for op, value in operand.items():
            try:
                if op not in OPERATORS:
                    message = f"unknown operator '{op}'{_suggest_op(str(op))}"
                    raise where.error(operand, op, message)
                leaves.append(_leaf(spec, str(op), value, (operand, op), where))
            except PolicyError as exc:
                errors += messages_of(exc)
        if errors:
            raise PolicyErrors(errors) if len(errors) > 1 else PolicyError(errors[0])
        if len(leaves) == 1:
            return leaves[0]
        group = tuple(leaves)
        return Group(_all(group), "all", group)
    if isinstance(operand, list):
        return _leaf(spec, "in", operand, (node, name), where)
    if isinstance(operand, str) and operand in SHORTHANDS:
        return _leaf(spec, operand, True, (node, name), where)  # `tags.owner: present`
    return _leaf(spec, "eq", operand, (node, name), where)


def _leaf(spec: FieldSpec, op: str, operand: Any, at: tuple[Any, Any], where: Located) -> Leaf:
    def fail(message: str) -> PolicyError:
        return where.error(at[0], at[1], message)

    get = spec.getter
    name = spec.name
    operator = OPERATORS[op]

    if operator.kind == "presence":
        if not isinstance(operand, bool):
            raise fail(f"'{op}' takes true or false")
        want_present = operand if op == "present" else not operand

        # `tags.*` templated: the format's tags are all given at launch (a Vertex CustomJobSpec's
        # `--labels` on the command line)
        wildcard = "tags.*" if name.startswith("tags.") else name

        def presence(resource: Resource) -> Verdict:
            value = get(resource)
            templated = resource.source.templated
            if value is None and (name in templated or wildcard in templated):
                return name  # set at deploy time: neither present nor absent here
            return (value is not None) is want_present

        return Leaf(presence, spec, op, "present" if want_present else "absent", None)

    assert operator.build is not None  # every non-presence operator builds a value test
    if operator.kind == "field":
        other = field_spec(str(operand)) if isinstance(operand, str) else None
        if other is None:
            raise fail(f"'{op}' takes a field name; unknown field '{operand}'")
        check = operator.build(spec, other, fail)
        other_get = other.getter
        other_name = other.name

        def compare(resource: Resource) -> Verdict:
            value = get(resource)
            if value is None:
                return name
            target = other_get(resource)
            if target is None:
                return other_name
            return check(value, target)

        return Leaf(compare, spec, op, str(operand), other)

    check = operator.build(spec, operand, fail)
    if isinstance(operand, list):
        text = "[" + ", ".join(map(show, operand)) + "]"
    elif spec.type == "gpu":
        text = canonical_gpu(str(operand)) or str(operand)
    else:
        text = show(operand)

    if spec.type == "list":

        def any_item(resource: Resource) -> Verdict:
            values = get(resource)
            if values is None:
                return name
            return any(check(v, None) is True for v in values)

        return Leaf(any_item, spec, op, text, None)

    if spec.type == "tag":  # a tag map is complete: an unset tag is absent, a known state

        def tag(resource: Resource) -> Verdict:
            value = get(resource)
            if value is not None and is_templated(value):
                return name  # `owner: ${NRP_USER}`: set, its value known only at deploy time
            return check(value, None)

        return Leaf(tag, spec, op, text, None)

    def simple(resource: Resource) -> Verdict:
        value = get(resource)
        if value is None:
            return name
        return check(value, None)

    return Leaf(simple, spec, op, text, None, _in_unit_of(spec, operand))


_HOURS_PER = {"m": 1 / 60, "h": 1.0, "d": 24.0}


def _in_unit_of(spec: FieldSpec, operand: Any) -> Callable[[Any], str] | None:
    """Show a duration field in the unit its rule wrote (`7d`: `uptime_hours = 13.9d`)."""
    suffix = operand.strip()[-1:] if isinstance(operand, str) else ""
    if not spec.unit or suffix not in _HOURS_PER or not operand.strip()[:-1].strip():
        return None
    per = _HOURS_PER[suffix] * (60 if spec.unit == "minutes" else 1)  # field units per suffix

    def shown(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return show(value)
        return f"{round(value / per, 1):g}{suffix}"

    return shown


def _suggest(name: str) -> str:
    from difflib import get_close_matches  # keeps difflib off check's start-up

    close = get_close_matches(name, list(FIELDS), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _suggest_op(name: str) -> str:
    from difflib import get_close_matches  # keeps difflib off check's start-up

    close = get_close_matches(name.strip(), [*OPERATORS, *COMBINATORS], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
