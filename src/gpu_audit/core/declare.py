"""Declaring a canonical field of the resource model (`gpu_audit.core.resource` and its sections in
`gpu_audit.core.sections`): the one place its doc, sources, unit and bounds are written."""

from __future__ import annotations

from dataclasses import field
from typing import Any


def canonical(
    doc: str,
    *,
    sources: str,
    type: str | None = None,
    unit: str | None = None,
    ordered: bool = False,
    required: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    anchored: bool = False,
    default: Any = None,
    factory: Any = None,
) -> Any:  # Any: dataclasses.field's own return type
    """Declare a canonical field: the one line that the field table (`gpu_audit.core.fields`), the
    policy loader, the inventory reader, the JSON report schema and the docs derive from.

    `type` overrides the type read from the annotation (`gpu` for a GPU class); `unit` makes
    durations (`24h`, `30m`) convert to it; `ordered` lets rules compare by GPU class order;
    `sources` says what fills the field; `minimum` and `maximum` bound a number (a value out of
    them is impossible, and refused where it enters); `anchored`: a finding about the field when
    a job file leaves it out points at the job's own line in a larger document (`JobDraft.anchor`:
    a CloudFormation logical id, a Ray node type), not at the document's first line.
    """
    meta = {
        "doc": doc,
        "sources": sources,
        "type": type,
        "unit": unit,
        "ordered": ordered,
        "minimum": minimum,
        "maximum": maximum,
        "anchored": anchored,
    }
    if required:
        return field(metadata=meta)
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)
