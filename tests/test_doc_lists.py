"""Every list of job formats, providers and anchored fields outside the registries is theirs.

A plain list of names is generated: `python -m tests.test_doc_lists` rewrites each one in
`GENERATED` from the registries (`gpu_audit.jobs.FORMATS` with each format's `title`,
`gpu_audit.collectors.PROVIDERS`, the field table), and the tests below fail, naming the file,
until it is run. A table that says something per format (docs/pre-commit.md, docs/estimate.md)
is written by hand and checked: one row per format, no row for a format that is gone. The
field table in docs/policy-language.md is tests/test_fields.py's.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

import pytest

from gpu_audit.collectors.registry import PROVIDERS
from gpu_audit.core.fields import FIELDS
from gpu_audit.jobs import FORMATS
from tests.conftest import ROOT

WRITER = "python -m tests.test_doc_lists"
TITLES = sorted((fmt.title for fmt in FORMATS.values()), key=str.casefold)
PROVIDER_TITLES = [p.permissions_heading.removeprefix("## ") for p in PROVIDERS.values()]


def _titles() -> str:
    return ", ".join(TITLES)


def _folders() -> str:
    return ", ".join(f"`{name}/`" for name in sorted(FORMATS))


def _anchored() -> str:
    names = [f"`{name}`" for name, spec in FIELDS.items() if spec.anchored]
    return ", ".join(names[:-1]) + " and " + names[-1]


# file → (the list's place: a pattern whose group 1 is the list, what it must read, the column
# its continuation lines start at). The lists are wrapped at WIDTH when written.
GENERATED: list[tuple[str, str, Callable[[], str], int]] = [
    ("README.md", r"lints ML job configs\s+\(([^)]*)\)", _titles, 3),
    (".pre-commit-hooks.yaml", r"Lint ML job configs\s+\(([^)]*)\)", _titles, 4),
    ("docs/pre-commit.md", r"detected by\s+content \(([^;)]*);", _titles, 2),
    ("src/gpu_audit/cli/main.py", r"\n    Formats: ([^.]*)\.", _titles, 4),
    ("fixtures/jobs/README.md", r"One folder per job format \(([^)]*)\)", _folders, 0),
    ("fixtures/jobs/README.md", r"then (`[^:]*?`)\s+point there", _anchored, 2),
]
WIDTH = 100


def _found(path: str, pattern: str) -> re.Match[str]:
    match = re.search(pattern, (ROOT / path).read_text(encoding="utf-8"))
    assert match is not None, f"{path}: the list ({pattern}) is gone; restore its sentence"
    return match


@pytest.mark.parametrize(
    ("path", "pattern", "render", "indent"), GENERATED, ids=[g[0] for g in GENERATED]
)
def test_every_plain_list_is_the_registrys(
    path: str, pattern: str, render: Callable[[], str], indent: int
) -> None:
    listed = " ".join(_found(path, pattern).group(1).split())
    assert listed.rstrip() == render(), (
        f"{path} lists {listed!r}, the registries say {render()!r}: run `{WRITER}`"
    )


def _table(path: str, header: str) -> list[str]:
    """The first cells of a Markdown table's rows, below its header row."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    return rows


@pytest.mark.parametrize(
    ("path", "header"),
    [
        ("docs/pre-commit.md", "| format | capacity | workload | checkpoint |"),
        ("docs/estimate.md", "| format | runtime cap | budget |"),
    ],
)
def test_every_table_of_formats_has_one_row_per_format(path: str, header: str) -> None:
    """A row is a format's when its first cell starts with the format's title (`Ray launcher /
    Anyscale` is Ray's): what it says is the format's own, so it is written by hand."""
    rows = _table(path, header)
    for title in TITLES:
        mine = [row for row in rows if row.startswith(title)]
        assert len(mine) == 1, f"{path}: the table `{header}` needs one row for {title}"
    stray = [row for row in rows if not any(row.startswith(title) for title in TITLES)]
    assert stray == [], f"{path}: rows for formats the registry does not have: {stray}"


def test_the_provider_field_names_every_provider_and_format() -> None:
    doc = FIELDS["provider"].doc
    live = re.search(r"live provider \(([^)]*)\)", doc)
    formats = re.search(r"job format \(([^)]*)\)", doc)
    assert live is not None and formats is not None, doc
    where = (
        "src/gpu_audit/core/resource.py: the `provider` field's description "
        "(then `python -m tests.test_fields`)"
    )
    assert re.findall(r"`([^`]+)`", live.group(1)) == sorted(PROVIDERS), where
    assert re.findall(r"`([^`]+)`", formats.group(1)) == sorted(FORMATS), where


def test_the_readme_names_every_provider_the_scan_reads() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    scan = readme.split("**`gpu-audit scan`**", 1)[1].split("\n2. ", 1)[0]
    missing = [title for title in PROVIDER_TITLES if title not in scan]
    assert missing == [], f"README.md: the `gpu-audit scan` item should name {missing}"


def test_the_writer_rewrites_a_stale_list() -> None:
    _, pattern, render, indent = GENERATED[0]
    text = "1. a hook that lints ML job configs (SkyPilot,\n   Ray) before anything launches.\n"
    written = _rewrite(text, pattern, render(), indent)
    match = re.search(pattern, written)
    assert match is not None and " ".join(match.group(1).split()) == _titles()
    assert written.endswith(") before anything launches.\n")
    lines = written.splitlines()
    assert len(lines) > 1 and all(len(line) <= WIDTH for line in lines[:-1])
    assert all(line.startswith("   ") for line in lines[1:])


def _rewrite(text: str, pattern: str, value: str, indent: int) -> str:
    """`text` with the list in `pattern`'s group 1 replaced by `value`, and the rest of its
    paragraph refilled at WIDTH from the column the list starts at (continuation lines indented
    by `indent`); a format's title is never broken across lines."""
    match = re.search(pattern, text)
    assert match is not None, pattern
    start = match.start(1)
    column = start - (text.rfind("\n", 0, start) + 1)
    end = _paragraph_end(text, match.end(1), indent)
    words = value + text[match.end(1) : end]
    for title in TITLES:
        words = words.replace(title, title.replace(" ", "\0"))
    filled = textwrap.fill(
        " ".join(words.split()),
        width=WIDTH,
        initial_indent="x" * column,
        subsequent_indent=" " * indent,
        break_on_hyphens=False,
        break_long_words=False,
    )
    return text[:start] + filled[column:].replace("\0", " ") + text[end:]


def _paragraph_end(text: str, position: int, indent: int) -> int:
    """Where the paragraph holding `position` ends: before a blank line, a line indented less
    or more than its continuation lines, or a new list item."""
    end = text.find("\n", position)
    while end != -1:
        line = text[end + 1 : text.find("\n", end + 1) % (len(text) + 1)]
        body = line[indent:]
        if (
            not line.strip()
            or line[:indent].strip()
            or body[:1].isspace()
            or re.match(r"[-*] |\d+\. |```|[\w-]+:( |$)", body)
        ):
            return end
        end = text.find("\n", end + 1)
    return len(text)


def write_lists() -> None:
    """Rewrite every list in GENERATED from the registries."""
    for path, pattern, render, indent in GENERATED:
        file = ROOT / path
        file.write_text(
            _rewrite(file.read_text(encoding="utf-8"), pattern, render(), indent),
            encoding="utf-8",
        )


if __name__ == "__main__":
    write_lists()
