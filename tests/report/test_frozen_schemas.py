"""A shipped report schema never changes: only the current version grows.

A report of version N was written against `report-vN.schema.json` as it shipped; a key added to
that file later would be required of reports that cannot have it. Each older schema is held here
by its sha256, and the reports that version really wrote (fixtures/inventory/report-v2-shipped-*,
written by the code of version 2) must still validate against it.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from gpu_audit.collectors.inventory import load_inventory
from gpu_audit.history.baseline import load_baseline
from gpu_audit.report.json import SCHEMA_VERSION
from tests.conftest import ROOT

# version → sha256 of its schema as shipped (git show 16d9a87:.../report-v2.schema.json).
# When the current version moves on, its schema's digest as it ships is added here.
FROZEN = {
    2: "747e3fb5dce15fdd5cbf509144576cf89b64898870f7a8a24c5621d2b0095c1c",
}
SHIPPED_REPORTS = {2: sorted((ROOT / "fixtures" / "inventory").glob("report-v2-shipped-*.json"))}


def _schemas() -> dict[int, Path]:
    folder = Path(str(resources.files("gpu_audit.report")))
    found = {}
    for path in folder.glob("report-v*.schema.json"):
        match = re.fullmatch(r"report-v(\d+)\.schema\.json", path.name)
        assert match, path.name
        found[int(match.group(1))] = path
    return found


def test_the_current_version_is_the_newest_schema() -> None:
    assert max(_schemas()) == SCHEMA_VERSION


def test_every_old_schema_is_byte_identical_to_the_one_shipped() -> None:
    schemas = _schemas()
    old = {version for version in schemas if version != SCHEMA_VERSION}
    assert old == set(FROZEN), (
        "every shipped version still ships, and each older one has its digest in FROZEN"
    )
    for version, digest in FROZEN.items():
        actual = hashlib.sha256(schemas[version].read_bytes()).hexdigest()
        assert actual == digest, (
            f"src/gpu_audit/report/{schemas[version].name} changed: a shipped schema is frozen "
            f"(restore it with git; a new key belongs to report-v{SCHEMA_VERSION}.schema.json)"
        )


@pytest.mark.parametrize(
    ("version", "report"),
    [(v, path) for v, paths in SHIPPED_REPORTS.items() for path in paths],
    ids=lambda value: value.name if isinstance(value, Path) else str(value),
)
def test_the_reports_an_old_version_wrote_validate_against_its_schema(
    version: int, report: Path
) -> None:
    schema = json.loads(_schemas()[version].read_text(encoding="utf-8"))
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["version"] == version
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]
    assert errors == []
    assert load_inventory(str(report)).resources  # and read back as an inventory and a baseline
    assert load_baseline(str(report)).seen


def test_each_old_version_has_a_report_it_wrote() -> None:
    assert all(len(SHIPPED_REPORTS.get(version, [])) >= 2 for version in FROZEN)
