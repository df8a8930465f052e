"""The shared value readers of jobs/values.py and the draft's note and line helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_audit.core.resource import Capacity
from gpu_audit.core.yamlsrc import load_documents
from gpu_audit.jobs import FORMATS, format_hints, load_jobs
from gpu_audit.jobs.interface import JobDraft
from gpu_audit.jobs.values import duration_hours, literal, seconds_to_hours, text, unit_hours
from gpu_audit.report.not_evaluated import hint


@pytest.mark.parametrize(
    ("value", "hours"),
    [("3600s", 1.0), ("5400.0s", 1.5), (7200, 2.0), ("7200", 2.0), ("1h", None), ("${T}", None)],
)
def test_duration_hours(value: object, hours: float | None) -> None:
    assert duration_hours(value) == hours


@pytest.mark.parametrize(
    ("value", "hours"),
    [("1h30m", 1.5), ("2d", 48.0), ("90s", 0.025), (3600, 1.0), ("1w", 168.0), ("soon", None)],
)
def test_unit_hours(value: object, hours: float | None) -> None:
    assert unit_hours(value) == hours


def test_seconds_and_text() -> None:
    assert seconds_to_hours("1800") == 0.5
    assert seconds_to_hours("${SECONDS}") is None
    assert text(" x ") == " x " and text("") is None and text("{{ .Values.x }}") is None
    assert text("run-$ID") == "run-$ID" and literal("run-$ID") is None


def test_draft_notes_lines_and_unknown() -> None:
    (document,) = load_documents("job.yaml", "a: 1\n")
    draft = JobDraft("skypilot", "job.yaml", document)
    draft.add_note(None)
    draft.add_note("first")
    draft.add_note("")
    draft.add_note("second")
    assert draft.note == "first; second"
    draft.put("region", None, 4)  # present but unusable: missing, located
    draft.mark("gpu.model", None)
    draft.unknown("capacity", 7)
    resource = draft.build()
    assert resource.region is None and resource.source.key_lines == {"region": 4, "capacity": 7}
    assert resource.capacity is None  # not the on-demand default
    draft.set("capacity", Capacity.SPOT, 8)
    assert draft.build().capacity is Capacity.SPOT


def test_parse_returns_none_for_other_formats() -> None:
    """Recognition is `parse` itself: only SkyPilot claims a SkyPilot task."""
    (document,) = load_documents("task.yaml", "resources: {accelerators: A100:1}\nrun: x\n")
    claims = {name for name, fmt in FORMATS.items() if fmt.parse(document, "task.yaml") is not None}
    assert claims == {"skypilot"}


def test_unstated_kubernetes_capacity_says_how_to_state_it(tmp_path: Path) -> None:
    """No capacity selector: capacity missing at the pod template, and the hint names one."""
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: c\n          resources:\n"
        "            limits: {nvidia.com/gpu: 1}\n"
    )
    [resource] = load_jobs([str(path)]).resources
    assert resource.capacity is None and resource.source.key_lines["capacity"] == 5
    assert "karpenter.sh/capacity-type" in hint("capacity", format_hints("kubernetes"), "job")
    assert "compute environment" in hint("capacity", format_hints("batch"), "job")
