"""What a job format is, and the draft that parsers fill in field by field with the key's line."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from gpu_audit.catalog import canonical_gpu
from gpu_audit.fields import build_resource
from gpu_audit.model import Capacity, Kind, Resource, SourceRef, State, Workload
from gpu_audit.yamlsrc import Document, is_templated

# Labels or tags that declare a job's caps where its format has no field (docs/estimate.md);
# GCP label keys allow no `/`, so the dashed spelling is read too.
LIMIT_TAGS = {
    "limits.budget_usd": ("gpu-audit/budget-usd", "gpu-audit-budget-usd"),
    "limits.max_runtime_hours": ("gpu-audit/max-runtime-hours", "gpu-audit-max-runtime-hours"),
}


class JobFormat(ABC):
    """One job-config format. `detect` is cheap and content-based; `parse` maps to the model."""

    name: ClassVar[str]

    @abstractmethod
    def detect(self, document: Document, path: str) -> bool:
        """Does this document look like this format? Judge by content, never by file name alone."""

    @abstractmethod
    def parse(self, document: Document, path: str) -> list[Resource]:
        """One Resource per GPU job in the document; [] for a recognised config with no GPUs."""


@dataclass
class JobDraft:
    """A job being parsed: canonical fields set one at a time, each with the line it came from.

    `set("capacity", Capacity.SPOT, line)` records the value and that `capacity` findings point at
    `line`. Templated values (`${VAR}`, `{{ x }}`, `!Ref`) are ignored: the field stays missing,
    but its line is still kept so a finding can point at it.
    """

    provider: str
    path: str
    document: Document
    name: str | None = None

    def __post_init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        self.tags: dict[str, str] = {}
        self.note: str | None = None

    def set(self, field: str, value: Any, line: int | None = None) -> None:
        if line is not None and value is not None:  # an absent field has no line to point at
            self.lines[field] = line
        if value is None or is_templated(value):
            return
        self.values[field] = value

    def tag(self, key: Any, value: Any) -> None:
        if key is None or value is None or is_templated(key) or is_templated(value):
            return
        self.tags[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)

    def get(self, field: str) -> Any:
        return self.values.get(field)

    def build(self, suppressions: dict[int, dict[str, str]] | None = None) -> Resource:
        values = dict(self.values)
        model = values.get("gpu.model")
        values["gpu.model"] = canonical_gpu(model) or model if isinstance(model, str) else None
        if values.get("data.uris"):
            values["data.uris"] = tuple(values["data.uris"])
        else:
            values.pop("data.uris", None)
        source = SourceRef(
            path=self.path,
            line=self.document.line,
            document=self.document.index,
            key_lines=dict(self.lines),
            suppressions=suppressions or {},
            note=self.note,
        )
        values.setdefault("capacity", Capacity.ON_DEMAND)
        for field, keys in LIMIT_TAGS.items():  # for formats with no field of their own
            for key in keys:
                number = as_number(self.tags.get(key))
                if number is not None and number >= 0:
                    values.setdefault(field, number)
        values["workload"] = Workload(values.get("workload", Workload.TRAINING))
        return build_resource(
            values,
            kind=Kind.JOB,
            provider=self.provider,
            id=self.name or f"{self.path}#{self.document.index + 1}",
            name=self.name,
            state=State.DEFINED,
            tags=dict(self.tags),
            source=source,
        )


_TRUE = {"true", "yes", "on", "1", "y"}
_FALSE = {"false", "no", "off", "0", "n"}


def as_bool(value: Any) -> bool | None:
    """`true`, `"true"`, `yes`, `"Yes"`, 1 → True; templated or unknown text → None (missing)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return bool(value)
    if isinstance(value, str) and not is_templated(value):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def as_number(value: Any) -> float | None:
    """A number, or a numeric string; anything else (templated, text) → None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and not is_templated(value):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None
