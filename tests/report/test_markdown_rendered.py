"""The demo's Markdown report as a reader sees it once rendered (markdown-it-py, GFM tables):
no absolute path anywhere, readable chart definitions, and narrow tables with short cells."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it.token import Token

import gpu_audit
from gpu_audit.cli.main import main
from tests.conftest import ROOT
from tests.report.conftest import DEMO_POLICY
from tests.report.test_markdown import parse, walk

MAX_COLUMNS = 6
MAX_CELL = 64  # rendered characters in any cell but a table's last (prose) column
MAX_LAST_CELL = 400
MAX_SLICES = 6
_ABSOLUTE = re.compile(r"(?:^|[\s(=:'\"])(/[\w.-]+){2,}")
_SLICE = re.compile(
    r'    "(?P<label>[^"]+): \$(?P<money>\d{1,3}(?:,\d{3})*\.\d\d)" : (?P<value>\d+\.\d\d)'
)


def _report(cwd: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`gpu-audit scan` of the demo, every path given absolute, run from `cwd` (the demo policy
    extends the shipped pack, which is read from its absolute path too)."""
    monkeypatch.chdir(cwd)
    out = tmp_path / "audit.md"
    args = [
        "scan",
        "--inventory",
        str(ROOT / "fixtures/inventory/demo-next.yaml"),
        "--policy",
        str(ROOT / DEMO_POLICY),
        "--fail-on",
        "none",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def _text(inline: Token) -> str:
    """A cell's rendered text; a `<wbr>` is a zero-width break opportunity (github_width)."""
    return "".join(
        t.content if t.type in ("text", "code_inline") else WBR
        for t in walk(inline.children or [])
        if t.type in ("text", "code_inline") or (t.type == "html_inline" and t.content == "<wbr>")
    )


WBR = "\u200b"  # what a `<wbr>` leaves: a place to wrap, no width


def _tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Every table as rows of rendered cell texts."""
    tables: list[list[list[str]]] = []
    for index, token in enumerate(tokens):
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            tables[-1].append([])
        elif token.type in ("th_open", "td_open"):
            tables[-1][-1].append(_text(tokens[index + 1]))
    return tables


def _luminance(colour: str) -> float:
    red, green, blue = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


@pytest.fixture(params=["checkout", "elsewhere"])
def rendered(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[Token]]:
    """Run from the checkout (paths shown relative) and from elsewhere (by file name)."""
    cwd = ROOT if request.param == "checkout" else tmp_path
    text = _report(cwd, tmp_path, monkeypatch)
    return text, parse(text)


def test_no_absolute_path_anywhere(rendered: tuple[str, list[Token]], tmp_path: Path) -> None:
    text, tokens = rendered
    every = "\n".join(
        [t.content for t in walk(tokens) if t.type in ("text", "code_inline", "fence")]
    )
    package = os.path.dirname(gpu_audit.__file__)
    for secret in (str(ROOT), str(tmp_path), package, "site-packages"):
        assert secret not in text
    assert not _ABSOLUTE.search(every), _ABSOLUTE.search(every)
    command = next(line for line in text.splitlines() if line.startswith("| Command |"))
    assert "demo-next.yaml" in command and "--fail-on none" in command and "audit.md" in command


def test_charts_are_readable(rendered: tuple[str, list[Token]]) -> None:
    text, tokens = rendered
    fences = [t for t in tokens if t.type == "fence"]
    assert [f.info for f in fences] == ["mermaid", "mermaid"]
    estimated = re.search(r"Estimated savings \| \\\$([\d,]+\.\d\d) / month", text)
    assert estimated is not None
    for fence in fences:
        init, title, *slices = fence.content.splitlines()
        match = re.fullmatch(r"%%\{init: (.*)\}%%", init)
        assert match is not None, init
        theme = json.loads(match.group(1))["themeVariables"]
        assert title.startswith("pie title ") and "showData" not in title
        assert 2 <= len(slices) <= MAX_SLICES
        colours = [theme[f"pie{i}"] for i in range(1, len(slices) + 1)]
        assert len(set(colours)) == len(colours), "two slices share a colour"
        assert all(_luminance(c) < 0.75 for c in colours), f"a near-white slice: {colours}"
        assert theme["pieOpacity"] == "1"
        total = 0
        for line in slices:
            found = _SLICE.fullmatch(line)
            assert found is not None, f"not a money-labelled slice: {line}"
            assert Decimal(found["money"].replace(",", "")) == Decimal(found["value"])
            total += Decimal(found["value"])
        assert total == Decimal(estimated.group(1).replace(",", ""))  # to the cent
    assert "other (" in fences[1].content  # the demo has more than six teams


def test_tables_are_narrow_with_short_cells(rendered: tuple[str, list[Token]]) -> None:
    _, tokens = rendered
    tables = _tables(tokens)
    assert len(tables) >= 6
    for rows in tables:
        header = rows[0]
        assert len(header) <= MAX_COLUMNS, header
        for row in rows:
            for cell in row[:-1]:
                assert len(cell) <= MAX_CELL, (header, cell)
            assert len(row[-1]) <= MAX_LAST_CELL, (header, row[-1])
    resources = next(rows for rows in tables if rows[0][0] == "Resource")
    names = [row[0] for row in resources[1:]]
    assert len(names) == len(set(names)), "a resource listed twice"
    assert "8×\u00a0A100-40GB" in {row[2] for row in resources}  # one line in a narrow column


def test_the_comparison_with_the_last_audit_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make demo`: last quarter recorded in a history, this quarter compared with it."""
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "audits.db")
    for name in ("demo.yaml", "demo-next.yaml"):
        out = tmp_path / f"{name}.md"
        args = ["scan", "--inventory", str(ROOT / "fixtures/inventory" / name), "--policy",
                str(ROOT / DEMO_POLICY), "--history", db, "--fail-on", "none", "-o", str(out)]  # fmt: skip
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "### Since the last audit" in text and "**Resolved since the last audit**" in text
    assert str(tmp_path) not in text and str(ROOT) not in text
    for rows in _tables(parse(text)):
        assert len(rows[0]) <= MAX_COLUMNS, rows[0]
        for row in rows:
            assert all(len(cell) <= MAX_CELL for cell in row[:-1]), row


