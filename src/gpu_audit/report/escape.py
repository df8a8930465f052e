"""One escaping function for every value printed to a terminal, log or text report."""

from __future__ import annotations

import re

# C0 and C1 controls (ESC, CSI, OSC, BEL, line breaks), DEL, the Unicode line and paragraph
# separators, and the bidi marks, embeddings, overrides and isolates that reorder a line.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _code(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def terminal_safe(value: object) -> str:
    """`value` as one inert line: every control or bidi character shown as `\\xNN`/`\\uNNNN`.

    A tag value, file name or cloud message printed through this cannot move the cursor, set
    the window title (OSC), ring the bell, forge a second line or reverse the text around it.
    """
    return UNSAFE.sub(_code, str(value))
