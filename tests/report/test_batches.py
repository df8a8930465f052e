"""Reports encoded in batches (report/fastjson/flat.py) read as the plain documents do, whatever the
values: non-finite and negative numbers, awkward texts, containers where scalars belong."""

from __future__ import annotations

import io
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gpu_audit.core.resource import Gpu, Kind, SourceRef, Utilization
from gpu_audit.core.results import Change, Comparison, FindingHistory, ScanResult, TrendPoint
from gpu_audit.core.training import Interruption, Training
from gpu_audit.report import json as json_report
from gpu_audit.report import sarif
from gpu_audit.report.fastjson import flat as jsonflat
from gpu_audit.report.fastjson import resources as jsonresource
from gpu_audit.report.fastjson import stream as jsonstream

TEXTS: list[Any] = ["%s %% %(x)s", "NaN", "-Infinity", "\x00[x", "x\x00{", 'é\u2028\u202e"\\', ""]
NUMBERS: list[Any] = [math.nan, math.inf, -math.inf, -1.5, -0.0, 0, True, 1e16, 10**30, 101.0]


class Label(str):
    """A text that prints differently from its value."""

    def __str__(self) -> str:
        return "=" + self


def varied(result: ScanResult, copies: int = 2) -> ScanResult:
    """Copies of every finding (over 600 × `copies` in all, so several batches), each copy's resource
    given other awkward values; some resources have a tuple where a text belongs."""
    findings = []
    resources = []
    for n in range(copies * (600 // len(result.findings) + 1)):
        for i, finding in enumerate(result.findings):
            k = n + i
            text = TEXTS[k % len(TEXTS)]
            number = NUMBERS[k % len(NUMBERS)]
            source = finding.resource.source
            resource = replace(
                finding.resource,
                id=f"{finding.resource.id}-{n}",
                name=Label(text) if k % 5 == 0 else text,
                region=text,
                zone=("a", "b") if k % 97 == 0 else None,
                gpu=Gpu(model=text, count=number, memory_gib=number),
                utilization=Utilization(gpu_avg=number, gpu_p95=-number, window_hours=number),
                monthly_cost_usd=number,
                tags={"team": text, text: "x"} if k % 3 else ({7: "seven"} if k % 2 else {}),
                source=replace(source, note=text) if k % 4 == 0 else source,
            )
            resources.append(resource)
            findings.append(
                replace(
                    finding,
                    resource=resource,
                    expected=("a",) if k % 89 == 0 else text,
                    actual=Label(text),
                    monthly_savings_usd=number,
                    saving_usd=-number if isinstance(number, float) else number,
                )
            )
    return replace(result, findings=tuple(findings), resources=tuple(resources), fingerprints=())


def test_json_reads_as_the_plain_document(
    demo: ScanResult, jobs: ScanResult, hostile: ScanResult
) -> None:
    for result in (varied(demo), varied(jobs), varied(hostile, 1)):
        assert len(result.findings) > 512
        expected = jsonstream.text(json_report.document(result)) + "\n"
        assert json_report.render(result) == expected


def test_sarif_reads_as_the_plain_log(
    demo: ScanResult, jobs: ScanResult, hostile: ScanResult, in_root: Path
) -> None:
    for result in (varied(demo), varied(jobs), varied(hostile, 1)):
        expected = jsonstream.text(sarif.log(result, in_root)) + "\n"
        assert sarif.render(result) == expected


def test_a_job_resource_is_templated_with_its_source(demo: ScanResult) -> None:
    first = demo.resources[0]
    job = replace(first, kind=Kind.JOB, source=SourceRef(path="jobs/a%s.yaml", line=3))
    result = replace(demo, resources=(job, *demo.resources[1:]))
    assert json_report.render(result) == jsonstream.text(json_report.document(result)) + "\n"


@pytest.mark.parametrize(
    "values",
    [[], ["a", None, 1, 2.5, True], [math.nan, "NaN", -math.inf, "Infinity"], ["\x00", "%"]],
)
def test_encode_writes_each_scalar_as_jsonstream_does(values: list[Any]) -> None:
    assert jsonflat.encode(values) == [jsonstream.text(value).encode() for value in values]


@pytest.mark.parametrize(
    "values",
    [["a", None, 1, 2.5, True], [math.nan, "NaN", -math.inf, "é≥"], ["a", ["b"]], []],
)
def test_encode_without_the_c_accelerator_gives_the_same_bytes(
    values: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = jsonflat.encode(values)
    monkeypatch.setattr(jsonflat, "_ENCODER", None)
    assert jsonflat.encode(values) == expected


@pytest.mark.parametrize("container", [[], ["a"], {}, {"a": 1}, ("t",)])
def test_encode_refuses_containers(container: Any) -> None:
    assert jsonflat.encode(["a", container]) is None
    assert jsonflat.encode([container, 1]) is None


def test_batches_are_written_as_they_are_made() -> None:
    stream = io.StringIO()
    writes: list[int] = []
    original = stream.write

    def write(text: str) -> int:
        writes.append(len(text))
        return original(text)

    stream.write = write  # type: ignore[method-assign]
    batches = (jsonstream.Raw(b'"x"') for _ in range(3))
    jsonstream.dump({"items": batches}, stream)
    assert len(writes) >= 3


def test_findings_with_their_history_read_as_the_plain_document(demo: ScanResult) -> None:
    """Without a comparison a finding's history keys are nulls in its template; with one they
    are values, in the same batches."""
    result = varied(demo)
    changes = tuple(
        FindingHistory(
            change=Change.NEW if i % 3 else Change.PERSISTING,
            first_seen=demo.generated_at,
            audits_open=i % 4 + 1,
        )
        for i in range(len(result.findings))
    )
    point = TrendPoint(
        generated_at=demo.generated_at,
        monthly_cost_usd=1000.0,
        monthly_savings_usd=100.0,
        savings_realised_usd=0.0,
        findings_open=len(changes),
    )
    since = Comparison(
        source="history audits.db", previous_at=demo.generated_at, changes=changes, trend=(point,)
    )
    result = replace(result, since=since)
    text = json_report.render(result)
    assert text == jsonstream.text(json_report.document(result)) + "\n"
    assert '"change": "persisting"' in text and '"audits_open": 4' in text


def test_a_file_gets_the_bytes_of_the_text(demo: ScanResult, tmp_path: Path) -> None:
    """A UTF-8 file is written through its byte buffer, after what its text layer held."""
    result = varied(demo)
    path = tmp_path / "report.json"
    with open(path, "w", encoding="utf-8", newline="") as stream:
        stream.write("before ≥ ")  # still in the text layer when the report starts
        json_report.write(result, stream)
        stream.write("after")
    expected = "before ≥ " + json_report.render(result) + "after"
    assert path.read_bytes() == expected.encode()
    assert "≥" in expected and "é" in expected


def test_a_stream_in_another_encoding_gets_text(demo: ScanResult) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-16", newline="")
    json_report.write(varied(demo), stream)
    stream.flush()
    assert raw.getvalue().decode("utf-16") == json_report.render(varied(demo))


def test_equal_numbers_of_other_types_get_their_own_text(demo: ScanResult) -> None:
    """A template holds a resource's GPU count and memory: 0, 0.0, -0.0 and False are equal
    keys to Python, and four texts in JSON."""
    first = demo.findings[0]
    findings = []
    for i, number in enumerate([0, 0.0, -0.0, False, 1, 1.0, True] * 100):
        resource = replace(
            first.resource, id=f"i-{i}", gpu=Gpu(model="A100", count=number, memory_gib=number)
        )
        findings.append(replace(first, resource=resource))
    result = replace(demo, findings=tuple(findings), fingerprints=())
    text = json_report.render(result)
    assert text == jsonstream.text(json_report.document(result)) + "\n"
    assert '"count": -0.0' in text and '"count": false' in text and '"count": 1.0' in text


def test_a_list_where_a_held_text_belongs_takes_the_plain_path(demo: ScanResult) -> None:
    first = demo.findings[0]
    odd = replace(first.resource, instance_type=["p5.48xlarge"])  # type: ignore[arg-type]
    result = replace(demo, findings=(replace(first, resource=odd), *demo.findings[1:]))
    result = replace(result, fingerprints=())
    assert json_report.render(result) == jsonstream.text(json_report.document(result)) + "\n"


def test_empty_sections_held_in_the_template_read_as_the_plain_document(
    demo: ScanResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A section a resource left at its default is held whole in its template (its nulls never
    read or encoded); an equal section that is another instance, a filled one, and one with a
    number out of its bounds (written null) all read as the plain document, in one batch."""
    first = demo.resources[0]
    made = [
        first,
        replace(first, id="fresh", training=Training(), interruption=Interruption()),
        replace(first, id="filled", training=replace(Training(), precision="bf16")),
        replace(first, id="bounded", interruption=replace(Interruption(), instances=-3)),
        replace(first, id="gpu", gpu=Gpu(model="A100", count=8, memory_gib=80.0)),
    ]
    result = replace(demo, resources=tuple(made * 30), findings=(), fingerprints=())
    text = json_report.render(result)
    assert text == jsonstream.text(json_report.document(result)) + "\n"
    assert '"precision": "bf16"' in text
    shapes: list[Any] = []
    original = jsonflat.Templates.get

    def get(self: jsonflat.Templates, shape: Any, *args: Any) -> Any:
        shapes.append(shape)
        return original(self, shape, *args)

    monkeypatch.setattr(jsonflat.Templates, "get", get)
    list(jsonresource.texts(made))
    held = [sum(shape[0]) for shape in shapes]  # the sections each resource's template holds
    assert held[0] >= 10 and held[1] == held[0] - 2 and held[2] == held[0] - 1
