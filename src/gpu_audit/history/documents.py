"""An audit's resources in full, as one compressed JSON document: a row of values per resource.

`history show` rebuilds the resources from it; comparisons never read it. One C-level getter and
one `json.dumps` for the whole fleet cost a fraction of a per-resource mapping.
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


def _nested(names: list[str], row: list[Any]) -> dict[str, Any]:
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
