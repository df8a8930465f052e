"""Reports stay valid and inert whatever the values: strict JSON, schemas, terminals, spreadsheets."""

from __future__ import annotations

import csv
import io
import json
import math
import pickle
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gpu_audit.core.resource import Gpu, Utilization
from gpu_audit.core.results import ScanResult
from gpu_audit.report import render
from gpu_audit.report.csv import COLUMNS
from gpu_audit.report.escape import UNSAFE, terminal_safe
from tests.report import test_json_schema, test_sarif

# OSC title + BEL, CSI colour, a forged line, and every bidi override/isolate/mark
TERMINAL = "\x1b]0;owned\x07\x1b[31mred\x9b2J\nforged: line\u202etxt.exe\u2066\u2069\u200e\u200f"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def strict(text: str) -> Any:
    """Parse as a strict parser does: NaN, Infinity and -Infinity are errors."""
    return json.loads(text, parse_constant=_refuse_constant)


def _with_resource(result: ScanResult, **changes: Any) -> ScanResult:
    """Every finding and resource of the scan's first resource given `changes`."""
    first = result.resources[0]
    changed = replace(first, **changes)
    resources = tuple(changed if r is first else r for r in result.resources)
    findings = tuple(
        replace(f, resource=changed) if f.resource is first else f for f in result.findings
    )
    return replace(result, resources=resources, findings=findings)


def test_non_finite_and_negative_numbers_never_reach_json_or_sarif(
    demo: ScanResult, in_root: Path
) -> None:
    result = _with_resource(
        demo,
        gpu=Gpu("A100-40GB", -8, math.nan),
        utilization=Utilization(math.nan, math.inf, -math.inf),
        monthly_cost_usd=math.inf,
        uptime_hours=-3.0,
    )
    findings = list(result.findings)
    findings[0] = replace(findings[0], monthly_savings_usd=math.nan)
    findings[1] = replace(findings[1], monthly_savings_usd=-math.inf)
    result = replace(result, findings=tuple(findings))
    document = strict(render("json", result))
    test_json_schema.validate(result)  # the shipped schema, negatives and all
    resource = document["resources"][0]
    assert resource["gpu"]["count"] is None and resource["gpu"]["memory_gib"] is None
    assert resource["utilization"]["gpu_p95"] is None and resource["monthly_cost_usd"] is None
    assert document["findings"][0]["monthly_savings_usd"] is None
    assert math.isfinite(document["summary"]["monthly_cost_usd"])
    log = strict(render("sarif", result))
    test_sarif.validate(log)
    assert log["runs"][0]["results"][0]["properties"]["monthlySavingsUsd"] is None


def test_duplicate_aliases_give_unique_deprecated_ids(demo: ScanResult, in_root: Path) -> None:
    rule = demo.rules[0]
    aliased = replace(rule, aliases=("old-name", "older", "old-name", rule.id))
    result = replace(demo, rules=(aliased, *demo.rules[1:]))
    log = strict(render("sarif", result))
    test_sarif.validate(log)  # the official schema requires uniqueItems
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["deprecatedIds"] == ["old-name", "older"]


def test_terminal_safe_escapes_controls_and_bidi() -> None:
    shown = terminal_safe(TERMINAL)
    assert not UNSAFE.search(shown)
    assert "\\x1b]0;owned\\x07" in shown and "\\x9b" in shown and "\\u202e" in shown
    assert terminal_safe(BIDI) == "".join(f"\\u{ord(c):04x}" for c in BIDI)
    assert terminal_safe("plain ü — text") == "plain ü — text"


@pytest.mark.parametrize("format_name", ["text", "table", "markdown"])
def test_printed_reports_carry_no_control_or_bidi_character(
    format_name: str, demo: ScanResult, in_root: Path
) -> None:
    first = demo.resources[0]
    tags = {**first.tags, "team": TERMINAL, TERMINAL: TERMINAL}
    result = _with_resource(demo, name=TERMINAL, tags=tags, id="i-" + TERMINAL)
    text = render(format_name, result)
    assert not UNSAFE.search(text.replace("\n", "")), [c for c in UNSAFE.findall(text) if c != "\n"]
    assert not any(line.startswith("forged: line") for line in text.splitlines())


def test_every_csv_cell_is_neutralised(demo: ScanResult, in_root: Path) -> None:
    formula = '=HYPERLINK("https://evil.example","x")'
    result = _with_resource(
        demo,
        provider="+cmd",
        account="-2+3",
        region="@SUM(A1)",
        instance_type="\tX",
        workload=demo.resources[0].workload,
        tags={"team": "\r=1", "project": formula, "owner": formula},
    )
    findings = list(result.findings)
    # a line that is text, not a number, in a column that only ever held numbers
    findings[0] = replace(findings[0], line=formula, title=formula, remediation="-x")  # type: ignore[arg-type]
    result = replace(result, findings=tuple(findings))
    rows = list(csv.reader(io.StringIO(render("csv", result), newline="")))
    assert rows[0] == list(COLUMNS)
    cells = [cell for row in rows[1:] for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'" + formula in rows[1]


def test_a_scan_result_pickles(demo: ScanResult) -> None:
    again = pickle.loads(pickle.dumps(demo))
    assert again == demo
    assert again.tool_version == demo.tool_version
    assert render("json", again) == render("json", demo)


def test_every_character_terminal_safe_escapes_is_one_python_calls_unprintable() -> None:
    """`terminal_safe` answers printable text without its pattern: no character the pattern
    escapes may be printable, or a value holding only it would slip through."""
    escaped = [chr(c) for c in range(0x110000) if UNSAFE.fullmatch(chr(c))]
    assert len(escaped) >= 70 and not any(char.isprintable() for char in escaped)
    assert terminal_safe("a\x1b[31mb\u202e") == "a\\x1b[31mb\\u202e"
