"""Operands and value tests of each operator: parsing durations, GPU classes, enum values and
numbers once, at compile time, into small test functions."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Any

from gpu_audit.catalog import gpu_class
from gpu_audit.catalog.gpus import ladder
from gpu_audit.errors import PolicyError
from gpu_audit.fields import FieldSpec
from gpu_audit.model import Resource

Verdict = bool | str  # True, False, or the missing field (unknown)
Test = Callable[[Resource], Verdict]
ValueTest = Callable[[Any, Any], Verdict]

ORDERING = frozenset({"lt", "lte", "gt", "gte"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhd])\s*$")
_UNIT_HOURS = {"m": 1 / 60, "h": 1.0, "d": 24.0}
_RANKS = {g.name: g.rank for g in ladder()}


def ladder_class(operand: Any, fail: Callable[[str], PolicyError]) -> int:
    found = gpu_class(str(operand)) if isinstance(operand, str) else None
    if found is None:
        raise fail(f"unknown GPU class '{operand}'")
    if found.rank is None:
        raise fail(f"'{found.name}' is outside the GPU class ladder; name it with 'in' instead")
    return found.rank


def rank_test(op: str, limit: int, name: str) -> Callable[[Any, Any], Verdict]:
    def check(value: Any, _: Any) -> Verdict:
        rank = _RANKS.get(value)
        if rank is None:
            found = gpu_class(value)
            rank = found.rank if found else None
        if rank is None:
            return f"{name} (no class rank for {value})"
        return rank <= limit if op == "at-most" else rank >= limit

    return check


def field_test(op: str, other: FieldSpec) -> Callable[[Any, Any], Verdict]:
    if op == "eq-field":
        return lambda value, target: value == target
    if other.type == "list":
        return lambda value, target: value in target
    return lambda value, target: value == target


def value_test(
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


def scalar(spec: FieldSpec, operand: Any, fail: Callable[[str], PolicyError]) -> Any:
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


def ordered_operand(spec: FieldSpec, operand: Any, fail: Callable[[str], PolicyError]) -> Any:
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
