"""Saved inventories: canonical fields in YAML or JSON, located errors, reports read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.core.canonical import to_mapping
from gpu_audit.core.resource import Capacity, Kind
from gpu_audit.errors import InputError, InputErrors
from gpu_audit.report import render
from tests.conftest import FIXTURES, NOW
from tests.report.conftest import check_scan, demo_scan

DEMO = str(FIXTURES / "inventory" / "demo.yaml")


def test_demo_inventory_loads_with_capture_time() -> None:
    inventory = load_inventory(DEMO)
    assert len(inventory.resources) == 50
    assert inventory.captured_at == NOW
    providers = {r.provider for r in inventory.resources}
    assert providers == {"aws", "gcp", "azure"}
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


def test_json_inventory_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "inv.json"
    path.write_text(
        json.dumps(
            {
                "resources": [
                    {"provider": "aws", "id": "a"},
                    {"provider": "aws", "id": "b", "state": "on"},
                ]
            },
            indent=2,
        )
    )
    with pytest.raises(InputError, match=r"inv.json:10: resource 'b': state: 'on' is not one of"):
        load_inventory(str(path))
    path.write_text('{"resources": [')
    with pytest.raises(InputError, match=r"inv.json:1:16: invalid JSON"):
        load_inventory(str(path))


def test_hostile_json_ends_in_one_message(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match=r"deep.json:1:101: nested more than 100 levels deep"):
        load_inventory(str(path))
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(InputError, match="binary content"):
        load_inventory(str(path))


def _problems(tmp_path: Path, name: str, text: str) -> list[str]:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputErrors) as raised:
        load_inventory(str(path))
    for message in raised.value.messages:
        assert message.startswith(f"{path}:") and "\n" not in message, message
    return [m.removeprefix(f"{path}:") for m in raised.value.messages]


def test_every_error_of_a_file_is_reported_with_the_field_meant(tmp_path: Path) -> None:
    """Per resource: misspelt keys first, then the values in the order the file gives them."""
    text = (
        "resources:\n"
        "  - provider: aws\n"
        "    id: i-1\n"
        "    capcity: spot\n"
        "    gpu: {count: -8, modle: H100}\n"
        "  - provider: aws\n"
        "    id: i-2\n"
        "    utilization: {gpu_avg: 140, gpu_p95: .nan}\n"
        "    price: {hourly_usd: -3}\n"
        "    capacity: spto\n"
        "    source: {path: a.yaml, line: twelve}\n"
    )
    assert _problems(tmp_path, "inv.yaml", text) == [
        "4: resource 'i-1': capcity: unknown field 'capcity' (did you mean 'capacity'?)",
        "5: resource 'i-1': gpu.modle: unknown field 'gpu.modle' (did you mean 'model'?)",
        "5: resource 'i-1': gpu.count: -8 is below the minimum 0",
        "8: resource 'i-2': utilization.gpu_avg: 140 is above the maximum 100",
        "8: resource 'i-2': utilization.gpu_p95: expected a finite number, got nan",
        "9: resource 'i-2': price.hourly_usd: -3 is below the minimum 0",
        "10: resource 'i-2': capacity: 'spto' is not one of spot, on-demand, reserved, "
        "unknown (did you mean 'spot'?)",
        "11: resource 'i-2': source.line: expected a line number ≥ 1, got str 'twelve'",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "resources: []\ncoverage_gaps: {provider: aws, scope: us-east-1}\n",
            "2: coverage_gaps: expected a list of gaps, got mapping",
        ),
        (
            "resources: []\ncoverage-gaps:\n  - {provider: aws, scope: us-east-1}\n",
            "2: inventory: unknown key 'coverage-gaps' (did you mean 'coverage_gaps'?)",
        ),
        (
            "resources: []\ncoverage_gaps:\n  - {provider: aws, scope: r, account: 123456789012}\n",
            "3: coverage gap #1: account: expected str, got int 123456789012 (quote it",
        ),
        (
            "resources: []\ncoverage_gaps:\n  - {provider: aws, scope: r, reason: x}\n",
            "3: coverage gap #1: unknown key 'reason'",
        ),
        ("resources: []\ncoverage_gaps:\n  - aws us-east-1\n", "3: coverage gap #1: expected"),
        ("resources: []\ncoverage_gaps:\n  - {provider: aws}\n", "3: coverage gap #1: needs scope"),
        ("version: 2\nresources: []\n", "1: inventory: version: expected 1, got 2"),
        ("resources: []\n---\nresources: []\n", "3: inventory: expected exactly one YAML document"),
    ],
)
def test_gaps_and_top_level_keys_are_never_dropped(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        load_inventory(str(path))
    assert str(raised.value).startswith(f"{path}:{expected}"), str(raised.value)


def test_json_errors_are_all_located(tmp_path: Path) -> None:
    resources = [
        {"provider": "aws", "id": "a", "uptime_hours": -5},
        {"provider": "aws", "id": "b", "tags": {"team": ["x"]}, "gpu": {"count": 1.5}},
    ]
    text = json.dumps({"resources": resources}, indent=1)
    assert _problems(tmp_path, "inv.json", text) == [
        "6: resource 'a': uptime_hours: -5 is below the minimum 0",
        "12: resource 'b': tags.team: expected a text value, got list ['x']",
        "17: resource 'b': gpu.count: expected int, got float 1.5",
    ]


def test_a_bad_inventory_is_every_line_on_stderr_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("resources:\n  - {provider: aws, id: a, colour: red, statee: running}\n")
    result = CliRunner().invoke(main, ["scan", "--inventory", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"gpu-audit: error: {path}:2: resource 'a': colour: unknown field 'colour'",
        f"gpu-audit: error: {path}:2: resource 'a': statee: unknown field 'statee' "
        "(did you mean 'state'?)",
    ]


def test_keys_and_ids_from_the_file_cannot_add_a_line(tmp_path: Path) -> None:
    text = 'resources:\n  - {provider: aws, id: "i-1\\n\\u202e", "col\\nour": red}\n"a\\nb": 1\n'
    assert _problems(tmp_path, "inv.yaml", text) == [
        "3: inventory: unknown key 'a\\x0ab'",
        "2: resource 'i-1\\x0a\\u202e': col\\x0aour: unknown field 'col\\x0aour'",
    ]


def test_a_large_inventory_nested_too_deep_is_located(tmp_path: Path) -> None:
    """Past the size scanned up front, the JSON decoder's own guard catches it, still located."""
    padding = [{"provider": "aws", "id": f"i-{n}", "name": "x" * 80} for n in range(90_000)]
    text = json.dumps({"resources": padding})[:-1] + ', "deep": ' + "[" * 30_000
    text += "]" * 30_000 + "}"
    path = tmp_path / "inv.json"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        load_inventory(str(path))
    message = str(raised.value)
    assert message.startswith(f"{path}:1:") and "nested more than 100 levels deep" in message


