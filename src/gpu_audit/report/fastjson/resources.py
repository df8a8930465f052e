"""The JSON report's `resources`: each resource's canonical mapping (`canonical.to_mapping`,
out-of-bounds numbers null), read in one call per resource and encoded in batches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields
from enum import StrEnum
from operator import attrgetter, is_
from typing import Any

from gpu_audit.core.canonical import to_mapping
from gpu_audit.core.fields import FIELDS, SECTIONS
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


_SPECS = tuple(FIELDS.values())
_KEYED = frozenset(spec.name for spec in _SPECS if spec.type == "tag")
assert all(issubclass(s.enum, StrEnum) for s in _SPECS if s.type == "enum" and s.enum is not None)
_PAD = "    "  # the depth of the report's `resources` items
# Each section and the instance a resource holds when nothing filled it (the class's default):
# most of a fleet's resources leave most sections (billing, run, training, …) empty.
_DEFAULTS = tuple((f.name, f.default) for f in fields(Resource) if f.name in SECTIONS)
_SECTIONS = attrgetter(*(name for name, _ in _DEFAULTS))
_EMPTY = tuple(default for _, default in _DEFAULTS)


class _Plan:
    """How a resource whose empty sections are `empty` is read: the fields of its other
    sections and its top-level fields, in field order (an empty section's nulls are held in its
    template's text, `kept`, and never read or encoded)."""

    __slots__ = ("bounds", "kept", "tags", "times", "values", "varying")

    def __init__(self, empty: tuple[bool, ...]) -> None:
        skipped = {name for (name, _), gone in zip(_DEFAULTS, empty, strict=True) if gone}
        specs = [spec for spec in _SPECS if spec.group not in skipped]
        self.kept = tuple(sorted(skipped))
        # every field's value in field order (the mapping's key order), in one call
        self.values = attrgetter(*(spec.name for spec in specs))
        # times are written as their ISO text (as `to_mapping` does), in a section too
        self.times = tuple(i for i, s in enumerate(specs) if s.type == "datetime")
        self.bounds = tuple(
            (i, spec.minimum, spec.maximum)
            for i, spec in enumerate(specs)
            if spec.minimum is not None or spec.maximum is not None
        )
        # fields whose number of scalars varies: tag maps (key and value each) and lists
        self.tags = frozenset(i for i, spec in enumerate(specs) if spec.type == "tag")
        self.varying = tuple(i for i, spec in enumerate(specs) if spec.type in ("tag", "list"))


def texts(resources: Iterable[Resource]) -> Iterator[jsonstream.Raw]:
    """The `resources` array's items, as `jsonstream` writes `bounded(to_mapping(r))`."""
    templates = jsonflat.Templates(_PAD, keyed=_KEYED)
    plans: dict[tuple[bool, ...], _Plan] = {}

    def fast(resource: Resource, out: list[Any]) -> jsonflat.Template | None:
        empty = tuple(map(is_, _SECTIONS(resource), _EMPTY))
        plan = plans.get(empty)
        if plan is None:
            plan = plans[empty] = _Plan(empty)
        values = list(plan.values(resource))  # enums are text enums: encoded as their values
        for i in plan.times:
            when = values[i]
            values[i] = when.isoformat().replace("+00:00", "Z") if when else None
        for i, low, high in plan.bounds:
            value = values[i]
            if value is not None and not (
                (low is None or value >= low) and (high is None or value <= high)
            ):
                values[i] = None
        flat: list[Any] = []
        shape: list[Any] = []
        start = 0
        tags = plan.tags
        for i in plan.varying:
            flat += values[start:i]
            start = i + 1
            value = values[i]
            if i in tags:
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
        key = (empty, *shape, source.path is not None, bool(source.note))
        template = templates.get(key, lambda: _mapping(resource), flat, plan.kept)
        if template is not None:
            out += flat
        return template

    return jsonflat.items(resources, _PAD, fast, _text)


def _mapping(resource: Resource) -> dict[str, Any]:
    return bounded(to_mapping(resource))


def _text(resource: Resource) -> str:
    return jsonstream.text(_mapping(resource), _PAD)
