"""How wide GitHub draws a Markdown table, by a documented character-width model.

GitHub renders a README or issue in an article at most 980 px wide with 32 px padding each side
(`.markdown-body`), so content gets 916 px; text is 16 px -apple-system/Helvetica/Arial, a table
header bold, a code span 85% monospace. A table is `display: block; max-width: 100%;
overflow: auto`: when its columns cannot shrink to the page it scrolls, cutting off the columns
past the right edge. A cell is padded 6 px 13 px with a 1 px border. Glyph widths are Helvetica's
AFM advance widths (1/1000 em; Arial's metrics are the same), bold ×1.07; other characters are
taken as a digit's width (556) and a no-break space as a space.

A column's narrowest width is its widest unbreakable run (split at spaces and `<wbr>`s only:
hyphens and slashes are treated as unbreakable, which is how a date or a path should stay) plus
padding;
a table fits when those add up to at most the content width. `one_line_width` is the width with
no wrapping at all, for tables whose cells must not wrap (dates).
"""

from __future__ import annotations

CONTENT_PX = 980 - 2 * 32
FONT_PX = 16.0
CELL_PAD_PX = 2 * 13 + 1
BOLD = 1.07
CODE_EM = 0.85 * 0.6  # a monospace glyph is 0.6 em at 85% size

_AFM = dict(zip(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
    [278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
     *[556] * 10, 278, 278, 584, 584, 584, 556, 1015,
     667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722,
     667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333,
     556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333,
     500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584],
    strict=True,
))  # fmt: skip
_AFM["\u00a0"] = 278
_AFM["\u200b"] = 0  # a `<wbr>`: a break opportunity, no glyph


def text_px(text: str, bold: bool = False, code: bool = False) -> float:
    if code:
        return len(text) * CODE_EM * FONT_PX
    units = sum(_AFM.get(char, 556) for char in text)
    return units / 1000 * FONT_PX * (BOLD if bold else 1.0)


def cell_min_px(text: str, bold: bool = False) -> float:
    runs = text.replace("\u200b", " ").split(" ") or [""]
    return max(text_px(run, bold) for run in runs) + CELL_PAD_PX


def cell_line_px(text: str, bold: bool = False) -> float:
    return text_px(text, bold) + CELL_PAD_PX


def min_width(rows: list[list[str]]) -> float:
    """The narrowest the table can be drawn: each column at its widest unbreakable run."""
    columns = range(len(rows[0]))
    return sum(max(cell_min_px(r[c], bold=i == 0) for i, r in enumerate(rows)) for c in columns) + 1


def one_line_width(rows: list[list[str]]) -> float:
    columns = range(len(rows[0]))
    return (
        sum(max(cell_line_px(r[c], bold=i == 0) for i, r in enumerate(rows)) for c in columns) + 1
    )
