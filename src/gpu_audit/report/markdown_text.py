"""Make any value from the cloud or a file inert in GitHub-flavoured Markdown and Mermaid."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from gpu_audit.core.lazyre import lazy
from gpu_audit.report.escape import terminal_safe

# Every line break CommonMark or a browser honours, and the other C0/C1 controls: one space each.
_BREAKS = lazy(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def _flat(value: object) -> str:
    """One line: breaks and controls folded to single spaces, bidi characters shown escaped."""
    return terminal_safe(" ".join(_BREAKS.sub(" ", str(value)).split()))


# ASCII punctuation with a meaning somewhere in GFM (emphasis, code, links, tables, headings,
# strikethrough, autolinks, images, entities); backslash-escaping any of it is always legal.
_MARKUP = lazy(r"([\\`*_\[\]|#~!$])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# GitHub turns bare `scheme://…` and `www.…` into links (its autolink extension fires on the `:`
# and on `www.`); an escaped `:` or `.` is plain text to it and reads the same once rendered.
_AUTOLINK = lazy(r"(?i)(?<=[a-z0-9]):(?=//)|(?<=\bwww)\.")
_CHART_UNSAFE = lazy(r"[^A-Za-z0-9 ._,:/@()+-]+")


def inline(value: object, limit: int = 200) -> str:
    """One line of literal text for a table cell, heading or paragraph.

    Line breaks become spaces (so a value cannot end a table row or start a heading), Markdown
    punctuation is backslash-escaped (so `|` cannot add a cell, a backtick cannot open code and
    `[x](y)` cannot become a link), and `<`, `>`, `&` become entities (so no raw HTML survives).
    Long values are clipped before escaping, so an escape is never cut in half.
    """
    if value is None:
        return "–"
    text = _flat(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _escape(text)


def _escape(text: str) -> str:
    text = _MARKUP.sub(r"\\\1", text)
    text = _AUTOLINK.sub(lambda m: "\\" + m.group(), text)
    return re.sub(r"[&<>]", lambda m: _ENTITIES[m.group()], text)


def prose(value: object, limit: int = 600) -> str:
    """Like `inline`, but an author's paired backticks stay code spans (for remediation text).

    Outside tables a code span is inert: its content has no backtick (the split guarantees it)
    and no line break (`inline`'s whitespace folding runs first), so it cannot end early.
    """
    if value is None:
        return "–"
    text = _flat(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: escape all of it
        return _escape(text)
    return "".join(
        f"`{part}`" if i % 2 == 1 and part.strip() else _escape(f"`{part}`" if i % 2 else part)
        for i, part in enumerate(parts)
    )


def row(cells: Sequence[str]) -> str:
    """A GFM table row from cells that are already escaped (by `inline`) or our own literals."""
    return "| " + " | ".join(cells) + " |"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    """Header, delimiter and body rows; `align` has one letter per column: l, r or c."""
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    delimiter = [
        marks.get(align[i], "---") if i < len(align) else "---" for i in range(len(headers))
    ]
    return [row(headers), row(delimiter), *(row(cells) for cells in rows)]


def chart_label(value: object, limit: int = 40) -> str:
    """A Mermaid label between double quotes: only characters that cannot end the string,
    the statement or the code fence around it."""
    text = _CHART_UNSAFE.sub("_", " ".join(_BREAKS.sub(" ", str(value)).split()))
    return (text[: limit - 1] + "…" if len(text) > limit else text) or "_"


def breakable(markdown: str, longer_than: int = 20) -> str:
    """A long file or job name with no space (`team__train-llm_a100.cfn.yml`), as Markdown
    `inline` wrote it, given a break opportunity (`<wbr>`, which copies as nothing) after each
    `_`, `-` and `.`: GitHub's table can then wrap it instead of scrolling off the page."""
    if len(markdown) <= longer_than or " " in markdown:
        return markdown
    out: list[str] = []
    index = 0
    run = 0  # characters since the last place to wrap
    while index < len(markdown):
        if markdown.startswith("\\_", index):
            out.append("\\_<wbr>")
            index, run = index + 2, 0
            continue
        char = markdown[index]
        # a name with no `-_.` in 20 characters (`TrainTheLargeModelOnEightGpus`) wraps too: at
        # a lower-to-upper case change, or after 20 characters; never inside `\x` or `&lt;`
        atom = _ATOM.match(markdown, index)
        piece = atom.group() if atom else char
        upper = piece.isupper() and index and markdown[index - 1].islower()
        if run >= _RUN or (upper and run >= 8):
            out.append("<wbr>")
            run = 0
        out.append(piece)
        index, run = index + len(piece), run + 1
        if char in "-." and index < len(markdown):
            out.append("<wbr>")
            run = 0
    return "".join(out)


_RUN = 20
_ATOM = lazy(r"\\.|&[a-z]+;")


def shown_path(path: str) -> str:
    """A path fit to publish: a built-in pack by name (`runbook`), a path under the working
    directory relative to it, any other absolute path by its file name only."""
    if not os.path.isabs(path):
        return path
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # gpu_audit/
    if path.startswith(package + os.sep):
        return os.path.splitext(os.path.basename(path))[0]
    relative = os.path.relpath(path)
    return os.path.basename(path) if relative.startswith("..") else relative


def shown_source(source: str) -> str:
    """`path:line` with the path as `shown_path` shows it."""
    path, colon, line = source.rpartition(":")
    return f"{shown_path(path)}:{line}" if colon and line.isdigit() else shown_path(source)
