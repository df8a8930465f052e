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

from gpu_audit.canonical import from_mapping
from gpu_audit.fields import FIELDS
from gpu_audit.model import Resource

_NAMES = (*FIELDS, "source.path", "source.line", "source.note")
_ROW = attrgetter(*_NAMES)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return dict(value)  # a tag mapping that is not a dict


def pack(resources: Sequence[Resource], chunk: int = 2000) -> bytes:
    """`{"fields": [...], "rows": [[...], ...]}`, compressed as it is written (a chunk of rows at
    a time, so 100k resources never exist as one JSON string)."""
    compressor = zlib.compressobj(1)
    parts = [compressor.compress(f'{{"fields":{json.dumps(_NAMES)},"rows":['.encode())]
    for start in range(0, len(resources), chunk):
        rows = json.dumps(list(map(_ROW, resources[start : start + chunk])), default=_plain)
        parts.append(compressor.compress(("," if start else "").encode() + rows[1:-1].encode()))
    parts.append(compressor.compress(b"]}"))
    parts.append(compressor.flush())
    return b"".join(parts)


def unpack(blob: bytes) -> list[Resource]:
    document = json.loads(zlib.decompress(blob))
    names = document["fields"]
    return [from_mapping(_nested(names, row)) for row in document["rows"]]


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
