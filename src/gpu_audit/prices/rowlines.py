"""The line each price row starts on, for error messages (json.loads keeps no positions)."""

from __future__ import annotations

import json
import re

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, at: int) -> int:
    """Past the white space at `at` (the pattern matches the empty string too)."""
    found = _WS.match(text, at)
    return found.end() if found else at


def row_lines(text: str) -> list[int]:
    """The line each item of the top-level `rows` array starts on ([] when not found)."""
    lines: list[int] = []
    try:
        at = _skip(text, 0)
        if text[at] != "{":
            return []
        at = _skip(text, at + 1)
        while text[at] != "}":
            name, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at) + 1  # past ':'
            at = _skip(text, at)
            if name == "rows" and text[at] == "[":
                lines, at = _items(text, at)
            else:
                _, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            if text[at] == ",":
                at = _skip(text, at + 1)
    except (ValueError, IndexError, RecursionError):
        return []
    return lines


def _items(text: str, at: int) -> tuple[list[int], int]:
    lines, line, counted = [], 1, 0
    at = _skip(text, at + 1)
    while text[at] != "]":
        line += text.count("\n", counted, at)
        counted = at
        lines.append(line)
        _, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return lines, at + 1