_SERIES = re.compile(r"    (?P<kind>line|bar) \[(?P<values>\d+(?:, \d+)*)\]")


def _trend_chart(text: str) -> tuple[list[tuple[str, list[int]]], str]:
    """The rendered trend chart's series (kind, values) in order, and its legend line."""
    tokens = parse(text)
    (chart,) = [
        t.content for t in walk(tokens) if t.type == "fence" and "xychart-beta" in t.content
    ]
    series = [
        (found["kind"], [int(v) for v in found["values"].split(", ")])
        for found in map(_SERIES.fullmatch, chart.splitlines())
        if found is not None
    ]
    (legend,) = [line for line in text.splitlines() if line.startswith("_Legend: dark line")]
    return series, legend


def test_a_first_audits_zero_is_no_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mermaid draws a $0 bar as a sliver: the first audit realised nothing, so the realised
    series is a line (its $0 on the axis), and no bar series holds a zero."""
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "audits.db")
    for name in ("demo.yaml", "demo-next.yaml"):
        args = ["scan", "--inventory", str(ROOT / "fixtures/inventory" / name), "--policy",
                str(ROOT / DEMO_POLICY), "--history", db, "--fail-on", "none",
                "-o", str(tmp_path / "audit.md")]  # fmt: skip
        assert CliRunner().invoke(main, args).exit_code == 0
    text = (tmp_path / "audit.md").read_text(encoding="utf-8")
    series, legend = _trend_chart(text)
    (spend, found, realised) = series
    assert spend[0] == "line" and found == ("bar", found[1]) and 0 not in found[1]
    assert realised[0] == "line" and realised[1][0] == 0 and realised[1][1] > 0
    assert not [values for kind, values in series if kind == "bar" and 0 in values]
    assert "grey bars: savings found · blue line: savings realised" in legend


def test_trend_bars_where_every_audit_has_an_amount() -> None:
    from datetime import UTC, datetime

    from gpu_audit.core.results import TrendPoint
    from gpu_audit.report.markdown_since import _trend

    points = tuple(
        TrendPoint(datetime(2026, month, 1, tzinfo=UTC), 9000.0, found, realised, 3)
        for month, found, realised in ((3, 2000.0, 0.4), (6, 0.0, 700.0), (9, 1500.0, 300.0))
    )
    series, legend = _trend_chart("\n".join(_trend(points)))
    assert series == [("line", [9000] * 3), ("line", [2000, 0, 1500]), ("line", [0, 700, 300])]
    assert "grey line: savings found · blue line: savings realised" in legend
    points = tuple(
        replace(p, monthly_savings_usd=1000.0, savings_realised_usd=50.0) for p in points
    )
    series, legend = _trend_chart("\n".join(_trend(points)))
    assert [kind for kind, _ in series] == ["line", "bar", "bar"]
    assert "grey bars: savings found · blue bars, drawn over the grey ones: savings" in legend
