"""JSON report version 3: a finding names its resource by index; version-2 reports (whose
findings repeat a summary of their resource) still read as inventories and baselines."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.core.results import ScanResult
from gpu_audit.errors import InputError
from gpu_audit.history.baseline import load_baseline
from gpu_audit.report import json as json_report
from gpu_audit.report import render
from tests.conftest import ROOT
from tests.report.conftest import demo_scan
from tests.report.test_json_schema import validate

# today's demo in version 2's layout (each finding carries its resource); the reports version 2
# really wrote, against its frozen schema, are report-v2-shipped-*.json (test_frozen_schemas.py)
V2_DEMO = ROOT / "fixtures" / "inventory" / "demo-report-v2.json"


def _pointed(document: dict) -> list[tuple[str, str, str | None]]:
    """Each finding as (rule, provider:id of its resource, its location)."""
    listed = document["resources"]
    out = []
    for finding in document["findings"]:
        resource = listed[finding["resource"]]
        out.append(
            (finding["rule_id"], f"{resource['provider']}:{resource['id']}", finding["location"])
        )
    return out


def _expected(result: ScanResult) -> list[tuple[str, str, str | None]]:
    return [
        (f.rule_id, f"{f.resource.provider}:{f.resource.id}", f.resource.location)
        for f in result.findings
    ]


def test_every_finding_points_at_its_own_resource(demo: ScanResult) -> None:
    document = validate(demo)
    assert document["version"] == 3
    got = _pointed(document)
    assert [(r, k) for r, k, _ in got] == [(r, k) for r, k, _ in _expected(demo)]


def test_findings_out_of_resource_order_and_resources_not_listed(demo: ScanResult) -> None:
    """The cursor walks forward; findings in another order (reversed) and findings whose
    resource a hand-built result does not list still point at the right resource, written
    after the listed ones; the streamed text is the plain document's."""
    shuffled = replace(demo, findings=tuple(reversed(demo.findings)), fingerprints=())
    document = validate(shuffled)
    assert [(r, k) for r, k, _ in _pointed(document)] == [(r, k) for r, k, _ in _expected(shuffled)]
    first = demo.findings[0].resource
    kept = tuple(r for r in demo.resources if r is not first)
    missing = replace(demo, resources=kept, fingerprints=())
    document = validate(missing)
    assert len(document["resources"]) == len(demo.resources)
    assert document["resources"][-1]["id"] == first.id
    assert document["findings"][0]["resource"] == len(kept)
    assert [(r, k) for r, k, _ in _pointed(document)] == [(r, k) for r, k, _ in _expected(missing)]
    assert json.loads(render("json", missing)) == json.loads(
        json.dumps(json_report.document(missing))
    )


def test_a_version_2_report_reads_as_the_same_inventory(tmp_path: Path) -> None:
    v2 = json.loads(V2_DEMO.read_text())
    assert v2["version"] == 2 and isinstance(v2["findings"][0]["resource"], dict)
    v3 = tmp_path / "demo.json"
    v3.write_text(render("json", replace(demo_scan(), tool_version="0.0.0-golden")))
    assert json.loads(v3.read_text())["version"] == 3
    old, new = load_inventory(str(V2_DEMO)), load_inventory(str(v3))
    # version 3 also writes the catalog's GPU facts (precisions, tensor cores, capability)
    facts = {"precisions": None, "tensor_cores": None, "compute_capability": None}
    bare = tuple(replace(r, gpu=replace(r.gpu, **facts)) for r in new.resources)
    assert old.resources == bare and old.coverage_gaps == new.coverage_gaps
    assert any(r.gpu.precisions for r in new.resources)
    assert len(old.resources) == len(v2["resources"])


def test_a_version_2_report_is_the_same_baseline(tmp_path: Path) -> None:
    v3 = tmp_path / "demo.json"
    v3.write_text(render("json", replace(demo_scan(), tool_version="0.0.0-golden")))
    old, new = load_baseline(str(V2_DEMO)), load_baseline(str(v3))
    rows = list(range(len(old.first_seen)))
    assert old.seen == new.seen and list(old.first_seen) == list(new.first_seen)
    assert list(old.findings_of(rows)) == list(new.findings_of(rows))
    assert len(list(new.findings_of(rows))) > 10
    assert list(old.resources_of(list(old.resource_keys.values()))) == list(
        new.resources_of(list(new.resource_keys.values()))
    )
    assert (old.monthly_cost_usd, old.titles) == (new.monthly_cost_usd, new.titles)


def test_a_baseline_whose_finding_points_nowhere_is_refused(tmp_path: Path) -> None:
    document = json.loads(render("json", demo_scan()))
    document["findings"][0]["resource"] = len(document["resources"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError) as caught:
        load_baseline(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}: baseline: not a gpu-audit JSON report")
    assert "not an index of resources" in message and "\n" not in message