def test_an_unreadable_inventory_is_reported_and_the_others_still_judged(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("captured_at: 2026-02-30\nresources: []\n")
    demo = str(FIXTURES / "inventory" / "demo.yaml")
    result = CliRunner().invoke(
        main, ["scan", "--inventory", demo, "--inventory", str(bad), "--format", "json"]
    )
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert len(report["resources"]) == len(load_inventory(demo).resources)
    assert [s["path"] for s in report["skipped"] if s["error"]] == [str(bad)]
    [line] = result.stderr.splitlines()
    assert line.startswith(f"gpu-audit: error: {bad}:1:14: '2026-02-30' is not a valid date")


def test_a_version_1_report_still_reads_as_an_inventory(tmp_path: Path) -> None:
    """Reports written before schema version 2 stay usable as inventories and baselines."""
    old = json.loads(render("json", demo_scan()))
    old["version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    assert len(load_inventory(str(path)).resources) == len(old["resources"])
    old["version"] = 4
    path.write_text(json.dumps(old))
    with pytest.raises(InputError, match="version: expected 1, 2 or 3, got 4"):
        load_inventory(str(path))


def test_gap_fields_cannot_forge_a_line_or_restyle_the_terminal(tmp_path: Path) -> None:
    path = tmp_path / "inv.json"
    gap = {"provider": "aws", "scope": "r", "error": "E\x1b]0;x\x07", "message": "a\nb\u202e"}
    path.write_text(json.dumps({"resources": [], "coverage_gaps": [gap]}))
    result = CliRunner().invoke(main, ["scan", "--inventory", str(path), "-q"])
    assert result.exit_code == 3
    [line] = result.stderr.splitlines()
    assert line.startswith("gpu-audit: incomplete: ")
    assert "\x1b" not in line and "\x07" not in line and "\u202e" not in line
    assert "a\\x0ab\\u202e" in line


def test_cached_and_copied_values_stay_with_their_own_resource(tmp_path: Path) -> None:
    """Launch times are parsed once per distinct string and tags copied on a fast path: each
    resource still gets its own values, and a bad time after good ones is still refused."""
    tags = {"team": "nlp"}
    rows = [
        {"provider": "aws", "id": "a", "launched_at": "2026-11-01T00:00:00Z", "tags": tags},
        {"provider": "aws", "id": "b", "launched_at": "2026-11-02T00:00:00Z", "tags": tags},
        {"provider": "aws", "id": "c", "launched_at": "2026-11-01T00:00:00Z", "tags": {}},
    ]
    path = tmp_path / "inv.json"
    path.write_text(json.dumps({"version": 1, "resources": rows}), encoding="utf-8")
    first, second, third = load_inventory(str(path)).resources
    assert [r.launched_at.day for r in (first, second, third) if r.launched_at] == [1, 2, 1]
    assert first.tags == second.tags == tags and third.tags == {}
    assert first.tags is not second.tags
    rows.append({"provider": "aws", "id": "d", "launched_at": "2026-11-01T00:00:00Q"})
    path.write_text(json.dumps({"version": 1, "resources": rows}), encoding="utf-8")
    with pytest.raises(InputErrors) as raised:
        load_inventory(str(path))
    assert "resource 'd': launched_at: expected an ISO 8601 time" in str(raised.value.messages)


def test_fast_readers_keep_the_careful_conversions(tmp_path: Path) -> None:
    """Times are parsed once per distinct text, tags and lists taken as written when they are all
    text; anything else still goes through the careful conversion (or its located refusal)."""
    rows = [
        {"provider": "aws", "id": "a", "launched_at": "2026-11-20T05:00:00Z", "tags": {"n": 3}},
        {"provider": "aws", "id": "b", "launched_at": "2026-11-20T05:00:00Z"},
        {"provider": "aws", "id": "c", "launched_at": "2026-11-20T05:00:00", "tags": {"t": "x"}},
        {"provider": "aws", "id": "d", "data": {"uris": "s3://one", "regions": ["us-east-1"]}},
    ]
    path = tmp_path / "inv.json"
    path.write_text(json.dumps({"version": 1, "resources": rows}), encoding="utf-8")
    a, b, c, d = load_inventory(str(path)).resources
    assert a.launched_at == b.launched_at == c.launched_at
    assert a.launched_at is not None and a.launched_at.utcoffset() is not None
    assert dict(a.tags) == {"n": "3"} and dict(c.tags) == {"t": "x"}
    assert d.data.uris == ("s3://one",) and d.data.regions == ("us-east-1",)
    rows.append({"provider": "aws", "id": "e", "data": {"regions": ["us-east-1", 4]}})
    rows.append({"provider": "aws", "id": "f", "launched_at": "yesterday"})
    path.write_text(json.dumps({"version": 1, "resources": rows}), encoding="utf-8")
    with pytest.raises(InputErrors) as raised:
        load_inventory(str(path))
    text = "\n".join(raised.value.messages)
    assert "resource 'e': data.regions: expected list" in text
    assert "resource 'f': launched_at: expected an ISO 8601 time, got 'yesterday'" in text
