"""The JSON report's `resources`: each resource's canonical mapping (`canonical.to_mapping`,
out-of-bounds numbers null), read in one call per resource and encoded in batches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import StrEnum
from operator import attrgetter
from typing import Any

from gpu_audit.core.canonical import to_mapping
from gpu_audit.core.fields import FIELDS
from gpu_audit.core.resource import Resource
from gpu_audit.report.fastjson import flat as jsonflat
from gpu_audit.report.fastjson import stream as jsonstream

# (section or None, key, minimum, maximum) of every bounded number in the resource mapping
_BOUNDS = tuple(
    (spec.group, spec.key, spec.minimum, spec.maximum)
    for spec in FIELDS.values()
    if spec.minimum is not None or spec.maximum is not None
)


def bounded(mapping: dict[str, Any]) -> dict[str, Any]:
    """The mapping with numbers outside their field's bounds as null, so the document always
    validates (the input edge refuses such values; a report never carries one)."""
    for group, key, low, high in _BOUNDS:
        holder = mapping[group] if group else mapping
        value = holder.get(key)
        if value is not None and not (
            (low is None or value >= low) and (high is None or value <= high)
        ):
            holder[key] = None
    return mapping


# Every field's value in field order (the mapping's key order), in one call.
_SPECS = tuple(FIELDS.values())
_VALUES = attrgetter(*(spec.name for spec in _SPECS))
# times are written as their ISO text (as `to_mapping` does), in a section too
_TIMES = tuple(i for i, s in enumerate(_SPECS) if s.type == "datetime")
_INDEX_BOUNDS = tuple(
    (i, spec.minimum, spec.maximum)
    for i, spec in enumerate(_SPECS)
    if spec.minimum is not None or spec.maximum is not None
)
# fields whose number of scalars varies: tag maps (key and value each) and lists
_TAGS = frozenset(i for i, spec in enumerate(_SPECS) if spec.type == "tag")
_VARYING = tuple(i for i, spec in enumerate(_SPECS) if spec.type in ("tag", "list"))
_KEYED = frozenset(spec.name for spec in _SPECS if spec.type == "tag")
assert all(issubclass(s.enum, StrEnum) for s in _SPECS if s.type == "enum" and s.enum is not None)
_PAD = "    "  # the depth of the report's `resources` items


def texts(resources: Iterable[Resource]) -> Iterator[jsonstream.Raw]:
    """The `resources` array's items, as `jsonstream` writes `bounded(to_mapping(r))`."""
    templates = jsonflat.Templates(_PAD, keyed=_KEYED)

    def fast(resource: Resource, out: list[Any]) -> jsonflat.Template | None:
        values = list(_VALUES(resource))  # enums are text enums: encoded as their values
        for i in _TIMES:
            when = values[i]
            values[i] = when.isoformat().replace("+00:00", "Z") if when else None
        for i, low, high in _INDEX_BOUNDS:
            value = values[i]
            if value is not None and not (
                (low is None or value >= low) and (high is None or value <= high)
            ):
                values[i] = None
        flat: list[Any] = []
        shape: list[Any] = []
        start = 0
        for i in _VARYING:
            flat += values[start:i]
            start = i + 1
            value = values[i]
            if i in _TAGS:
                for key, tag in dict(value).items():
                    if type(key) is not str:
                        return None  # written as `jsonstream` writes such a key
                    flat += (key, tag)
                shape.append(len(value))
            elif isinstance(value, list | tuple):
                flat += value
                shape.append(len(value))
            else:
                flat.append(value)
                shape.append(None)
        flat += values[start:]
        source = resource.source
        if source.path is not None:
            flat += (source.path, source.line)
        if source.note:
            flat.append(source.note)
        key = (*shape, source.path is not None, bool(source.note))
        template = templates.get(key, lambda: _mapping(resource), flat)
        if template is not None:
            out += flat
        return template

    return jsonflat.items(resources, _PAD, fast, _text)


def _mapping(resource: Resource) -> dict[str, Any]:
    return bounded(to_mapping(resource))


def _text(resource: Resource) -> str:
    return jsonstream.text(_mapping(resource), _PAD)
