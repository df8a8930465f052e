"""Saved inventories: a JSON or YAML list of resources in canonical fields (or a JSON report)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpu_audit.canonical import FieldProblem, from_mapping, parse_time
from gpu_audit.errors import InputError
from gpu_audit.model import CoverageGap, Resource
from gpu_audit.yamlsrc import LineMap, load_documents, read_text

MAX_INVENTORY_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Inventory:
    path: str
    resources: tuple[Resource, ...]
    coverage_gaps: tuple[CoverageGap, ...]
    captured_at: datetime | None  # a snapshot is judged as of its capture time


def load_inventory(path: str) -> Inventory:
    """Read a saved inventory; every problem is reported as `file:line: resource 'id': key: …`."""
    data = _read(path)
    captured_at = None
    gaps: tuple[CoverageGap, ...] = ()
    if isinstance(data, Mapping):
        if "resources" not in data:
            raise InputError(f"{path}:{_line(data)}: inventory: expected a 'resources' list")
        if data.get("captured_at") is not None:
            try:
                captured_at = parse_time("captured_at", data["captured_at"])
            except FieldProblem as exc:
                raise InputError(f"{path}:{_line(data, 'captured_at')}: inventory: {exc}") from None
        gaps = tuple(_gaps(path, data.get("coverage_gaps") or []))
        items = data["resources"]
    else:
        items = data
    if not isinstance(items, list):
        raise InputError(f"{path}: inventory: 'resources' must be a list of resources")
    return Inventory(path, tuple(_resources(path, items)), gaps, captured_at)


def _read(path: str) -> Any:
    if path.lower().endswith(".json"):
        # Large snapshots are JSON: the json module is ~20× faster than YAML with line numbers.
        text = read_text(path, limit=MAX_INVENTORY_BYTES)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from exc
        except RecursionError as exc:
            raise InputError(f"{path}: JSON nested too deeply") from exc
    documents = load_documents(path, read_text(path, limit=MAX_INVENTORY_BYTES))
    if len(documents) != 1:
        raise InputError(f"{path}: inventory: expected exactly one YAML document")
    return documents[0].data


def _line(node: Any, key: Any = None) -> int | str:
    if isinstance(node, LineMap):
        return node.line_of(key) if key is not None else node.line
    return "1"


def _resources(path: str, items: list[Any]) -> Iterator[Resource]:
    seen: set[tuple[str, str]] = set()
    for index, raw in enumerate(items):
        label = f"resource #{index + 1}"
        if not isinstance(raw, Mapping):
            raise InputError(f"{path}:{_line(items)}: {label}: expected a mapping of fields")
        if raw.get("id") is not None:
            label = f"resource '{raw['id']}'"
        try:
            resource = from_mapping(raw)
        except FieldProblem as exc:
            top = exc.key.split(".")[0]
            node = raw.get(top) if "." in exc.key else raw
            key = exc.key.split(".", 1)[1] if "." in exc.key else exc.key
            line = _line(node, key) if isinstance(node, LineMap) else _line(raw, top)
            where = f"{path}:{line}" if isinstance(raw, LineMap) else f"{path}: resources[{index}]"
            raise InputError(f"{where}: {label}: {exc.key}: {exc}") from None
        identity = (resource.provider, resource.id)
        if identity in seen:
            raise InputError(f"{path}:{_line(raw, 'id')}: {label}: id: duplicate resource id")
        seen.add(identity)
        yield resource


def _gaps(path: str, items: Any) -> Iterator[CoverageGap]:
    for raw in items if isinstance(items, list) else []:
        if not isinstance(raw, Mapping) or not raw.get("provider") or not raw.get("scope"):
            raise InputError(f"{path}:{_line(raw)}: coverage gap: needs provider and scope")
        yield CoverageGap(
            provider=str(raw["provider"]),
            scope=str(raw["scope"]),
            error=str(raw.get("error") or "unknown"),
            message=str(raw.get("message") or ""),
            account=raw.get("account"),
            region=raw.get("region"),
        )
