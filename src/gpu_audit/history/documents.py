"""Compressed JSON documents of an audit: its resources in full (columns), its not-evaluated checks.

`history show` rebuilds the resources from them; comparisons never read them. Resources are
written a column (field) at a time: one C-level getter and one `json.dumps` per field, fields no
resource has are left out, and 100k resources never exist as one JSON string.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Any

from gpu_audit.canonical import from_mapping
from gpu_audit.fields import FIELDS
from gpu_audit.model import Resource

_NAMES = (*FIELDS, "source.path", "source.line", "source.note")
_GETTERS = {name: attrgetter(name) for name in _NAMES}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return dict(value)  # a tag mapping that is not a dict


def pack(resources: Sequence[Resource]) -> bytes:
    """`{"count": N, "columns": {field: [value per resource], ...}}`, compressed as written."""
    compressor = zlib.compressobj(1)
    parts = [compressor.compress(f'{{"count":{len(resources)},"columns":{{'.encode())]
    comma = ""
    for name, getter in _GETTERS.items():
        column = list(map(getter, resources))
        if column.count(None) == len(column):
            continue
        text = f"{comma}{json.dumps(name)}:{json.dumps(column, default=_plain)}"
        parts.append(compressor.compress(text.encode()))
        comma = ","
    parts.append(compressor.compress(b"}}"))
    parts.append(compressor.flush())
    return b"".join(parts)


def unpack(blob: bytes) -> list[Resource]:
    document = json.loads(zlib.decompress(blob))
    if "rows" in document:  # schema 1: a row of values per resource
        names, rows = document["fields"], document["rows"]
    else:
        columns = document["columns"]
        names = list(columns)
        rows = list(zip(*columns.values(), strict=True)) if names else [()] * document["count"]
    return [from_mapping(_nested(names, row)) for row in rows]


def encode_checks(checks: Iterable[tuple[str, int, str]]) -> bytes:
    """Not-evaluated checks, (rule id, resource row, missing field) each, in order, as
    `{"rules", "missing", "rows": [[rule, row, missing], ...]}` (rule and missing: indexes)."""
    rules: dict[str, int] = {}
    missing: dict[str, int] = {}
    rows = [
        (rules.setdefault(rule, len(rules)), row, missing.setdefault(what, len(missing)))
        for rule, row, what in checks
    ]
    body = {"rules": list(rules), "missing": list(missing), "rows": rows}
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 1)


def unpack_checks(blob: bytes) -> list[tuple[str, int, str]]:
    """(rule id, resource row, missing field) per check, in order."""
    document = json.loads(zlib.decompress(blob))
    rules, missing = document["rules"], document["missing"]
    return [(rules[r], row, missing[m]) for r, row, m in document["rows"]]


def encode_columns(columns: dict[str, list[Any]]) -> bytes:
    """Equal-length columns by name as `{"columns": {...}}`, compressed."""
    text = json.dumps({"columns": columns}, separators=(",", ":"))
    return zlib.compress(text.encode(), 1)


def decode_columns(blob: bytes) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = json.loads(zlib.decompress(blob))["columns"]
    return columns


def encode_lines(lines: Sequence[str]) -> bytes:
    """Strings without a newline (fingerprints), one a line, uncompressed: random hex gains
    little from zlib and splits back at C speed."""
    return "\n".join(lines).encode()


def decode_lines(blob: bytes) -> list[str]:
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
