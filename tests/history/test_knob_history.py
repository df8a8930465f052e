"""The history keeps each resource's knobs beside its utilization: two quarterly scans of a
Kubernetes training pod recorded in a real SQLite file, the workers knob raised between them,
and the next audit reads the change beside the GPUs' activity before and after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpu_audit.history.knobs import knob_changes
from gpu_audit.history.load import load_audit
from gpu_audit.history.store import HistoryStore
from tests.history.conftest import run

DATES = ("2026-08-31T06:00:00Z", "2026-11-30T06:00:00Z")


def _pod(workers: int, engine: float) -> dict[str, Any]:
    return {
        "kind": "pod", "provider": "kubernetes", "id": "eks-prod/research/llama-ft-worker-0",
        "name": "llama-ft-worker-0", "cluster": "eks-prod", "region": "us-east-1",
        "state": "running", "workload": "training", "launched_at": "2026-08-01T00:00:00Z",
        "gpu": {"model": "A100-40GB", "count": 2},
        "utilization": {"gpu_avg": engine + 5, "gpu_p95": engine + 10, "window_hours": 24},
        "training": {"precision": "bf16", "workers": workers},
        "activity": {"engine_pct": engine, "tensor_pct": 30.0, "measured_by": "profiling",
                     "window_hours": 24},
    }  # fmt: skip


def test_a_knob_change_is_read_beside_the_activity_before_and_after(tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    for when, pod in zip(DATES, (_pod(0, 20.0), _pod(8, 70.0)), strict=True):
        inventory = tmp_path / f"{when[:10]}.json"
        inventory.write_text(json.dumps({"version": 1, "captured_at": when, "resources": [pod]}))
        code, _, err = run(
            "scan", "--inventory", inventory, "--history", db, "--now", when,
            "--fail-on", "none", "-q",
        )  # fmt: skip
        assert code == 0, err
    store = HistoryStore.open(str(db), create=False)
    try:
        first, second = (load_audit(store, a.id) for a in store.audits())
    finally:
        store.close()
    # the stored documents keep the knobs and the activity in full
    (was,), (now,) = first.resources, second.resources
    assert (was.training.workers, was.activity.engine_pct) == (0, 20.0)
    assert (now.training.workers, now.activity.engine_pct) == (8, 70.0)
    (change,) = knob_changes(first.resources, second.resources)
    assert (change.knob, change.was, change.now) == ("workers", "0", "8")
    assert (change.busy_before, change.busy_after) == (20.0, 70.0)
    # the first audit found the starved input pipeline; the second does not
    assert any(f.rule_id == "input-pipeline-starved" for f in first.findings)
    assert not any(f.rule_id == "input-pipeline-starved" for f in second.findings)


def test_the_next_audit_shows_the_knob_change_in_json_and_markdown(tmp_path: Path) -> None:
    import jsonschema
    from markdown_it import MarkdownIt

    from tests.conftest import ROOT

    db = tmp_path / "history.db"
    outputs = []
    for index, (when, pod) in enumerate(zip(DATES, (_pod(0, 20.0), _pod(8, 70.0)), strict=True)):
        inventory = tmp_path / f"inventory-{index}.json"
        inventory.write_text(json.dumps({"version": 1, "captured_at": when, "resources": [pod]}))
        for fmt in ("json", "markdown"):
            out = tmp_path / f"{index}.{fmt}"
            code, _, err = run(
                "scan", "--inventory", inventory, "--history", db, "--now", when,
                "--fail-on", "none", "-q", "--format", fmt, "-o", out,
            )  # fmt: skip
            assert code == 0, err
            outputs.append(out.read_text())
    report = json.loads(outputs[2])  # the second quarter's JSON
    schema = json.loads((ROOT / "src/gpu_audit/report/report-v3.schema.json").read_text())
    jsonschema.validate(report, schema)
    (change,) = report["summary"]["since"]["knob_changes"]
    assert change == {
        "location": "kubernetes/-/us-east-1/eks-prod/research/llama-ft-worker-0",
        "knob": "workers", "then": "0", "now": "8", "busy_then_pct": 20.0, "busy_now_pct": 70.0,
    }  # fmt: skip
    assert "knob_changes" not in (json.loads(outputs[0])["summary"]["since"] or {})
    tokens = MarkdownIt("commonmark").enable(["table"]).parse(outputs[3])
    cells = [
        "".join(c.content for c in (t.children or ()) if c.type == "text")
        for t in tokens
        if t.type == "inline"
    ]
    row = cells.index("workers")
    assert cells[row + 1 : row + 5] == ["0", "8", "20%", "70%"]
