"""Every list of job formats, providers and anchored fields outside the registries is theirs.

A plain list of names is generated: `python -m tests.test_doc_lists` rewrites each one in
`GENERATED` from the registries (`gpu_audit.jobs.FORMATS` with each format's `title`,
`gpu_audit.collectors.PROVIDERS`, the field table), and the tests below fail, naming the file,
until it is run. A table that says something per format (docs/pre-commit.md, docs/estimate.md)
is written by hand and checked: one row per format, no row for a format that is gone. The
field table in docs/policy-language.md is tests/test_fields.py's.

Each check is a function of the formats (key → title), so tests/test_contributing.py can ask
them which files a new format would leave stale: the files CONTRIBUTING's recipe must name.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping

import pytest

from gpu_audit.collectors.registry import PROVIDERS
from gpu_audit.core.fields import FIELDS
from gpu_audit.jobs import FORMATS
from gpu_audit.jobs.syntax import Syntax
from tests.conftest import ROOT

Formats = Mapping[str, str]  # a format's key → its title
REGISTERED: Formats = {name: fmt.title for name, fmt in FORMATS.items()}
WRITER = "python -m tests.test_doc_lists"
PROVIDER_TITLES = [p.permissions_heading.removeprefix("## ") for p in PROVIDERS.values()]
WIDTH = 100


def _titles(formats: Formats) -> str:
    return ", ".join(sorted(formats.values(), key=str.casefold))


def _folders(formats: Formats) -> str:
    return ", ".join(f"`{name}/`" for name in sorted(formats))


def _anchored(formats: Formats) -> str:
    names = [f"`{name}`" for name, spec in FIELDS.items() if spec.anchored]
    return ", ".join(names[:-1]) + " and " + names[-1]


# (file, the list's place: a pattern whose group 1 is the list, what it must read, the column
# its continuation lines start at). The lists are wrapped at WIDTH when written.
GENERATED: list[tuple[str, str, Callable[[Formats], str], int]] = [
    ("README.md", r"lints ML job configs\s+\(([^)]*)\)", _titles, 3),
    (".pre-commit-hooks.yaml", r"Lint ML job configs\s+\(([^)]*)\)", _titles, 4),
    ("docs/pre-commit.md", r"detected by\s+content \(([^;)]*);", _titles, 2),
    ("src/gpu_audit/cli/main.py", r"\n    Formats: ([^.]*)\.", _titles, 4),
    ("fixtures/jobs/README.md", r"One folder per job format \(([^)]*)\)", _folders, 0),
    ("fixtures/jobs/README.md", r"then (`[^:]*?`)\s+point there", _anchored, 2),
]
# (file, the header row of a table with one hand-written row per format)
TABLES = [
    ("docs/pre-commit.md", "| format | capacity | workload | checkpoint |"),
    ("docs/estimate.md", "| format | runtime cap | budget |"),
]
PROVIDER_FIELD = "src/gpu_audit/core/resource.py"

# The pre-commit hook hands `check` the files the formats' syntaxes take (jobs/syntax.py): its
# `types_or` (pre-commit's file types, any of which) and `files` (a pattern every file matches).
Syntaxes = Mapping[str, Syntax]  # a format's key → its syntax
SYNTAXES: Syntaxes = {name: fmt.syntax for name, fmt in FORMATS.items()}
HOOKS = ".pre-commit-hooks.yaml"


def hook_types(syntaxes: Syntaxes) -> str:
    return "[" + ", ".join(sorted({t for s in syntaxes.values() for t in s.hook_types})) + "]"


def hook_files(syntaxes: Syntaxes) -> str:
    names = {x.lstrip(".") for s in syntaxes.values() for x in (*s.suffixes, *s.sniffed)}
    return "'(?i)\\.(" + "|".join(sorted(names)) + ")$'"


HOOK_KEYS: list[tuple[str, Callable[[Syntaxes], str]]] = [
    (r"\n  types_or: (\[[^\]\n]*\])", hook_types),
    (r"\n  files: ('[^'\n]*')", hook_files),
]


def stale_hook(syntaxes: Syntaxes) -> list[str]:
    """The hook's keys that do not take what these syntaxes take, as `file: what it says`."""
    stale = []
    for pattern, render in HOOK_KEYS:
        stated = _found(HOOKS, pattern).group(1)
        if stated != render(syntaxes):
            stale.append(f"{HOOKS}: {stated}, not {render(syntaxes)}")
    return stale


def _found(path: str, pattern: str) -> re.Match[str]:
    match = re.search(pattern, (ROOT / path).read_text(encoding="utf-8"))
    assert match is not None, f"{path}: the list ({pattern}) is gone; restore its sentence"
    return match


def stale_lists(formats: Formats) -> list[str]:
    """The generated lists that do not read as these formats say, as `file: what it lists`."""
    stale = []
    for path, pattern, render, _ in GENERATED:
        listed = " ".join(_found(path, pattern).group(1).split())
        if listed != render(formats):
            stale.append(f"{path}: lists {listed!r}, not {render(formats)!r}")
    return stale


