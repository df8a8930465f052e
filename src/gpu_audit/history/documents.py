"""An audit's documents: its resources in full (a row of values each), columns, checks, lines.

`history show` rebuilds the resources from theirs; comparisons never read it. One C-level getter
per resource and one `json.dumps` per 2,000 resources cost a fraction of a mapping per resource
(and measured ~10% less than a `json.dumps` per field).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from datetime import datetime
from operator import attrgetter
from typing import Any

from gpu_audit.core.canonical import from_mapping
from gpu_audit.core.fields import FIELDS
from gpu_audit.core.resource import Resource

_NAMES = (*FIELDS, "source.path", "source.line", "source.note")
# groups the catalog shares between resources (a few dozen distinct objects in 100k resources):
# written once each, a row holds its index in `shared`
_SHARED = {
    group: tuple(name for name in _NAMES if name.startswith(f"{group}."))
    for group in ("gpu", "price")
}
_OWN = tuple(name for name in _NAMES if name.partition(".")[0] not in _SHARED)
_ROW = attrgetter(*_OWN)


def _plain(value: Any) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    return dict(value)  # a tag mapping that is not a dict


def pack(resources: Sequence[Resource], chunk: int = 2000) -> bytes:
    """`{"fields": [...], "shared": {group: {"fields", "values"}}, "rows": [[[...], i, ...]]}`,
    compressed as it is written (a chunk of rows at a time, so 100k resources never exist as
    one JSON string). A row is the resource's own values, then its index in each shared group."""
    compressor = zlib.compressobj(1)
    shared: dict[str, dict[str, Any]] = {}
    columns = []
    for group, names in _SHARED.items():
        objects = list(map(attrgetter(group), resources))
        at: dict[int, int] = {}
        for item in objects:
            if id(item) not in at:
                at[id(item)] = len(at)
                shared.setdefault(group, {"fields": names, "values": []})["values"].append(
                    tuple(getattr(item, name.partition(".")[2]) for name in names)
                )
        columns.append(list(map(at.__getitem__, map(id, objects))))
    head = json.dumps({"fields": _OWN, "shared": {g: shared.get(g) for g in _SHARED}})
    parts = [compressor.compress(f'{head[:-1]},"rows":['.encode())]
    for start in range(0, len(resources), chunk):
        end = start + chunk
        rows = zip(map(_ROW, resources[start:end]), *(c[start:end] for c in columns), strict=True)
        text = json.dumps(list(rows), default=_plain)
        parts.append(compressor.compress(("," if start else "").encode() + text[1:-1].encode()))
    parts.append(compressor.compress(b"]}"))
    parts.append(compressor.flush())
    return b"".join(parts)


def unpack(blob: bytes) -> list[Resource]:
    """The resources of an audit's `resources` document (schema 1's whole rows, or later ones with
    their shared groups joined back)."""
    document = json.loads(zlib.decompress(blob))
    names = document["fields"]
    if "shared" not in document:  # schema 1: a row holds every value
        return [from_mapping(_nested(names, row)) for row in document["rows"]]
    groups = [document["shared"][group] or {"fields": [], "values": []} for group in _SHARED]
    names = [*names, *(name for group in groups for name in group["fields"])]
    out = []
    for own, *indexes in document["rows"]:
        row = [*own]
        for group, index in zip(groups, indexes, strict=True):
            row += group["values"][index]
        out.append(from_mapping(_nested(names, row)))
    return out


def encode_checks(rules: Sequence[str], rows: Sequence[int], missing: Sequence[str]) -> bytes:
    """Not-evaluated checks in order, as columns: each check's rule and missing field an index
    into `rules` and `missing`, its resource row in `row`."""
    names, fields = dict.fromkeys(rules), dict.fromkeys(missing)
    name_at = {name: i for i, name in enumerate(names)}
    field_at = {field: i for i, field in enumerate(fields)}
    body = {
        "rules": list(names),
        "missing": list(fields),
        "rule": list(map(name_at.__getitem__, rules)),
        "row": list(rows),
        "field": list(map(field_at.__getitem__, missing)),
    }
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 1)


def unpack_checks(blob: bytes) -> list[tuple[str, int, str]]:
    """(rule id, resource row, missing field) per check, in order."""
    document = json.loads(zlib.decompress(blob))
    rules = map(document["rules"].__getitem__, document["rule"])
    missing = map(document["missing"].__getitem__, document["field"])
    return list(zip(rules, document["row"], missing, strict=True))


def encode_columns(columns: dict[str, list[Any]]) -> bytes:
    """Equal-length columns by name as `{"columns": {...}}`, compressed."""
    text = json.dumps({"columns": columns}, separators=(",", ":"))
    return zlib.compress(text.encode(), 1)


def decode_columns(blob: bytes) -> dict[str, list[Any]]:
    """A column document's columns by name."""
    columns: dict[str, list[Any]] = json.loads(zlib.decompress(blob))["columns"]
    return columns


def encode_lines(lines: Sequence[str]) -> bytes:
    """Strings without a newline (fingerprints), one a line, uncompressed: random hex gains
    little from zlib and splits back at C speed."""
    return "\n".join(lines).encode()


def decode_lines(blob: bytes) -> list[str]:
    """A lines document's lines (none for an empty blob)."""
    return blob.decode().split("\n") if blob else []


def _nested(names: list[str], row: Sequence[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in zip(names, row, strict=True):
        if value is None:
            continue
        group, dot, key = name.partition(".")
        if group == "source" and key == "note":
            out["note"] = value
        elif dot:
            out.setdefault(group, {})[key] = value
        else:
            out[name] = value
    return out
