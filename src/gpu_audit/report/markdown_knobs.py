"""The Markdown report's knobs: each training job's or pod's stated settings, where each was read,
and what its GPUs measured, beside its GPUs (docs/knobs.md)."""

from __future__ import annotations

import os

from gpu_audit.core.results import ScanResult
from gpu_audit.report.knobs import knob_items, measured
from gpu_audit.report.markdown_text import breakable, inline, shown_path, table

ROW_LIMIT = 50  # a fleet of pods: the first rows, and how many more


def knobs_section(result: ScanResult) -> list[str]:
    """The knobs section: each job's or pod's stated training settings with where each was read, and
    what was measured; no lines without any."""
    rows = []
    for resource in result.resources:
        items = knob_items(resource)
        said = measured(resource)
        if not items and said is None:
            continue
        gpus = f"{resource.gpu.count or '?'}× {resource.gpu.model or 'unknown'}"
        # each name that has no space may wrap at its `_`, `-` and `.` (GitHub's page width)
        cells = "; ".join(
            f"{inline(label)} {breakable(inline(value, 80))}{_at(where)}"
            for label, value, where in items
        )
        rows.append(
            [
                breakable(inline(shown_path(resource.location), 120)),
                inline(gpus, 40),
                cells or "–",
                inline(said or "–", 120),
            ]
        )
    if not rows:
        return []
    more = len(rows) - ROW_LIMIT
    lines = [
        "## Knobs",
        "",
        "The training settings each job or pod states (file:line where each was read; a knob "
        "not listed is not stated) and, for pods, what DCGM measured over the window.",
        "",
        *table(["Job or pod", "GPUs", "Knobs", "Measured"], rows[:ROW_LIMIT]),
    ]
    if more > 0:
        lines += ["", f"…and {more} more (every one in the JSON report's `training`)."]
    return lines


def _at(where: str | None) -> str:
    """` (ds.json:3)`: the file's name and line, or ` (default)`."""
    if not where:
        return ""
    if where.endswith("(default)"):
        return " (default)"
    return f" ({breakable(inline(os.path.basename(where), 120))})"
