"""The knobs in every format: the Markdown's Knobs section (parsed by markdown-it), the CSV's
`knobs` column (parsed by the csv module), the JSON's `training` (tests/jobs/test_knobs.py)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from click.testing import CliRunner
from markdown_it import MarkdownIt

from gpu_audit.cli.main import main

KNOBS = Path(__file__).resolve().parents[2] / "fixtures" / "knobs"
FILES = [str(KNOBS / "skypilot-hf-deepspeed.yaml"), str(KNOBS / "skypilot-plain.yaml")]


def _check(fmt: str) -> str:
    result = CliRunner().invoke(main, ["check", *FILES, "--format", fmt])
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_markdown_has_a_knobs_section_with_each_knobs_file_and_line() -> None:
    tokens = MarkdownIt("commonmark").enable(["table"]).parse(_check("markdown"))
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Knobs" in headings
    start = headings.index("Knobs")
    cells: list[list[str]] = []
    row: list[str] = []
    seen = 0
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            seen += 1
        if seen - 1 != start:
            continue
        if token.type == "tr_open":
            row = []
        elif token.type in ("td_open", "th_open"):  # the cell's text as rendered (unescaped)
            row.append("".join(c.content for c in tokens[i + 1].children or () if c.type == "text"))
        elif token.type == "tr_close":
            cells.append(row)
    header, *rows = cells
    assert header == ["Job or pod", "GPUs", "Knobs", "Measured"]
    assert len(rows) == 1  # the plain job states no knob: no row
    location, gpus, knobs, measured = rows[0]
    assert location.endswith("skypilot-hf-deepspeed.yaml:2") and gpus == "8× A100-80GB"
    assert "precision fp16 (deepspeed-zero_stage2_config.json:3)" in knobs
    assert "batch 4 (skypilot-hf-deepspeed.yaml:12)" in knobs
    assert "workers 0 (default)" in knobs and measured == "–"


def test_csv_has_a_knobs_column_at_the_end() -> None:
    rows = list(csv.DictReader(io.StringIO(_check("csv"))))
    assert list(rows[0])[-1] == "knobs"
    by_rule = {r["rule_id"]: r for r in rows if r["path"].endswith("skypilot-hf-deepspeed.yaml")}
    knobs = by_rule["dataloader-workers"]["knobs"]
    assert knobs.startswith("precision=fp16; batch=4; accumulation=4; workers=0 (default)")
    plain = [r for r in rows if r["path"].endswith("skypilot-plain.yaml")]
    assert plain and all(r["knobs"] == "" for r in plain)
