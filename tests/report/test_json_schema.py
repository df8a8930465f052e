"""The JSON report validates against the schema shipped in the package."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest

from gpu_audit.core.results import ScanResult
from gpu_audit.report import json as json_report


def schema() -> dict[str, Any]:
    text = resources.files("gpu_audit.report").joinpath("report-v3.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def validate(result: ScanResult) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json_report.render(result))
    validator = jsonschema.Draft202012Validator(
        schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(document), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return document


def test_schema_is_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())


def test_demo_validates(demo: ScanResult) -> None:
    document = validate(demo)
    assert document["version"] == 3
    assert {w["state"] for w in document["waivers"]} == {"active", "expiring", "expired"}


def test_jobs_validate(jobs: ScanResult) -> None:
    document = validate(jobs)
    first = document["findings"][0]
    resource = document["resources"][first["resource"]]
    assert (resource["source"]["path"], first["line"]) == ("jobs/train llm.yaml", 7)
    assert first["location"] == "jobs/train llm.yaml:7"


def test_hostile_validates(hostile: ScanResult) -> None:
    validate(hostile)


def test_schema_rejects_an_unknown_key(demo: ScanResult) -> None:
    document = json.loads(json_report.render(demo))
    document["findings"][0]["surprise"] = True
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, schema(), cls=jsonschema.Draft202012Validator)
