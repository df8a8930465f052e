"""Resource ⇄ canonical mapping: the saved-inventory format and the JSON report's `resources`.

A mapping uses the data model's field names, nested as in the policy language (`gpu.model` is
`{"gpu": {"model": ...}}`). Missing fields are left out (or null); nothing is invented.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from gpu_audit.model import (
    Capacity,
    Checkpoint,
    DataRef,
    Gpu,
    Hpo,
    Kind,
    Limits,
    Price,
    Resource,
    SourceRef,
    State,
    Utilization,
    Workload,
)

_SECTIONS: dict[str, tuple[type, dict[str, str]]] = {
    "gpu": (Gpu, {"model": "str", "count": "int", "memory_gib": "number"}),
    "utilization": (
        Utilization,
        {"gpu_avg": "number", "gpu_p95": "number", "window_hours": "number"},
    ),
    "data": (DataRef, {"uris": "list", "regions": "list"}),
    "checkpoint": (Checkpoint, {"uri": "str", "interval_minutes": "number"}),
    "limits": (Limits, {"max_runtime_hours": "number", "budget_usd": "number"}),
    "hpo": (Hpo, {"max_trials": "int", "early_stopping": "bool"}),
    "price": (
        Price,
        {"hourly_usd": "number", "on_demand_hourly_usd": "number", "spot_hourly_usd": "number"},
    ),
}
_SCALARS: dict[str, str] = {
    "id": "str",
    "name": "str",
    "account": "str",
    "region": "str",
    "zone": "str",
    "instance_type": "str",
    "uptime_hours": "number",
    "monthly_cost_usd": "number",
}
_ENUMS: dict[str, Any] = {
    "kind": Kind,
    "state": State,
    "capacity": Capacity,
    "workload": Workload,
}
KEYS = frozenset(
    [*_SECTIONS, *_SCALARS, *_ENUMS, "provider", "tags", "launched_at", "source", "note"]
)


class FieldProblem(ValueError):
    """A value of the wrong type or an unknown key; `key` names it (dotted)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def to_mapping(resource: Resource) -> dict[str, Any]:
    """The canonical mapping of a resource; missing values are null."""
    out: dict[str, Any] = {
        "kind": resource.kind.value,
        "provider": resource.provider,
        "id": resource.id,
        "name": resource.name,
        "account": resource.account,
        "region": resource.region,
        "zone": resource.zone,
        "instance_type": resource.instance_type,
        "state": resource.state.value if resource.state else None,
        "capacity": resource.capacity.value if resource.capacity else None,
        "gpu": _section(resource.gpu, "gpu"),
        "tags": dict(resource.tags),
        "workload": resource.workload.value,
        "launched_at": _iso(resource.launched_at),
        "uptime_hours": resource.uptime_hours,
        "utilization": _section(resource.utilization, "utilization"),
        "data": _section(resource.data, "data"),
        "checkpoint": _section(resource.checkpoint, "checkpoint"),
        "limits": _section(resource.limits, "limits"),
        "hpo": _section(resource.hpo, "hpo"),
        "price": _section(resource.price, "price"),
        "monthly_cost_usd": resource.monthly_cost_usd,
    }
    source = resource.source
    if source.path is not None:
        out["source"] = {"path": source.path, "line": source.line}
    if source.note:
        out["note"] = source.note  # what the collector or parser could not read, and why
    return out


def _section(value: Any, name: str) -> dict[str, Any]:
    out = {}
    for key in _SECTIONS[name][1]:
        item = getattr(value, key)
        out[key] = list(item) if isinstance(item, tuple) else item
    return out


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


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
    values: dict[str, Any] = {"provider": provider}
    for key, kind in _SCALARS.items():
        if raw.get(key) is not None:
            values[key] = _typed(key, raw[key], kind)
    for key, enum in _ENUMS.items():
        if raw.get(key) is not None:
            try:
                values[key] = enum(str(raw[key]))
            except ValueError:
                choices = ", ".join(m.value for m in enum)
                raise FieldProblem(key, f"'{raw[key]}' is not one of {choices}") from None
    values.setdefault("kind", Kind.INSTANCE)
    for name, (cls, spec) in _SECTIONS.items():
        section = raw.get(name)
        if section is None:
            continue
        if not isinstance(section, Mapping):
            raise FieldProblem(name, "expected a mapping")
        parts = {}
        for key, item in section.items():
            if key not in spec:
                raise FieldProblem(f"{name}.{key}", f"unknown field '{name}.{key}'")
            if item is not None:
                parts[key] = _typed(f"{name}.{key}", item, spec[key])
        values[name] = cls(**parts)
    tags = raw.get("tags")
    if tags is not None:
        if not isinstance(tags, Mapping):
            raise FieldProblem("tags", "expected a mapping of key: value")
        values["tags"] = {str(k): "" if v is None else str(v) for k, v in tags.items()}
    if raw.get("launched_at") is not None:
        values["launched_at"] = parse_time("launched_at", raw["launched_at"])
    source = raw.get("source")
    note = str(raw["note"]) if raw.get("note") is not None else None
    if isinstance(source, Mapping) and source.get("path"):
        values["source"] = SourceRef(path=str(source["path"]), line=source.get("line"), note=note)
    elif note:
        values["source"] = SourceRef(note=note)
    values["id"] = str(values.get("id", raw["id"]))
    return Resource(**values)


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


def _typed(key: str, value: Any, kind: str) -> Any:
    if kind == "str":
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
    elif kind == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    elif kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind == "bool":
        if isinstance(value, bool):
            return value
    elif kind == "list":
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return tuple(value)
    raise FieldProblem(key, f"expected {kind}, got {type(value).__name__} {value!r}")
