"""The Markdown report parses as CommonMark + GFM tables, and input values stay inert text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

from gpu_audit.core.results import ScanResult
from gpu_audit.report import markdown
from gpu_audit.report.markdown_text import chart_label, inline, prose
from tests.report.conftest import HOSTILE

SECTIONS = {
    "Executive summary",
    "Savings",
    "Findings by resource",
    "Findings by rule",
    "Waivers",
    "Not evaluated",
    "Coverage gaps",
    "Skipped inputs",
}
_PIPE = re.compile(r"(?<!\\)(?:\\\\)*\|")  # a pipe not escaped by an odd run of backslashes


def parse(text: str) -> list[Token]:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)


def walk(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from walk(token.children)


def headings(tokens: list[Token]) -> list[tuple[str, str]]:
    return [
        (t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"
    ]


def table_shapes(tokens: list[Token]) -> list[list[int]]:
    """Cells per row, per table, as the parser sees them."""
    shapes: list[list[int]] = []
    for token in tokens:
        if token.type == "table_open":
            shapes.append([])
        elif token.type == "tr_open":
            shapes[-1].append(0)
        elif token.type in ("th_open", "td_open"):
            shapes[-1][-1] += 1
    return shapes


def source_rows(text: str) -> list[list[str]]:
    """Table lines split on unescaped pipes: what a GFM parser would count, extra cells included."""
    tables: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    return tables


def assert_well_formed(text: str, result: ScanResult) -> list[Token]:
    tokens = parse(text)
    every = list(walk(tokens))
    ours = ("<wbr>",)  # the break opportunity our own code writes in long names
    leaked = [t for t in every if t.type in ("html_block", "html_inline") and t.content not in ours]
    assert not leaked, "raw HTML leaked"
    assert not [t for t in every if t.type in ("link_open", "image")], "a value became a link"
    found = headings(tokens)
    assert found[0] == ("h1", "GPU audit report")
    assert {name for tag, name in found if tag == "h2"} <= SECTIONS
    rules = {r.id for r in result.rules}
    for tag, name in found:
        assert tag in ("h1", "h2", "h3"), name
        if tag == "h3":
            assert name.split(":")[0] in rules or name.startswith(("Active", "Expiring", "Expired"))
    for shape in table_shapes(tokens):
        assert len(set(shape)) == 1, f"rows with differing cell counts: {shape}"
    for rows in source_rows(text):
        widths = {len(_PIPE.findall(row)) for row in rows}
        assert len(widths) == 1, f"a row gained or lost a cell: {rows}"
    for fence in (t for t in tokens if t.type == "fence"):
        assert fence.info == "mermaid"
        init, title, *slices = fence.content.splitlines()
        assert init.startswith("%%{init: ") and title.startswith("pie title ")
        for line in slices:
            assert re.fullmatch(r'    "[^"`#;]*: \$[\d,]+\.\d\d" : \d+\.\d\d', line), line
    return tokens


def test_demo_is_well_formed(demo: ScanResult) -> None:
    text = markdown.render(demo)
    tokens = assert_well_formed(text, demo)
    rule_headings = [name for tag, name in headings(tokens) if tag == "h3" and ":" in name]
    assert len(rule_headings) == len({f.rule_id for f in demo.findings})
    assert "Expiring within 30 days" in text
    assert "install the CloudWatch agent" in text and "Ops Agent" in text
    assert "`data-bucket` tag" in text
    assert text.count("```mermaid") == 2


def test_hostile_values_stay_inert(hostile: ScanResult) -> None:
    text = markdown.render(hostile)
    tokens = assert_well_formed(text, hostile)
    every = list(walk(tokens))
    assert not any(
        t.type == "heading_open" and "Injected" in tokens[i + 1].content
        for i, t in enumerate(tokens)
    )
    assert not any(t.type == "code_inline" and "tick" in t.content for t in every)
    assert not any(t.type == "fence" and t.info != "mermaid" for t in every)
    flat = "x|y # Injected heading ``` `tick` <script>alert(1)</script> [link](https://evil.example) &amp; \\"
    cells = [t.content for t in every if t.type == "text"]
    assert any(flat in cell for cell in cells), "the value should read back verbatim as text"
    assert "<script>" not in text


def test_jobs_point_at_the_offending_line(jobs: ScanResult) -> None:
    text = markdown.render(jobs)
    assert_well_formed(text, jobs)
    assert "jobs/train llm.yaml" in text and "spot-for-training (line 7)" in text
    assert "gpu-class-cap (line 12, suppressed)" in text
    assert "**Suppressed inline:** eval-h100 (approved in FIN-77)" in text
    assert "## Skipped inputs" in text and "unreadable" in text


def test_inline_escapes() -> None:
    assert inline("a|b") == "a\\|b"
    assert inline("# h\nnext") == "\\# h next"
    assert inline("<b>&") == "&lt;b&gt;&amp;"
    assert inline(None) == "–"
    assert inline("x" * 300, 10) == "x" * 9 + "…"
    assert inline("\\") == "\\\\"
    assert (
        inline("https://x.example www.y.example s3://b")
        == "https\\://x.example www\\.y.example s3\\://b"
    )


def test_prose_keeps_code_spans_but_nothing_else() -> None:
    assert prose("set `use_spot: true` now") == "set `use_spot: true` now"
    assert prose("odd ` tick <i>") == "odd \\` tick &lt;i&gt;"
    assert prose("`<script>` | x") == "`<script>` \\| x"


def test_chart_labels_cannot_close_the_string_or_fence() -> None:
    label = chart_label(HOSTILE)
    assert not set(label) & set('"`#;\n<>[]|&\\')
    assert len(chart_label("a" * 100)) == 40


def test_job_fixtures_are_well_formed(checked: ScanResult) -> None:
    text = markdown.render(checked)
    assert_well_formed(text, checked)
    for finding in checked.findings:
        assert finding.resource.source.path in text
        assert f"{finding.rule_id} (line {finding.line}" in text


def test_long_resource_tables_are_capped(demo: ScanResult) -> None:
    from dataclasses import replace

    from gpu_audit.report import markdown_resources

    spot = [f for f in demo.findings if f.rule_id == "spot-for-training"]
    many = tuple(
        replace(f, resource=replace(f.resource, id=f"{f.resource.id}-{n}"))
        for n in range(10)
        for f in spot
    )
    text = markdown.render(replace(demo, findings=many))
    assert_well_formed(text, demo)
    more = len(many) - markdown_resources.ROWS
    assert f"… and {more} more resources with findings and smaller savings" in text
    assert f"and {len(many) - 10} more (see *Findings by resource*)" in text


def test_header_shows_no_absolute_path(demo: ScanResult) -> None:
    import os
    from dataclasses import replace

    import gpu_audit

    pack = os.path.join(os.path.dirname(gpu_audit.__file__), "policy", "packs", "runbook.yaml")
    elsewhere = "/home/someone/secret/team-policy.yaml"
    scope = replace(demo.scope, policy_files=(pack, elsewhere), policy_versions=())
    text = markdown.render(replace(demo, scope=scope))
    head = text.split("## ", 1)[0]
    assert "runbook" in head and "team-policy.yaml" in head
    assert "/home/" not in head and gpu_audit.__file__.rsplit("/", 2)[0] not in head


def test_large_inventories_rank_resources_the_same_way(demo: ScanResult) -> None:
    """Past ROWS resources with a saving, the rows come from the best findings without a pass
    that builds an entry per resource; they must be the rows the full ranking shows."""
    from dataclasses import replace

    from gpu_audit.core.savings import best_savings
    from gpu_audit.report.markdown_resources import ROWS, findings_by_resource

    many = tuple(
        replace(f, resource=replace(f.resource, id=f"{f.resource.id}-{n}"))
        for n in range(12)
        for f in demo.findings
    )
    result = replace(demo, findings=many)
    best = best_savings(list(many))
    assert len(best) >= ROWS
    fast, full = findings_by_resource(result, best), findings_by_resource(result, [])

    def savings(lines: list[str]) -> list[str]:
        return [line.split(" | ")[4] for line in lines if line.startswith("| ")][2:]

    assert savings(fast) == savings(full) and len(savings(fast)) == ROWS
    assert fast[-1] == full[-1] and fast[-1].startswith("… and ")
