"""Conditions compiled once into closures; evaluation is three-valued.

A compiled condition returns True, False, or the name of the missing field it needed (a `str`),
which means *unknown*: the rule is not evaluated for that resource. `all`/`any`/`not` follow
Kleene logic. Tags are the exception: a resource's tag map is complete, so a tag that is not set
is *absent* (a known state), never missing.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from gpu_audit.catalog import canonical_gpu, gpu_class
from gpu_audit.catalog.gpus import ladder
from gpu_audit.errors import PolicyError
from gpu_audit.model import Resource
from gpu_audit.policy.fields import FieldSpec, field_spec

Verdict = bool | str  # True, False, or the missing field (unknown)
Test = Callable[[Resource], Verdict]

COMBINATORS = ("all", "any", "not")
OPERATORS: dict[str, str] = {
    "eq": "equals the value (a plain scalar means the same)",
    "ne": "differs from the value",
    "in": "is one of the listed values (a plain list means the same)",
    "not-in": "is none of the listed values",
    "lt": "is less than the number or duration",
    "lte": "is at most the number or duration",
    "gt": "is greater than the number or duration",
    "gte": "is at least the number or duration",
    "regex": "matches the regular expression anywhere (Python `re.search`)",
    "glob": "matches the shell-style pattern (`p4d.*`)",
    "present": "is known (`present: true`) or missing (`present: false`)",
    "absent": "is missing (`absent: true`)",
    "at-most": "GPU class is at most this class on the ladder (gpu.model only)",
    "at-least": "GPU class is at least this class on the ladder (gpu.model only)",
    "in-field": "is one of the values of another (list) field: `region: {in-field: data.regions}`",
    "eq-field": "equals another field: `region: {eq-field: checkpoint.region}`",
}
_ORDERING = {"lt", "lte", "gt", "gte"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhd])\s*$")
_UNIT_HOURS = {"m": 1 / 60, "h": 1.0, "d": 24.0}
_RANKS = {g.name: g.rank for g in ladder()}


@dataclass(frozen=True, slots=True)
class Located:
    """Where a condition sits, for error messages: file, rule id and the mapping holding it."""

    path: str
    owner: str  # "rule 'idle-gpu'" or "waiver #2"

    def error(self, node: Any, key: Any, message: str) -> PolicyError:
        line = node.line_of(key) if hasattr(node, "line_of") else getattr(node, "line", None)
        where = f"{self.path}:{line}" if line else self.path
        return PolicyError(f"{where}: {self.owner}: {key}: {message}")


class Condition:
    """A compiled condition: `test` decides, `explain` says what failed (only called on failure)."""

    __slots__ = ("fields", "test")

    def __init__(self, test: Test, fields: tuple[str, ...]) -> None:
        self.test = test
        self.fields = fields

    def describe(self) -> str:
        raise NotImplementedError

    def failures(self, resource: Resource) -> list[tuple[str, str, str]]:
        """(field, expected, actual) for each leaf that is False for this resource."""
        raise NotImplementedError


class Leaf(Condition):
    __slots__ = ("description", "field", "operand_text", "operand_value", "operator", "other")

    def __init__(
        self,
        test: Test,
        field: FieldSpec,
        operator: str,
        operand_text: str,
        other: FieldSpec | None,
    ) -> None:
        super().__init__(test, (field.name,) + ((other.name,) if other else ()))
        self.field = field
        self.operator = operator
        self.operand_text = operand_text
        self.operand_value: Any = None  # the compiled operand, for code generation
        self.other = other
        symbol = {"eq": "=", "ne": "≠", "lt": "<", "lte": "≤", "gt": ">", "gte": "≥"}
        if operator in ("present", "absent"):
            self.description = f"{field.name} {operand_text}"
        else:
            self.description = f"{field.name} {symbol.get(operator, operator)} {operand_text}"

    def describe(self) -> str:
        return self.description

    def failures(self, resource: Resource) -> list[tuple[str, str, str]]:
        if self.test(resource) is not False:
            return []
        value = self.field.getter(resource)
        actual = f"{self.field.name} {'absent' if value is None else '= ' + show(value)}"
        if self.other is not None:
            actual += f" ({self.other.name} = {show(self.other.getter(resource))})"
        return [(self.field.name, self.describe(), actual)]


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
    if value is None:
        return "missing"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _all(parts: tuple[Condition, ...]) -> Test:
    tests = tuple(p.test for p in parts)
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests

        def both(resource: Resource) -> Verdict:
            a = first(resource)
            if a is False:
                return False
            b = second(resource)
            if b is False:
                return False
            if a is True:
                return b
            return a

        return both
    if len(tests) == 3:
        one, two, three = tests

        def each(resource: Resource) -> Verdict:
            a = one(resource)
            if a is False:
                return False
            b = two(resource)
            if b is False:
                return False
            c = three(resource)
            if c is False:
                return False
            for verdict in (a, b, c):
                if verdict is not True:
                    return verdict
            return True

        return each

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


def compile_condition(node: Any, where: Located) -> Condition:
    """Compile a condition mapping (`{field: operand, all: [...], ...}`); errors are located."""
    if not isinstance(node, Mapping) or not node:
        raise where.error(node, "condition", "must be a non-empty mapping of field: value")
    parts: list[Condition] = []
    for key, value in node.items():
        if key in ("all", "any"):
            if not isinstance(value, list) or not value:
                raise where.error(node, key, "takes a non-empty list of conditions")
            subs = tuple(compile_condition(item, where) for item in value)
            test = _all(subs) if key == "all" else _any(subs)
            parts.append(Group(test, key, subs))
        elif key == "not":
            sub = compile_condition(value, where)
            parts.append(Group(_not(sub), "not", (sub,)))
        else:
            parts.append(_compile_field(node, str(key), value, where))
    if len(parts) == 1:
        return parts[0]
    group = tuple(parts)
    return Group(_all(group), "all", group)


def _compile_field(node: Any, name: str, operand: Any, where: Located) -> Condition:
    spec = field_spec(name)
    if spec is None:
        raise where.error(node, name, f"unknown field '{name}'{_suggest(name)}")
    if isinstance(operand, Mapping):
        if not operand:
            raise where.error(node, name, "empty operator mapping")
        leaves = []
        for op, value in operand.items():
            if op not in OPERATORS:
                raise where.error(operand, op, f"unknown operator '{op}'{_suggest_op(str(op))}")
            leaves.append(_leaf(spec, str(op), value, (operand, op), where))
        if len(leaves) == 1:
            return leaves[0]
        group = tuple(leaves)
        return Group(_all(group), "all", group)
    if isinstance(operand, list):
        return _leaf(spec, "in", operand, (node, name), where)
    return _leaf(spec, "eq", operand, (node, name), where)


def _leaf(spec: FieldSpec, op: str, operand: Any, at: tuple[Any, Any], where: Located) -> Leaf:
    def fail(message: str) -> PolicyError:
        return where.error(at[0], at[1], message)

    get = spec.getter
    name = spec.name
    other: FieldSpec | None = None

    if op in ("present", "absent"):
        if not isinstance(operand, bool):
            raise fail(f"'{op}' takes true or false")
        want_present = operand if op == "present" else not operand

        def presence(resource: Resource) -> Verdict:
            return (get(resource) is not None) is want_present

        return Leaf(presence, spec, op, "present" if want_present else "absent", None)

    if op in ("in-field", "eq-field"):
        other = field_spec(str(operand)) if isinstance(operand, str) else None
        if other is None:
            raise fail(f"'{op}' takes a field name; unknown field '{operand}'")
        check = _field_test(op, other)
    elif op in ("at-most", "at-least"):
        if spec.type != "gpu":
            raise fail(f"'{op}' applies to gpu.model only")
        check = _rank_test(op, _ladder_class(operand, fail), name)
    else:
        check = _value_test(spec, op, operand, fail)

    if isinstance(operand, list):
        text = "[" + ", ".join(map(show, operand)) + "]"
    elif spec.type == "gpu":
        text = canonical_gpu(str(operand)) or str(operand)
    else:
        text = show(operand)
    absent_is_known = spec.type == "tag"

    if other is not None:
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

    if spec.type == "list":

        def any_item(resource: Resource) -> Verdict:
            values = get(resource)
            if values is None:
                return name
            verdicts = [check(v, None) for v in values]
            return any(v is True for v in verdicts)

        return Leaf(any_item, spec, op, text, None)

    def simple(resource: Resource) -> Verdict:
        value = get(resource)
        if value is None and not absent_is_known:
            return name
        return check(value, None)

    fast = None if absent_is_known else _fast_test(spec, op, operand)
    leaf = Leaf(fast or simple, spec, op, text, None)
    if op in ("in", "not-in"):
        leaf.operand_value = frozenset(_scalar(spec, item, fail) for item in operand)
    elif op in _ORDERING:
        leaf.operand_value = _ordered(spec, operand, fail)
    elif op in ("eq", "ne"):
        leaf.operand_value = _scalar(spec, operand, fail)
    return leaf


def _fast_test(spec: FieldSpec, op: str, operand: Any) -> Test | None:
    """One closure for the hot operators, saving a call per check; same verdicts as `simple`."""
    get, name = spec.getter, spec.name
    if op == "eq" and spec.type in ("enum", "bool"):
        expected = operand

        def eq(resource: Resource) -> Verdict:
            value = get(resource)
            return name if value is None else value == expected

        return eq
    if op == "in" and spec.type == "enum":
        members = frozenset(str(item) for item in operand)

        def within(resource: Resource) -> Verdict:
            value = get(resource)
            return name if value is None else value in members

        return within
    if op in _ORDERING and spec.type == "number" and not isinstance(operand, bool):
        bound = _ordered(spec, operand, _never)
        compare = {
            "lt": float.__lt__,
            "lte": float.__le__,
            "gt": float.__gt__,
            "gte": float.__ge__,
        }[op]

        def ordered(resource: Resource) -> Verdict:
            value = get(resource)
            return name if value is None else compare(float(value), float(bound))

        return ordered
    return None


def _never(message: str) -> PolicyError:
    return PolicyError(message)  # pragma: no cover - operands were validated by `_value_test`


def _ladder_class(operand: Any, fail: Callable[[str], PolicyError]) -> int:
    found = gpu_class(str(operand)) if isinstance(operand, str) else None
    if found is None:
        raise fail(f"unknown GPU class '{operand}'")
    if found.rank is None:
        raise fail(f"'{found.name}' is outside the GPU class ladder; name it with 'in' instead")
    return found.rank


def _rank_test(op: str, limit: int, name: str) -> Callable[[Any, Any], Verdict]:
    def check(value: Any, _: Any) -> Verdict:
        rank = _RANKS.get(value)
        if rank is None:
            found = gpu_class(value)
            rank = found.rank if found else None
        if rank is None:
            return f"{name} (no class rank for {value})"
        return rank <= limit if op == "at-most" else rank >= limit

    return check


def _field_test(op: str, other: FieldSpec) -> Callable[[Any, Any], Verdict]:
    if op == "eq-field":
        return lambda value, target: value == target
    if other.type == "list":
        return lambda value, target: value in target
    return lambda value, target: value == target


def _value_test(
    spec: FieldSpec, op: str, operand: Any, fail: Callable[[str], PolicyError]
) -> Callable[[Any, Any], Verdict]:
    if op == "regex":
        try:
            pattern = re.compile(str(operand))
        except re.error as exc:
            raise fail(f"invalid regex: {exc}") from exc
        return lambda value, _: value is not None and pattern.search(str(value)) is not None
    if op == "glob":
        regex = re.compile(fnmatch.translate(str(operand)))
        return lambda value, _: value is not None and regex.match(str(value)) is not None
    if op in ("in", "not-in"):
        if not isinstance(operand, list) or not operand:
            raise fail(f"'{op}' takes a non-empty list")
        members = frozenset(_scalar(spec, item, fail) for item in operand)
        if op == "in":
            return lambda value, _: value in members
        return lambda value, _: value not in members
    if op in _ORDERING:
        if spec.type not in ("number", "datetime"):
            raise fail(f"'{op}' needs a number or date field; '{spec.name}' is {spec.type}")
        bound = _ordered(spec, operand, fail)
        return {
            "lt": lambda value, _: value is not None and value < bound,
            "lte": lambda value, _: value is not None and value <= bound,
            "gt": lambda value, _: value is not None and value > bound,
            "gte": lambda value, _: value is not None and value >= bound,
        }[op]
    expected = _scalar(spec, operand, fail)
    if op == "eq":
        return lambda value, _: value == expected
    if op == "ne":
        return lambda value, _: value != expected
    raise fail(f"unknown operator '{op}'")  # pragma: no cover - OPERATORS is checked first


def _scalar(spec: FieldSpec, operand: Any, fail: Callable[[str], PolicyError]) -> Any:
    if isinstance(operand, Mapping | list):
        raise fail("expected a scalar value")
    if spec.type == "gpu":
        found = gpu_class(str(operand))
        if found is None:
            raise fail(f"unknown GPU class '{operand}'")
        return found.name
    if spec.type == "enum":
        text = str(operand)
        if spec.choices and text not in spec.choices:
            raise fail(f"'{text}' is not one of {', '.join(sorted(spec.choices))}")
        return text
    if spec.type == "number":
        return _ordered(spec, operand, fail)
    if spec.type == "bool":
        if not isinstance(operand, bool):
            raise fail("expected true or false")
        return operand
    if spec.type == "datetime":
        return _ordered(spec, operand, fail)
    if isinstance(operand, bool):
        return "true" if operand else "false"
    return str(operand)


def _ordered(spec: FieldSpec, operand: Any, fail: Callable[[str], PolicyError]) -> Any:
    if spec.type == "datetime":
        if isinstance(operand, datetime):
            return operand if operand.tzinfo else operand.replace(tzinfo=UTC)
        if isinstance(operand, date):
            return datetime(operand.year, operand.month, operand.day, tzinfo=UTC)
        try:
            parsed = datetime.fromisoformat(str(operand))
        except ValueError as exc:
            raise fail(f"expected an ISO date, got '{operand}'") from exc
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if isinstance(operand, bool):
        raise fail(f"expected a number, got {operand}")
    if isinstance(operand, int | float):
        return operand
    duration = _DURATION.match(str(operand))
    if duration and spec.unit:
        hours = float(duration.group(1)) * _UNIT_HOURS[duration.group(2)]
        return hours * 60 if spec.unit == "minutes" else hours
    if duration:
        raise fail(f"'{spec.name}' is not a duration; give a plain number")
    hint = " or a duration like 30m, 24h, 7d" if spec.unit else ""
    raise fail(f"expected a number{hint}, got '{operand}'")


def _suggest(name: str) -> str:
    from difflib import get_close_matches

    from gpu_audit.policy.fields import FIELDS

    close = get_close_matches(name, list(FIELDS), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _suggest_op(name: str) -> str:
    from difflib import get_close_matches

    close = get_close_matches(name.strip(), [*OPERATORS, *COMBINATORS], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
