"""The field table: every canonical field, derived once from its declaration in `core/resource.py`.

The policy loader's known fields, the inventory reader and writer (`canonical.py`), the job
draft, the JSON report schema's resource part and docs/policy-language.md all come from `FIELDS`
(the last two are held to it by tests/test_fields.py). Adding a field is one `canonical(...)`
line in core/resource.py plus whatever sets it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, fields
from enum import Enum
from operator import attrgetter
from typing import Any

from gpu_audit.core import resource as model
from gpu_audit.core.frozen import record
from gpu_audit.core.resource import Resource

Getter = Callable[[Resource], Any]
EnumType = type[Enum]

# an annotation with `| None` removed → the field's type in the policy language
_TYPES = {
    "str": "str",
    "int": "number",
    "float": "number",
    "bool": "bool",
    "tuple[str, ...]": "list",
    "datetime": "datetime",
    "Mapping[str, str]": "tag",
}


@record
class FieldSpec:
    """One canonical field: its dotted name, type, group and documentation."""

    name: str  # dotted, as rules write it: `gpu.model`, `capacity`
    type: str  # str | enum | number | bool | list | datetime | gpu | tag
    getter: Getter
    doc: str
    group: str | None = None  # the section (`gpu` of `gpu.model`); None at the top level
    unit: str | None = None  # hours | minutes: durations like `24h` convert to it
    ordered: bool = False  # rules may compare it by GPU class order (`at-most`)
    sources: str = ""
    choices: frozenset[str] | None = None  # enum values
    integer: bool = False  # a number that must be whole (counts)
    required: bool = False  # every resource has it
    enum: EnumType | None = None
    minimum: float | None = None
    maximum: float | None = None
    anchored: bool = False  # left out of a job file, its findings point at the job's own line

    def impossible(self, value: float) -> str | None:
        """Why a number cannot be this field's value (NaN, infinity, out of bounds), or None."""
        return out_of_bounds(value, self.minimum, self.maximum, integer=self.integer)

    @property
    def key(self) -> str:
        """The name inside its group: `model` for `gpu.model`."""
        return self.name.rpartition(".")[2]


def out_of_bounds(
    value: float, minimum: float | None, maximum: float | None = None, *, integer: bool = False
) -> str | None:
    """Why a number cannot be a value bounded so (NaN, infinity, out of bounds, a fraction of a
    count), or None: the one wording of a field's bounds and of a format's own counts."""
    if not math.isfinite(value):
        return f"expected a finite number, got {value}"
    if minimum is not None and value < minimum:
        return f"{value:g} is below the minimum {minimum:g}"
    if maximum is not None and value > maximum:
        return f"{value:g} is above the maximum {maximum:g}"
    if integer and not float(value).is_integer():
        return f"expected a whole number, got {value:g}"
    return None


def _annotation(text: str) -> str:
    return text.replace(" | None", "").strip()


def _spec(name: str, group: str | None, declared: Any) -> FieldSpec:
    meta = declared.metadata
    annotation = _annotation(str(declared.type))
    enum = getattr(model, annotation, None)
    if isinstance(enum, type) and issubclass(enum, Enum):
        type_ = "enum"
        choices: frozenset[str] | None = frozenset(member.value for member in enum)
    else:
        type_ = _TYPES[annotation]
        enum, choices = None, None
    return FieldSpec(
        name=name,
        type=meta["type"] or type_,
        getter=_unknown_is_missing(name) if choices and "unknown" in choices else attrgetter(name),
        doc=meta["doc"],
        group=group,
        unit=meta["unit"],
        ordered=meta["ordered"],
        sources=meta["sources"],
        choices=choices,
        integer=annotation == "int",
        required=declared.default is MISSING and declared.default_factory is MISSING,
        enum=enum,
        minimum=meta["minimum"],
        maximum=meta["maximum"],
        anchored=meta["anchored"],
    )


def _unknown_is_missing(name: str) -> Getter:
    """`capacity: unknown` and `workload: unknown` say the source did not tell: to a rule that is
    missing data (not evaluated), never a value to compare."""
    get = attrgetter(name)

    def known(resource: Resource) -> Any:  # Any: a field's value, typed by its spec at run time
        value = get(resource)
        return None if value == "unknown" else value

    return known


def _walk() -> Iterator[FieldSpec]:
    for declared in fields(Resource):
        if "doc" in declared.metadata:
            yield _spec(declared.name, None, declared)
        elif declared.name in SECTIONS:
            for inner in fields(SECTIONS[declared.name]):
                yield _spec(f"{declared.name}.{inner.name}", declared.name, inner)


# the grouped fields of a Resource: `gpu` → Gpu, `price` → Price
SECTIONS: dict[str, type] = {
    f.name: type(f.default)
    for f in fields(Resource)
    if "doc" not in f.metadata and f.name != "source"
}
FIELDS: dict[str, FieldSpec] = {spec.name: spec for spec in _walk()}
TAG_PREFIX = "tags."


def tag_getter(key: str) -> Getter:
    """A getter of the tag `key` of a resource (None when the tag is not set)."""

    def get(resource: Resource) -> Any:  # Any: a field's value, typed by its spec at run time
        return resource.tags.get(key)

    return get


def field_spec(name: str) -> FieldSpec | None:
    """The spec of a canonical field, including any `tags.<key>`; None for unknown names."""
    if name.startswith(TAG_PREFIX) and len(name) > len(TAG_PREFIX):
        return FieldSpec(name, "tag", tag_getter(name[len(TAG_PREFIX) :]), "tag or label value")
    spec = FIELDS.get(name)
    return None if spec is None or spec.type == "tag" else spec  # rules name `tags.<key>`


def build_resource(values: Mapping[str, Any], **top: Any) -> Resource:
    """A Resource from dotted canonical values (`{"gpu.count": 8}`) and top-level ones."""
    parts: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        group, dot, key = name.partition(".")
        if dot:
            parts.setdefault(group, {})[key] = value
        else:
            top.setdefault(name, value)
    for group, inner in parts.items():
        top[group] = SECTIONS[group](**inner)
    return Resource(**top)
