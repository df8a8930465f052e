"""Saved inventories: a JSON or YAML list of resources in canonical fields (or a JSON report)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from functools import cache
from importlib.resources import files
from typing import Any

from gpu_audit.core.canonical import FieldProblem, parse_time, read_mapping, shown, suggest
from gpu_audit.core.frozen import record
from gpu_audit.core.gcpause import paused_gc
from gpu_audit.core.jsonitems import Fallback, Streamed, load_streamed
from gpu_audit.core.resource import Resource
from gpu_audit.core.results import CoverageGap
from gpu_audit.core.yamlguard import lone_surrogate, printable
from gpu_audit.core.yamlsrc import (
    MAX_DATA_BYTES,
    LineList,
    LineMap,
    load_documents,
    load_json,
    read_text,
)
from gpu_audit.errors import InputError, InputErrors

MAX_INVENTORY_BYTES = MAX_DATA_BYTES
MAX_ERRORS = 50  # a file's errors shown; the rest are counted (350,000 lines help nobody)
# A JSON inventory with errors is read again as YAML to name their lines, up to this size.
MAX_LOCATED_JSON_BYTES = 64 * 1024 * 1024
# A JSON inventory larger than this is read resource by resource (`_streams`).
STREAMED_JSON_CHARS = 8 * 1024 * 1024
KEYS = ("version", "captured_at", "resources", "coverage_gaps")
GAP_KEYS = ("provider", "scope", "error", "message", "account", "region")

Path = tuple[Any, ...]  # keys and indexes from the top of the file to a value


@record
class Inventory:
    path: str
    resources: tuple[Resource, ...]
    coverage_gaps: tuple[CoverageGap, ...]
    captured_at: datetime | None  # a snapshot is judged as of its capture time


def load_inventory(path: str) -> Inventory:
    """Read a saved inventory; every problem of the file is reported, each as
    `file:line: resource 'id': key: …` (one InputError; `.messages` holds one line per problem)."""
    return load_report(path)[0]


# A report's sections that are not the inventory's, and large: not kept as its header.
_BULK = ("resources", "findings", "not_evaluated", "coverage_gaps")


def load_report(path: str) -> tuple[Inventory, dict[str, Any]]:
    """`load_inventory`, plus the file's other top-level sections (a JSON report's `scope`,
    `generated_at`, …) from the same single read; the bulky arrays are not kept twice."""
    text = read_text(path, limit=MAX_INVENTORY_BYTES)
    problems: list[tuple[Path, str]] = []
    tree = None
    with paused_gc():  # millions of small acyclic objects: a third of the read was collection
        streamed = _streamed(path, text, problems) if _streams(path, text) else None
        if streamed is None:
            data = _parse(path, text)
            inventory = _inventory(path, data, problems)
            tree = data if isinstance(data, LineMap | LineList) else None
        else:
            inventory, data = streamed
    if problems:
        tree = tree or _lined(path, text)
        shown = problems[:MAX_ERRORS]
        messages = [f"{path}:{_line_at(tree, where)}: {message}" for where, message in shown]
        if len(problems) > MAX_ERRORS:
            rest, line = len(problems) - MAX_ERRORS, _line_at(tree, problems[MAX_ERRORS][0])
            messages.append(
                f"{path}:{line}: and {rest:,} more errors in this file, the next "
                f"one here (the first {MAX_ERRORS} are shown)"
            )
        raise InputErrors(messages)
    header = {k: v for k, v in data.items() if k not in _BULK} if isinstance(data, dict) else {}
    return inventory, header


def _streams(path: str, text: str) -> bool:
    """A large JSON file is read resource by resource (`core.jsonitems`): parsed whole, its
    dicts take ~5× the text (~2 GB at a million resources) beside the resources built."""
    return len(text) > STREAMED_JSON_CHARS and path.lower().endswith(".json")


def _streamed(
    path: str, text: str, problems: list[tuple[Path, str]]
) -> tuple[Inventory, Any] | None:
    """The inventory with its resources converted as they are parsed, and the document's other
    sections; None when the document needs the ordinary reader (invalid JSON, a repeated key),
    which says where the problem is."""
    lone_surrogate(path, text)  # as `load_json` does first
    reader = _Resources()
    try:
        data = load_streamed(text, "resources", reader.take, skip=_IGNORED)
    except Fallback:
        return None
    return _inventory(path, data, problems, reader), data


# A report's sections that an inventory ignores: streamed past item by item, never held.
_IGNORED = ("findings", "not_evaluated")


def _parse(path: str, text: str) -> Any:  # Any: YAML/JSON of any shape
    if path.lower().endswith(".json"):
        # Large snapshots are JSON: the json module is ~20× faster than YAML with line numbers.
        return load_json(path, text)
    documents = load_documents(path, text)
    if len(documents) != 1:
        line = documents[1].line if len(documents) > 1 else 1
        raise InputError(f"{path}:{line}: inventory: expected exactly one YAML document")
    return documents[0].data


def _lined(path: str, text: str) -> Any:  # Any: YAML/JSON of any shape
    """The JSON file again, with line numbers (the YAML reader): only when there are errors."""
    if len(text) > MAX_LOCATED_JSON_BYTES or "\n" not in text.rstrip():
        return None  # too large to read twice, or one line: every error is on line 1
    try:
        return load_documents(path, text)[0].data
    except InputError:
        return None


def line_in_file(path: str, where: Path) -> int:
    """The line of `where` (keys and item indexes) in a file read before: for an error's
    message only (the file is read again), 1 when it is too large or on one line."""
    try:
        return _line_at(_lined(path, read_text(path, limit=MAX_INVENTORY_BYTES)), where)
    except InputError:
        return 1


def _line_at(tree: Any, where: Path) -> int:
    """The line of the deepest key or item of `where` that the file has."""
    line = getattr(tree, "line", 1)
    node = tree
    for step in where:
        if isinstance(node, LineMap) and step in node:
            line, node = node.line_of(step), node[step]
        elif isinstance(node, LineList) and isinstance(step, int) and step < len(node):
            line, node = node.item_lines[step], node[step]
        else:
            break
    return line


def _inventory(
    path: str, data: Any, problems: list[tuple[Path, str]], reader: _Resources | None = None
) -> Inventory:
    captured_at = None
    gaps: list[CoverageGap] = []
    items: Any = data
    where: Path = ()
    if isinstance(data, Mapping):
        allowed = _report_keys() if "tool" in data else KEYS
        for key in data:
            if key not in allowed:
                hint = suggest(key, allowed)
                problems.append(((key,), f"inventory: unknown key '{printable(key)}'{hint}"))
        versions = (1, 2, 3) if "tool" in data else (1,)  # a JSON report of any version
        if data.get("version", 1) not in versions:
            *most, last = map(str, versions)
            expected = f"{', '.join(most)} or {last}" if most else last
            problems.append(
                (("version",), f"inventory: version: expected {expected}, got {data['version']!r}")
            )
        if "resources" not in data:
            problems.append(((), "inventory: expected a 'resources' list"))
        if data.get("captured_at") is not None:
            try:
                captured_at = parse_time("captured_at", data["captured_at"])
            except FieldProblem as exc:
                problems.append((("captured_at",), f"inventory: {exc}"))
        gaps = list(_gaps(data.get("coverage_gaps"), problems))
        items, where = data.get("resources", []), ("resources",)
    if reader is None or not isinstance(items, Streamed):
        reader = _Resources()
        if not isinstance(items, list):
            problems.append((where, "inventory: 'resources' must be a list of resources"))
            items = []
        for raw in items:
            reader.take(raw)
    problems += (((*where, *at), message) for at, message in reader.problems)
    return Inventory(path, tuple(reader.resources), tuple(gaps), captured_at)


@cache
def _report_keys() -> tuple[str, ...]:
    """A JSON report is an inventory too: its other sections are known, and ignored (versions
    2 and 3 have the same sections; their findings differ)."""
    schema = files("gpu_audit.report").joinpath("report-v3.schema.json").read_text("utf-8")
    return tuple(json.loads(schema)["properties"])


class _Resources:
    """Resources converted one raw mapping at a time (as the streamed reader parses them), with
    their problems by path from the list (index, key...)."""

    def __init__(self) -> None:
        self.resources: list[Resource] = []
        self.problems: list[tuple[Path, str]] = []
        self.seen: set[tuple[str, str]] = set()
        self.index = 0

    def take(self, raw: Any) -> None:
        """Read one raw resource of the list: a problem per bad field, located by index and key
        (a repeated (provider, id) is one too), and the Resource kept when it reads."""
        index = self.index
        self.index += 1
        if not isinstance(raw, Mapping):
            self.problems.append(((index,), f"resource #{index + 1}: expected a mapping of fields"))
            return
        resource, found = read_mapping(raw, hints=len(self.problems) < MAX_ERRORS)
        label = _label(raw, index) if found else ""
        for problem in found:
            self.problems.append(
                ((index, *problem.key.split(".")), f"{label}: {problem.key}: {problem}")
            )
        if resource is None:
            return
        identity = (resource.provider, resource.id)
        if identity in self.seen:
            self.problems.append(
                ((index, "id"), f"{_label(raw, index)}: id: duplicate resource id")
            )
        self.seen.add(identity)
        self.resources.append(resource)


def _label(raw: Mapping[str, Any], index: int) -> str:
    """How a message names a resource: by its id where it has one, else by position."""
    if isinstance(raw.get("id"), str | int) and not isinstance(raw.get("id"), bool):
        return f"resource '{printable(raw['id'])}'"
    return f"resource #{index + 1}"


def _gaps(items: Any, problems: list[tuple[Path, str]]) -> Iterator[CoverageGap]:
    """Coverage gaps: a malformed one is an error, never dropped (that would hide a blind spot)."""
    where: Path = ("coverage_gaps",)
    if items is None:
        return
    if not isinstance(items, list):
        problems.append((where, f"coverage_gaps: expected a list of gaps, got {shown(items)}"))
        return
    for index, raw in enumerate(items):
        at = (*where, index)
        label = f"coverage gap #{index + 1}"
        if not isinstance(raw, Mapping):
            problems.append((at, f"{label}: expected a mapping of {', '.join(GAP_KEYS)}"))
            continue
        values: dict[str, str | None] = {}
        for key, value in raw.items():
            if key not in GAP_KEYS:
                hint = suggest(key, GAP_KEYS)
                problems.append(((*at, key), f"{label}: unknown key '{printable(key)}'{hint}"))
            elif value is not None and not isinstance(value, str):
                quote = (
                    " (quote it: an unquoted number loses leading zeros)"
                    if key == "account"
                    else ""
                )
                problems.append(
                    ((*at, key), f"{label}: {key}: expected str, got {shown(value)}{quote}")
                )
            else:
                values[key] = value
        missing = [key for key in ("provider", "scope") if not raw.get(key)]
        if missing:
            problems.append((at, f"{label}: needs {' and '.join(missing)}"))
            continue
        yield CoverageGap(
            provider=str(values.get("provider")),
            scope=str(values.get("scope")),
            error=values.get("error") or "unknown",
            message=values.get("message") or "",
            account=values.get("account"),
            region=values.get("region"),
        )
