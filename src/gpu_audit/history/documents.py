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


def pack(resources: Sequence[Resource]) -> bytes:
    text = json.dumps({"fields": _NAMES, "rows": list(map(_ROW, resources))}, default=_plain)
    return zlib.compress(text.encode(), 1)


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