def _table(path: str, header: str) -> list[str]:
    """The first cells of a Markdown table's rows, below its header row."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    assert header in lines, f"{path}: the table `{header}` is gone"
    rows = []
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip())
    return rows


def table_problems(formats: Formats) -> list[str]:
    """Tables without exactly one row per format (a row is a format's when its first cell
    starts with the format's title: `Ray launcher / Anyscale` is Ray's), or with a row for a
    format that is gone."""
    problems = []
    for path, header in TABLES:
        rows = _table(path, header)
        for title in sorted(formats.values()):
            if sum(row.startswith(title) for row in rows) != 1:
                problems.append(f"{path}: the table `{header}` needs one row for {title}")
        for row in rows:
            if not any(row.startswith(title) for title in formats.values()):
                problems.append(f"{path}: the table `{header}` has a row for {row}, no format")
    return problems


def provider_field_problems(formats: Formats) -> list[str]:
    """The `provider` field's description names every live provider and every format."""
    doc = FIELDS["provider"].doc
    live = re.search(r"live provider \(([^)]*)\)", doc)
    jobs = re.search(r"job format \(([^)]*)\)", doc)
    fix = f"{PROVIDER_FIELD}: the `provider` field's description should name"
    if live is None or re.findall(r"`([^`]+)`", live.group(1)) != sorted(PROVIDERS):
        return [f"{fix} the live providers ({', '.join(sorted(PROVIDERS))})"]
    if jobs is None or re.findall(r"`([^`]+)`", jobs.group(1)) != sorted(formats):
        return [
            f"{fix} the job formats ({', '.join(sorted(formats))}); then python -m tests.test_fields"
        ]
    return []


def test_every_plain_list_is_the_registrys() -> None:
    assert stale_lists(REGISTERED) == [], f"run `{WRITER}`"


def test_the_hook_takes_the_files_the_syntaxes_take() -> None:
    assert stale_hook(SYNTAXES) == [], f"run `{WRITER}`"


def test_every_table_of_formats_has_one_row_per_format() -> None:
    """What a row says is the format's own, so it is written by hand."""
    assert table_problems(REGISTERED) == []


def test_the_provider_field_names_every_provider_and_format() -> None:
    assert provider_field_problems(REGISTERED) == []


@pytest.mark.parametrize("column", ["kind", "capacity", "workload"])
def test_the_csv_columns_give_every_value_of_their_field(column: str) -> None:
    doc = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith(f"| `{column}` | "))
    values = re.findall(r"`([^`]+)`", row.split("|")[2])
    choices = FIELDS[column].choices
    assert choices is not None and set(values) == set(choices), (
        f"docs/reports.md: the CSV column `{column}` should list {sorted(choices)}"
    )


def test_the_readme_names_every_provider_the_scan_reads() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    scan = readme.split("**`gpu-audit scan`**", 1)[1].split("\n2. ", 1)[0]
    missing = [title for title in PROVIDER_TITLES if title not in scan]
    assert missing == [], f"README.md: the `gpu-audit scan` item should name {missing}"


@pytest.mark.parametrize("extra", [{}, {"wandb": "W&B Sweeps"}])
def test_the_writer_rewrites_a_stale_list(extra: Formats) -> None:
    _, pattern, render, indent = GENERATED[0]
    formats = {**REGISTERED, **extra}
    text = "1. a hook that lints ML job configs (SkyPilot,\n   Ray) before anything launches.\n"
    written = _rewrite(text, pattern, render(formats), indent, formats)
    match = re.search(pattern, written)
    assert match is not None and " ".join(match.group(1).split()) == render(formats)
    assert written.endswith(") before anything launches.\n")
    lines = written.splitlines()
    assert len(lines) > 1 and all(len(line) <= WIDTH for line in lines[:-1])
    assert all(line.startswith("   ") for line in lines[1:])
    assert "Vertex AI" in written  # a title is never broken


def _rewrite(text: str, pattern: str, value: str, indent: int, formats: Formats) -> str:
    """`text` with the list in `pattern`'s group 1 replaced by `value`, and the rest of its
    paragraph refilled at WIDTH from the column the list starts at (continuation lines indented
    by `indent`); a format's title is never broken across lines."""
    match = re.search(pattern, text)
    assert match is not None, pattern
    start = match.start(1)
    column = start - (text.rfind("\n", 0, start) + 1)
    end = _paragraph_end(text, match.end(1), indent)
    words = value + text[match.end(1) : end]
    for title in formats.values():
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
    or more than its continuation lines, a new list item or a YAML key."""
    end = text.find("\n", position)
    while end != -1:
        following = text.find("\n", end + 1)
        line = text[end + 1 : following if following != -1 else len(text)]
        body = line[indent:]
        if (
            not line.strip()
            or line[:indent].strip()
            or body[:1].isspace()
            or re.match(r"[-*] |\d+\. |```|[\w-]+:( |$)", body)
        ):
            return end
        end = following
    return len(text)


def write_lists(formats: Formats = REGISTERED) -> None:
    """Rewrite every list in GENERATED from the registries."""
    for path, pattern, render, indent in GENERATED:
        file = ROOT / path
        text = file.read_text(encoding="utf-8")
        file.write_text(_rewrite(text, pattern, render(formats), indent, formats), encoding="utf-8")


def write_hook(syntaxes: Syntaxes = SYNTAXES) -> None:
    """Rewrite the hook's `types_or` and `files` from the formats' syntaxes."""
    file = ROOT / HOOKS
    text = file.read_text(encoding="utf-8")
    for pattern, render in HOOK_KEYS:
        match = _found(HOOKS, pattern)
        text = text.replace(
            match.group(0), match.group(0).replace(match.group(1), render(syntaxes))
        )
    file.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_lists()
    write_hook()
