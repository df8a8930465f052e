"""Saved inventories: canonical fields in YAML or JSON, located errors, reports read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_audit.canonical import to_mapping
from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.errors import InputError
from gpu_audit.model import Capacity, Kind
from gpu_audit.report import render
from tests.conftest import FIXTURES, NOW
from tests.report.conftest import check_scan, demo_scan

DEMO = str(FIXTURES / "inventory" / "demo.yaml")


def test_demo_inventory_loads_with_capture_time() -> None:
    inventory = load_inventory(DEMO)
    assert len(inventory.resources) == 47
    assert inventory.captured_at == NOW
    providers = {r.provider for r in inventory.resources}
    assert providers == {"aws", "gcp"}
    assert {r.capacity for r in inventory.resources} >= {Capacity.SPOT, Capacity.ON_DEMAND}


def test_a_json_report_reads_back_as_the_same_inventory(tmp_path: Path) -> None:
    for result in (demo_scan(), check_scan()):
        path = tmp_path / "report.json"
        path.write_text(render("json", result))
        again = load_inventory(str(path))
        assert [to_mapping(r) for r in again.resources] == [to_mapping(r) for r in result.resources]
    assert any(r.kind is Kind.JOB and r.source.note for r in again.resources)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "resources:\n  - {provider: aws, id: i-1, colour: red}\n",
            ":2: resource 'i-1': colour: unknown field 'colour'",
        ),
        (
            "resources:\n  - provider: aws\n    id: i-1\n    gpu: {count: eight}\n",
            ":4: resource 'i-1': gpu.count: expected int",
        ),
        (
            "resources:\n  - {provider: aws, id: i-1}\n  - {provider: aws, id: i-1}\n",
            ":3: resource 'i-1': id: duplicate resource id",
        ),
        (
            "resources:\n  - {id: i-1}\n",
            "resource 'i-1': provider: every resource needs a provider",
        ),
        ("captured_at: yesterday\nresources: []\n", ":1: inventory: expected an ISO 8601 time"),
        ("machines: []\n", "inventory: expected a 'resources' list"),
        ("resources:\n  - [not, a, mapping]\n", "resource #1: expected a mapping of fields"),
    ],
)
def test_errors_name_file_line_resource_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        load_inventory(str(path))
    assert str(raised.value).startswith(str(path))
    assert message in str(raised.value)


def test_json_inventory_errors_name_the_index(tmp_path: Path) -> None:
    path = tmp_path / "inv.json"
    path.write_text(
        json.dumps(
            {
                "resources": [
                    {"provider": "aws", "id": "a"},
                    {"provider": "aws", "id": "b", "state": "on"},
                ]
            }
        )
    )
    with pytest.raises(
        InputError, match=r"inv.json: resources\[1\]: resource 'b': state: 'on' is not one of"
    ):
        load_inventory(str(path))
    path.write_text('{"resources": [')
    with pytest.raises(InputError, match=r"inv.json:1:16: invalid JSON"):
        load_inventory(str(path))


def test_hostile_json_ends_in_one_message(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        load_inventory(str(path))
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(InputError, match="binary content"):
        load_inventory(str(path))
