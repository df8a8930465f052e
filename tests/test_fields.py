"""The field table is the one source: the model, the docs' field table and the report schema's
resource part agree with it, and a field added to the model reaches every consumer."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

from gpu_audit.core.canonical import KEYS, from_mapping, to_mapping
from gpu_audit.core.fields import FIELDS, SECTIONS, build_resource, field_spec
from gpu_audit.core.resource import Kind, Resource
from gpu_audit.report.json import SCHEMA_VERSION
from tests.conftest import ROOT

# The one report schema the field table writes: the current version's. A shipped version is
# frozen byte for byte (tests/report/test_frozen_schemas.py); a field added now is a key of the
# current version only, since no report of an older version has it.
CURRENT_SCHEMA = f"src/gpu_audit/report/report-v{SCHEMA_VERSION}.schema.json"
FIELD_TABLE_DOC = "docs/policy-language.md"

_TYPE_NAMES = {
    "str": "text",
    "enum": "enum",
    "gpu": "GPU class",
    "list": "list",
    "datetime": "date-time",
    "bool": "boolean",
    "tag": "text",
}


def doc_rows() -> list[str]:
    """The docs' field table, as the table says it must read."""
    rows = ["| field | type | meaning | filled by |", "|---|---|---|---|"]
    for spec in FIELDS.values():
        name = "tags.<key>" if spec.name == "tags" else spec.name
        kind = spec.unit or ("integer" if spec.integer else _TYPE_NAMES.get(spec.type, "number"))
        assert all(f"`{choice}`" in spec.doc for choice in spec.choices or ())
        rows.append(f"| `{name}` | {kind} | {spec.doc} | {spec.sources} |")
    return rows


def _leaf_schema(spec: Any) -> dict[str, Any]:
    if spec.type == "enum":
        values: list[Any] = [member.value for member in spec.enum]
        return {"enum": values if spec.required or spec.name == "workload" else [*values, None]}
    if spec.type == "datetime":
        return {"oneOf": [{"$ref": "#/$defs/time"}, {"type": "null"}]}
    if spec.type == "list":
        return {"oneOf": [{"$ref": "#/$defs/strings"}, {"type": "null"}]}
    if spec.type == "tag":
        return {"type": "object", "additionalProperties": {"type": "string"}}
    base = {
        "str": "string",
        "gpu": "string",
        "bool": "boolean",
        "number": "integer" if spec.integer else "number",
    }[spec.type]
    out: dict[str, Any] = {"type": base if spec.required else [base, "null"]}
    if spec.minimum is not None:
        out["minimum"] = spec.minimum
    if spec.maximum is not None:
        out["maximum"] = spec.maximum
    return out


def resource_schema() -> dict[str, Any]:
    """The JSON report schema's `resource` definition, as the field table says it must read."""
    properties: dict[str, Any] = {}
    for spec in FIELDS.values():
        if spec.group is None:
            properties[spec.name] = _leaf_schema(spec)
            continue
        section = properties.setdefault(
            spec.group,
            {"type": "object", "additionalProperties": False, "required": [], "properties": {}},
        )
        section["required"].append(spec.key)
        section["properties"][spec.key] = _leaf_schema(spec)
    return {
        "type": "object",
        "description": "A resource in the canonical field names of the policy language; "
        "missing values are null.",
        "additionalProperties": False,
        "required": list(properties),
        "properties": {
            **properties,
            "source": {
                "$ref": "#/$defs/source",
                "description": "Jobs only: the file and the document's first line.",
            },
            "note": {
                "type": "string",
                "description": "What the collector or parser could not read for this resource, "
                "and why; absent when there is nothing to say.",
            },
        },
    }


def test_the_docs_field_table_is_the_field_table() -> None:
    text = (ROOT / FIELD_TABLE_DOC).read_text()
    lines = text.splitlines()
    start = lines.index("| field | type | meaning | filled by |")
    end = lines.index("", start)
    expected = "\n".join(doc_rows())
    assert "\n".join(lines[start:end]) == expected, (
        f"{FIELD_TABLE_DOC} should read (python -m tests.test_fields):\n{expected}"
    )


def test_the_report_schema_resource_part_is_the_field_table() -> None:
    expected = resource_schema()
    schema = json.loads((ROOT / CURRENT_SCHEMA).read_text())
    assert schema["$defs"]["resource"] == expected, (
        f"{CURRENT_SCHEMA} should read (python -m tests.test_fields):\n"
        + json.dumps(expected, indent=2)
    )


