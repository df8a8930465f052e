"""Plain tables that fit the terminal, as the scan table does: columns dropped in a stated order,
then the widest clipped; long notes (a price's source) as numbered footnotes below."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Sequence

from gpu_audit.report.escape import terminal_safe

WIDTH = 120  # in files and pipes (unless COLUMNS is set), as the scan table


def terminal_width() -> int:
    """The terminal's width in columns when stdout is a terminal or COLUMNS is set, else the default
    WIDTH."""
    sized = sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit()
    return shutil.get_terminal_size((WIDTH, 24)).columns if sized else WIDTH


def fitted(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    drop: Sequence[str] = (),
    footnotes: str | None = None,
    keep: Sequence[str] = (),
) -> str:
    """`headers` and `rows` as a simple table no wider than `width`: the `footnotes` column
    becomes `[n]` marks with its texts listed under the table; the `drop` columns go, in
    order, while it is too wide; then the widest column is clipped (`…`), never a `keep` one."""
    heads = list(headers)
    body = [[terminal_safe(" ".join(str(c).split())) for c in row] for row in rows]
    notes: list[str] = []
    if footnotes is not None and footnotes in heads:
        at = heads.index(footnotes)
        for row in body:
            if row[at] in ("", "-"):
                continue
            if row[at] not in notes:
                notes.append(row[at])
            row[at] = f"[{notes.index(row[at]) + 1}]"
    for name in drop:
        if _width(heads, body) <= width:
            break
        if name in heads:
            at = heads.index(name)
            del heads[at]
            for row in body:
                del row[at]
    while _width(heads, body) > width:
        sizes = _sizes(heads, body)
        clippable = [i for i, head in enumerate(heads) if head not in keep] or [0]
        widest = max(clippable, key=sizes.__getitem__)
        if sizes[widest] <= 8:
            break  # nothing left to narrow sensibly: a wide line beats an unreadable one
        # the widest as far as needed, to eight at least; then the next widest, in turn
        limit = max(sizes[widest] - (_width(heads, body) - width), 8)
        for row in body:
            if len(row[widest]) > limit:
                row[widest] = row[widest][: limit - 1] + "…"
        if len(heads[widest]) + 2 > limit:
            heads[widest] = heads[widest][: max(limit - 3, 1)] + "…"
    lines = _lines(heads, body)
    for number, text in enumerate(notes, start=1):
        mark = f"[{number}] "
        wrapped = textwrap.wrap(text, max(width - len(mark), 20), break_on_hyphens=False)
        lines += [mark + wrapped[0], *(" " * len(mark) + more for more in wrapped[1:])]
    return "\n".join(lines)


def _sizes(heads: list[str], body: list[list[str]]) -> list[int]:
    # an empty body is a table of its headers alone (`history reservations` of a fleet without one)
    return [max([len(h) + 2, *(len(r[i]) for r in body)]) for i, h in enumerate(heads)]


def _width(heads: list[str], body: list[list[str]]) -> int:
    sizes = _sizes(heads, body)
    return sum(sizes) + 2 * (len(sizes) - 1)


def _lines(heads: list[str], body: list[list[str]]) -> list[str]:
    sizes = _sizes(heads, body)
    out = ["  ".join(h.ljust(w) for h, w in zip(heads, sizes, strict=True)).rstrip()]
    out.append("  ".join("-" * w for w in sizes))
    out += ["  ".join(c.ljust(w) for c, w in zip(r, sizes, strict=True)).rstrip() for r in body]
    return out
