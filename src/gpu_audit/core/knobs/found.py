"""A knob as read: its name (a `training.*` field), value, the file and line that state it."""

from __future__ import annotations

from typing import Any

from gpu_audit.core.frozen import record


@record
class Knob:
    """`Knob("precision", "bf16", "configs/ds.json", 7)`; `note` says why a value was not taken."""

    name: str
    value: Any
    path: str
    line: int | None
    note: str | None = None  # set with value None: stated, but not a setting (`"auto"`)
