"""Resource ⇄ canonical mapping: the saved-inventory format and the JSON report's `resources`.

A mapping uses the data model's field names, nested as in the policy language (`gpu.model` is
`{"gpu": {"model": ...}}`). Missing fields are left out (or null); nothing is invented.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from gpu_audit.fields import FIELDS, SECTIONS, FieldSpec, build_resource
from gpu_audit.model import Kind, Resource, SourceRef

KEYS = frozenset([*(spec.name.partition(".")[0] for spec in FIELDS.values()), "source", "note"])


class FieldProblem(ValueError):
    """A value of the wrong type or an unknown key; `key` names it (dotted)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def _enum_value(value: Any) -> Any:
    return None if value is None else value.value


def _section_writer(keys: tuple[str, ...]) -> Any:
    def write(section: Any) -> dict[str, Any]:
        out = {}
        for key in keys:
            item = getattr(section, key)
            out[key] = list(item) if isinstance(item, tuple) else item
        return out

    return write


def _writers() -> list[tuple[str, Any]]:
    """(top-level name, converter or None) in field order: the mapping's key order."""
    plan: list[tuple[str, Any]] = []
    for spec in FIELDS.values():
        top = spec.name.partition(".")[0]
        if spec.group is not None:
            if not plan or plan[-1][0] != top:
                keys = tuple(f.key for f in FIELDS.values() if f.group == top)
                plan.append((top, _section_writer(keys)))
        elif spec.type == "enum":
            plan.append((top, _enum_value))
        elif spec.type == "datetime":
            plan.append((top, _iso))
        elif spec.type == "tag":
            plan.append((top, dict))
        else:
            plan.append((top, None))
    return plan


_WRITERS = _writers()


def to_mapping(resource: Resource) -> dict[str, Any]:
    """The canonical mapping of a resource; missing values are null."""
    out: dict[str, Any] = {}
    for name, convert in _WRITERS:
        value = getattr(resource, name)
        out[name] = value if convert is None else convert(value)
    source = resource.source
    if source.path is not None:
        out["source"] = {"path": source.path, "line": source.line}
    if source.note:
        out["note"] = source.note  # what the collector or parser could not read, and why
    return out


def from_mapping(raw: Mapping[str, Any]) -> Resource:
    """A Resource from its canonical mapping; raises FieldProblem naming the bad key."""
    for key in raw:
        if key not in KEYS:
            raise FieldProblem(str(key), f"unknown field '{key}'")
    if not isinstance(raw.get("id"), str | int) or raw.get("id") in ("", None):
        raise FieldProblem("id", "every resource needs an id")
    provider = raw.get("provider")
    if not isinstance(provider, str) or not provider:
        raise FieldProblem("provider", "every resource needs a provider (aws, gcp, …)")
    values: dict[str, Any] = {}
    for name in SECTIONS:
        section = raw.get(name)
        if section is not None and not isinstance(section, Mapping):
            raise FieldProblem(name, "expected a mapping")
        for key in section or ():
            if f"{name}.{key}" not in FIELDS:
                raise FieldProblem(f"{name}.{key}", f"unknown field '{name}.{key}'")
    for spec in FIELDS.values():
        group, _, key = spec.name.partition(".")
        value = raw.get(group) if spec.group is None else (raw.get(group) or {}).get(key)
        if value is not None:
            values[spec.name] = _typed(spec, value)
    values.setdefault("kind", Kind.INSTANCE)
    note = str(raw["note"]) if raw.get("note") is not None else None
    source = raw.get("source")
    if isinstance(source, Mapping) and source.get("path"):
        values["source"] = SourceRef(path=str(source["path"]), line=source.get("line"), note=note)
    elif note:
        values["source"] = SourceRef(note=note)
    return build_resource(values)


def parse_time(key: str, value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise FieldProblem(key, f"expected an ISO 8601 time, got '{value}'") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _typed(spec: FieldSpec, value: Any) -> Any:
    key = spec.name
    kind = spec.type
    if kind == "enum" and spec.enum is not None:
        try:
            return spec.enum(str(value))
        except ValueError:
            choices = ", ".join(m.value for m in spec.enum)
            raise FieldProblem(key, f"'{value}' is not one of {choices}") from None
    if kind == "datetime":
        return parse_time(key, value)
    if kind == "tag":
        if not isinstance(value, Mapping):
            raise FieldProblem(key, "expected a mapping of key: value")
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    if kind in ("str", "gpu"):
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
        kind = "str"
    elif kind == "number" and spec.integer:
        if isinstance(value, int) and not isinstance(value, bool):
            return _bounded(spec, value)
        kind = "int"
    elif kind == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _bounded(spec, value)
    elif kind == "bool":
        if isinstance(value, bool):
            return value
    elif kind == "list":
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return tuple(value)
    raise FieldProblem(key, f"expected {kind}, got {type(value).__name__} {value!r}")


def _bounded(spec: FieldSpec, value: float) -> float:
    """A number within the field's bounds; NaN, infinity and impossible values are refused."""
    if not math.isfinite(value):
        raise FieldProblem(spec.name, f"expected a finite number, got {value}")
    if spec.minimum is not None and value < spec.minimum:
        raise FieldProblem(spec.name, f"{value:g} is below the minimum {spec.minimum:g}")
    if spec.maximum is not None and value > spec.maximum:
        raise FieldProblem(spec.name, f"{value:g} is above the maximum {spec.maximum:g}")
    return value
