"""The streamed JSON reader (`core.jsonitems`, used for large files) reads every inventory as
the ordinary reader does: the inventory tests run again here with every JSON file streamed, and
documents the streamed reader hands back (invalid JSON, NaN, a repeated key) keep their messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.test_inventory import *  # noqa: F403 - the same tests, every JSON inventory streamed

from gpu_audit.collectors import inventory
from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.core import jsonitems
from gpu_audit.errors import InputError

GOOD = {"provider": "aws", "id": "i-1", "instance_type": "p4d.24xlarge", "region": "us-east-1"}


@pytest.fixture(autouse=True)
def streamed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every JSON inventory streamed; the list counts the documents the streamed reader read."""
    calls: list[int] = []
    real = jsonitems.load_streamed

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(inventory, "STREAMED_JSON_CHARS", 0)
    monkeypatch.setattr(inventory, "load_streamed", counted)
    return calls


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(streamed, ordinary): the inventory, or the error's message lines."""

    def read() -> Any:
        try:
            loaded = load_inventory(str(path))
        except InputError as exc:
            return getattr(exc, "messages", None) or [str(exc)]
        return (loaded.resources, loaded.coverage_gaps, loaded.captured_at)

    first = read()
    with monkeypatch.context() as patched:
        patched.setattr(inventory, "STREAMED_JSON_CHARS", 1 << 40)
        second = read()
    return first, second


DOCUMENTS = [
    json.dumps({"version": 1, "resources": [GOOD, {**GOOD, "id": "i-2"}]}),
    json.dumps([GOOD, {**GOOD, "id": "i-2"}]),  # a top-level list
    json.dumps({"resources": [GOOD, GOOD]}),  # a duplicate id
    json.dumps({"resources": [GOOD, 7, {**GOOD, "id": "i-3", "gpu": {"count": -1}}]}),
    json.dumps({"resources": {"a": 1}}),
    json.dumps({"version": 1}),
    json.dumps({"resources": [], "surprise": 1, "coverage_gaps": [{"provider": "aws"}]}),
    json.dumps({"version": 1, "resources": [GOOD]}) + "\n  \n",
    '{"resources": [' + json.dumps(GOOD) + "], }",  # invalid JSON
    '{"resources": [' + json.dumps(GOOD) + ",]}",
    '{"resources": [' + json.dumps(GOOD) + "]} extra",
    '{"resources": [{"provider": "aws", "id": "i-1", "gpu": {"count": NaN}}]}',
    '{"resources": [' + json.dumps(GOOD) + '], "resources": []}',  # the last one counts
    '{"resources": [' + json.dumps({**GOOD, "name": "\\ud800"}) + "]}",  # half a surrogate
    '{"resources": [{"provider": "aws", "id": "i-1", "gpu": {"count": 1' + "0" * 5000 + "}}]}",
    "[]",
    "{}",
    "7",
    "",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_streamed_and_ordinary_readers_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    path = tmp_path / "inv.json"
    path.write_text(text, encoding="utf-8")
    streamed, ordinary = _both(path, monkeypatch)
    assert streamed == ordinary


def test_large_reports_stream_and_skip_their_findings(tmp_path: Path, streamed: list[int]) -> None:
    """A v3 report reads as an inventory through the streamed reader, its findings never held."""
    from tests.report.conftest import demo_scan

    from gpu_audit.report import render

    path = tmp_path / "report.json"
    path.write_text(render("json", demo_scan()), encoding="utf-8")
    loaded = load_inventory(str(path))
    assert streamed == [1]
    assert len(loaded.resources) == len(json.loads(path.read_text())["resources"])
    seen: list[Any] = []
    data = jsonitems.load_streamed(path.read_text(), "resources", seen.append, ("findings",))
    assert data["findings"] == [] and data["resources"] == len(seen) == len(loaded.resources)
