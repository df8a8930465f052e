"""The operators: one registry from name to documentation and builder. Each builder parses its
operand once (durations, GPU classes, enum values, numbers) into a small value test."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Any

from gpu_audit.catalog import gpu_class
from gpu_audit.catalog.gpus import ladder
from gpu_audit.core.fields import FieldSpec
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource
from gpu_audit.errors import PolicyError

Verdict = bool | str  # True, False, or the missing field (unknown)
Test = Callable[[Resource], Verdict]
ValueTest = Callable[[Any, Any], Verdict]  # (the field's value, the other field's value)
Fail = Callable[[str], PolicyError]

ORDERING = frozenset({"lt", "lte", "gt", "gte"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhd])\s*$")
_UNIT_HOURS = {"m": 1 / 60, "h": 1.0, "d": 24.0}
_RANKS = {g.name: g.rank for g in ladder()}


def _class_hint(operand: Any) -> str:
    """` (did you mean 'A100-80GB'?)` for a misspelt GPU class."""
    from gpu_audit.policy.structure import did_you_mean  # an error's hint only

    return did_you_mean(operand, _RANKS)


def ladder_class(operand: Any, fail: Callable[[str], PolicyError]) -> int:
    """The ladder rank of the GPU class `operand` names; the PolicyError `fail` makes for an unknown
    class or one off the ladder."""
    found = gpu_class(str(operand)) if isinstance(operand, str) else None
    if found is None:
        raise fail(f"unknown GPU class '{operand}'{_class_hint(operand)}")
    if found.rank is None:
        raise fail(f"'{found.name}' is outside the GPU class ladder; name it with 'in' instead")
    return found.rank


def rank_test(op: str, limit: int, name: str) -> Callable[[Any, Any], Verdict]:
    """A test of a GPU's class rank against `limit` (`at-most` or `at-least`); a GPU without a rank
    is not evaluated (its reason returned)."""

    def check(value: Any, _: Any) -> Verdict:
        rank = _RANKS.get(value)
        if rank is None:
            found = gpu_class(value)
            rank = found.rank if found else None
        if rank is None:
            return f"{name} (no class rank for {value})"
        return rank <= limit if op == "at-most" else rank >= limit

    return check


def value_test(
    spec: FieldSpec, op: str, operand: Any, fail: Callable[[str], PolicyError]
) -> Callable[[Any, Any], Verdict]:
    """The test of the value operator `op` on a field with `operand` checked against the field's
    type (regex compiled, lists non-empty…); the PolicyError `fail` makes for a bad operand."""
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
        members = frozenset(scalar(spec, item, fail) for item in operand)
        if op == "in":
            return lambda value, _: value in members
        return lambda value, _: value not in members
    if op in ORDERING:
        if spec.type not in ("number", "datetime"):
            raise fail(f"'{op}' needs a number or date field; '{spec.name}' is {spec.type}")
        bound = ordered_operand(spec, operand, fail)
        return {
            "lt": lambda value, _: value is not None and value < bound,
            "lte": lambda value, _: value is not None and value <= bound,
            "gt": lambda value, _: value is not None and value > bound,
            "gte": lambda value, _: value is not None and value >= bound,
        }[op]
    expected = scalar(spec, operand, fail)
    if op == "eq":
        return lambda value, _: value == expected
    if op == "ne":
        return lambda value, _: value != expected
    raise fail(f"unknown operator '{op}'")  # pragma: no cover - OPERATORS is checked first


def scalar(spec: FieldSpec, operand: Any, fail: Callable[[str], PolicyError]) -> object:
    """The operand as the field's type compares it: a GPU class's canonical name, an enum choice, a
    number or a boolean; the PolicyError `fail` makes otherwise."""
    if isinstance(operand, Mapping | list):
        raise fail("expected a scalar value")
    if spec.type == "gpu":
        found = gpu_class(str(operand))
        if found is None:
            raise fail(f"unknown GPU class '{operand}'{_class_hint(operand)}")
        return found.name
    if spec.type == "enum":
        text = str(operand)
        if text == "unknown":
            raise fail(
                f"'unknown' means the source did not say; test it with '{spec.name}: absent'"
            )
        if spec.choices and text not in spec.choices:
            from gpu_audit.policy.structure import did_you_mean  # an error's hint only

            hint = did_you_mean(text, spec.choices)
            raise fail(f"'{text}' is not one of {', '.join(sorted(spec.choices))}{hint}")
        return text
    if spec.type == "number":
        return ordered_operand(spec, operand, fail)
    if spec.type == "bool":
        if not isinstance(operand, bool):
            raise fail("expected true or false")
        return operand
    if spec.type == "datetime":
        return ordered_operand(spec, operand, fail)
    if isinstance(operand, bool):
        return "true" if operand else "false"
    return str(operand)


# Any: an operand of the field's type
def ordered_operand(spec: FieldSpec, operand: Any, fail: Callable[[str], PolicyError]) -> Any:
    """The operand of an ordering operator: an aware UTC datetime for a time field (ISO dates
    read), else a number (a duration such as `24h` in the field's unit, for a field with one);
    the PolicyError `fail` makes otherwise."""
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


_ORDERED_FIELD = {
    "lt-field": lambda value, target: value < target,
    "lte-field": lambda value, target: value <= target,
    "gt-field": lambda value, target: value > target,
    "gte-field": lambda value, target: value >= target,
}


def _field_comparison(op: str) -> Callable[[FieldSpec, Any, Fail], ValueTest]:
    """`x: {OP-field: y}`: the operand names another field, whose value is the second argument."""

    def build(spec: FieldSpec, other: FieldSpec, fail: Fail) -> ValueTest:
        if op == "in-field":
            if other.type == "list":
                return lambda value, target: value in target
            return lambda value, target: value == target
        if op == "eq-field":
            return lambda value, target: value == target
        numeric = ("number", "datetime")
        if spec.type not in numeric or other.type not in numeric:
            raise fail(f"'{op}' compares two number or date fields")
        compare: ValueTest = _ORDERED_FIELD[op]
        return compare

    return build


def _ladder(op: str) -> Callable[[FieldSpec, Any, Fail], ValueTest]:
    def build(spec: FieldSpec, operand: Any, fail: Fail) -> ValueTest:
        if not spec.ordered:
            raise fail(f"'{op}' applies to gpu.model only")
        return rank_test(op, ladder_class(operand, fail), spec.name)

    return build


def _value(op: str) -> Callable[[FieldSpec, Any, Fail], ValueTest]:
    return lambda spec, operand, fail: value_test(spec, op, operand, fail)


@record
class Operator:
    """An operator's documentation and how it compiles. `kind` says what its operand is: a
    value, another field's name (`field`), or whether the field is known (`presence`)."""

    doc: str
    build: Callable[[FieldSpec, Any, Fail], ValueTest] | None
    kind: str = "value"  # value | field | presence
    symbol: str | None = None  # how a requirement reads: `gpu.count ≤ 8`


OPERATORS: dict[str, Operator] = {
    "eq": Operator("equals the value (a plain scalar means the same)", _value("eq"), symbol="="),
    "ne": Operator("differs from the value", _value("ne"), symbol="≠"),
    "in": Operator("is one of the listed values (a plain list means the same)", _value("in")),
    "not-in": Operator("is none of the listed values", _value("not-in")),
    "lt": Operator("is less than the number or duration", _value("lt"), symbol="<"),
    "lte": Operator("is at most the number or duration", _value("lte"), symbol="≤"),
    "gt": Operator("is greater than the number or duration", _value("gt"), symbol=">"),
    "gte": Operator("is at least the number or duration", _value("gte"), symbol="≥"),
    "regex": Operator("matches the regular expression anywhere (`re.search`)", _value("regex")),
    "glob": Operator("matches the shell-style pattern (`p4d.*`)", _value("glob")),
    "present": Operator(
        "is known (`present: true`, or the bare word: `tags.owner: present`)",
        None,
        kind="presence",
    ),
    "absent": Operator(
        "is missing (`absent: true`, or the bare word: `tags.owner: absent`)",
        None,
        kind="presence",
    ),
    "at-most": Operator("GPU class is at most this class (gpu.model only)", _ladder("at-most")),
    "at-least": Operator("GPU class is at least this class (gpu.model only)", _ladder("at-least")),
    "in-field": Operator(
        "is one of another (list) field's values", _field_comparison("in-field"), kind="field"
    ),
    "eq-field": Operator("equals another field", _field_comparison("eq-field"), kind="field"),
    "lt-field": Operator(
        "is less than another field", _field_comparison("lt-field"), kind="field", symbol="<"
    ),
    "lte-field": Operator(
        "is at most another field", _field_comparison("lte-field"), kind="field", symbol="≤"
    ),
    "gt-field": Operator(
        "is greater than another field", _field_comparison("gt-field"), kind="field", symbol=">"
    ),
    "gte-field": Operator(
        "is at least another field", _field_comparison("gte-field"), kind="field", symbol="≥"
    ),
}
# A bare word that means an operator, as Cloud Custodian's `value: present` does; equality with
# the word itself needs `{eq: present}`.
SHORTHANDS = frozenset({"present", "absent"})
