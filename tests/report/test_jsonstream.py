"""The streaming encoder writes what `json.dumps(indent=2, ensure_ascii=False)` writes."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from gpu_audit.core.results import ScanResult
from gpu_audit.report import json as json_report
from gpu_audit.report import sarif
from gpu_audit.report.fastjson import stream as jsonstream

VALUES: list[Any] = [
    {},
    [],
    "",
    0,
    -1.5e-300,
    True,
    None,
    {"a": [], "b": {}, "c": [{}], "d": [[1, [2.0, None]], "x"]},
    {'é\u202e\n"\\': "\x00\x1f\u2028 ü", 7: 2, True: 3, None: 4, 2.5: 5},
    [1e16, 123456789012345678901234567890, 0.1, -0.0],
    ("tuple", ("nested",)),
]


@pytest.mark.parametrize("value", VALUES)
def test_text_matches_the_standard_library(value: Any) -> None:
    expected = json.dumps(value, indent=2, ensure_ascii=False)
    assert jsonstream.text(value) == expected
    stream = io.StringIO()
    jsonstream.dump(value, stream)
    assert stream.getvalue() == expected + "\n"


def test_generators_stream_as_arrays() -> None:
    stream = io.StringIO()
    jsonstream.dump({"empty": (i for i in ()), "many": ({"n": i} for i in range(5000))}, stream)
    assert json.loads(stream.getvalue()) == {"empty": [], "many": [{"n": i} for i in range(5000)]}


def test_non_finite_numbers_are_null() -> None:
    assert jsonstream.text([math.nan, math.inf, -math.inf]) == "[\n  null,\n  null,\n  null\n]"


def test_unknown_types_are_refused() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonstream.text({"a": object()})


def test_reports_match_the_plain_document(
    demo: ScanResult, jobs: ScanResult, hostile: ScanResult, in_root: Path
) -> None:
    for result in (demo, jobs, hostile):
        expected = json.dumps(json_report.document(result), indent=2, ensure_ascii=False)
        assert json_report.render(result) == expected + "\n"
        log = sarif.log(result, in_root)
        assert sarif.render(result) == json.dumps(log, indent=2, ensure_ascii=False) + "\n"