def test_the_writer_leaves_every_old_schema_alone(tmp_path: Any) -> None:
    """`python -m tests.test_fields` rewrites the current schema's resource part and never an
    older version's, even one whose resource part differs from today's table."""
    report = tmp_path / "src" / "gpu_audit" / "report"
    report.mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "policy-language.md").write_bytes(
        (ROOT / "docs" / "policy-language.md").read_bytes()
    )
    originals = {}
    for path in (ROOT / "src" / "gpu_audit" / "report").glob("report-v*.schema.json"):
        text = path.read_text().replace('"zone": {"type": ["string", "null"]}', '"zone": {}')
        assert '"zone": {}' in text  # every version's resource part now differs from the table
        (report / path.name).write_text(text)
        originals[path.name] = text
    assert len(originals) >= 2
    write_derived(tmp_path)
    current = CURRENT_SCHEMA.rpartition("/")[2]
    for name, text in originals.items():
        after = (report / name).read_text()
        if name == current:
            assert json.loads(after)["$defs"]["resource"] == resource_schema()
        else:
            assert after == text, f"{name} was rewritten"


def test_every_model_attribute_is_in_the_table_and_back() -> None:
    declared = set()
    for field in fields(Resource):
        if field.name == "source":
            continue
        if field.name in SECTIONS:
            declared |= {f"{field.name}.{inner.name}" for inner in fields(SECTIONS[field.name])}
        else:
            declared.add(field.name)
    assert declared == set(FIELDS)
    assert {name.partition(".")[0] for name in FIELDS} | {"source", "note"} == KEYS


def test_every_field_reaches_the_policy_language_and_the_inventory() -> None:
    """A field declared once is known to rules and survives an inventory round trip."""
    samples = {
        "str": "x",
        "gpu": "H100",
        "number": 3,
        "bool": True,
        "list": ("us-east-1",),
        "datetime": None,
        "tag": None,
        "enum": None,
    }
    values = {name: samples[spec.type] for name, spec in FIELDS.items() if samples[spec.type]}
    for name, spec in FIELDS.items():  # a share of one (`hpo.pruned_share`) stays within it
        if spec.type == "number" and spec.maximum is not None and spec.maximum < 3:
            values[name] = spec.maximum
    values.update(kind=Kind.INSTANCE, provider="aws", id="i-1")
    resource = build_resource(values)
    assert from_mapping(to_mapping(resource)) == resource
    for name, spec in FIELDS.items():
        if spec.type != "tag":
            assert field_spec(name) is spec
            if name in values:
                assert spec.getter(resource) == values[name]


def test_the_inventory_refuses_numbers_the_table_bounds() -> None:
    import math

    import pytest

    from gpu_audit.core.canonical import FieldProblem

    base = {"kind": "instance", "provider": "aws", "id": "i-1"}
    for key, section, value in [
        ("gpu_avg", "utilization", 150),
        ("gpu_avg", "utilization", -1),
        ("count", "gpu", -8),
        ("hourly_usd", "price", math.nan),
        ("hourly_usd", "price", math.inf),
    ]:
        with pytest.raises(FieldProblem) as caught:
            from_mapping({**base, section: {key: value}})
        assert caught.value.key == f"{section}.{key}"
    assert from_mapping({**base, "utilization": {"gpu_avg": 100}}).utilization.gpu_avg == 100


def test_the_schemas_know_every_kind() -> None:
    kinds = [kind.value for kind in Kind]
    report = json.loads((ROOT / CURRENT_SCHEMA).read_text())
    assert report["$defs"]["kind"]["enum"] == kinds
    policy = json.loads((ROOT / "src/gpu_audit/policy/schema.json").read_text())
    rule = policy["$defs"]["rule"]["properties"]
    assert rule["targets"]["items"]["enum"] == kinds


def write_derived(root: Any = ROOT) -> None:
    """Rewrite the docs' field table and the current report schema's resource part from the
    table: `python -m tests.test_fields` after adding a field. Older schemas are never touched."""
    doc = root / FIELD_TABLE_DOC
    lines = doc.read_text().split("\n")
    start = lines.index("| field | type | meaning | filled by |")
    lines[start : lines.index("", start)] = doc_rows()
    doc.write_text("\n".join(lines))
    path = root / CURRENT_SCHEMA
    text = path.read_text()
    begin = text.index("{", text.index('\n    "resource": {'))
    depth, end = 0, begin
    for end in range(begin, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            break
    path.write_text(text[:begin] + _compact(resource_schema(), "    ") + text[end + 1 :])


def _compact(value: Any, indent: str) -> str:
    """The schema file's style: one property a line where a property is long."""
    if isinstance(value, dict) and any(
        isinstance(v, dict) and len(json.dumps(v)) > 80 for v in value.values()
    ):
        items = [
            f"{indent}  {json.dumps(k)}: {_compact(v, indent + '  ')}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    return json.dumps(value, ensure_ascii=False)


if __name__ == "__main__":
    write_derived()
