"""One escaping function for every value printed to a terminal, log or text report."""

from __future__ import annotations

import codecs
import re

from gpu_audit.core.lazyre import lazy

# C0 and C1 controls (ESC, CSI, OSC, BEL, line breaks), DEL, the Unicode line and paragraph
# separators, and the bidi marks, embeddings, overrides and isolates that reorder a line.
UNSAFE = lazy("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape_code(match: re.Match[str]) -> str:
    """One matched character as `\\xNN` or `\\uNNNN` (for writers with their own set)."""
    return _code(match)


def _code(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def terminal_safe(value: object) -> str:
    """`value` as one inert line: every control or bidi character shown as `\\xNN`/`\\uNNNN`.

    A tag value, file name or cloud message printed through this cannot move the cursor, set
    the window title (OSC), ring the bell, forge a second line or reverse the text around it.
    """
    text = str(value)
    if text.isprintable():  # none of them (all are Cc, Cf, Zl or Zp): the common case
        return text
    return UNSAFE.sub(_code, text)


UNENCODABLE = "gpu-audit-escape"  # the `errors` of the program's stdout and stderr


def _escape_unencodable(error: UnicodeError) -> tuple[str, int]:
    """`\\uNNNN` for each character the stream's encoding cannot write (a surrogate pair past
    U+FFFF): still valid JSON, and readable in a table, CSV cell or message."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    escaped = []
    for char in error.object[error.start : error.end]:
        point = ord(char)
        if point > 0xFFFF:
            point -= 0x10000
            escaped.append(f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{point:04x}")
    return "".join(escaped), error.end


def escape_unencodable(*streams: object) -> None:
    """Give the streams (standard output and error) `UNENCODABLE` errors, so that a console or
    redirect in a legacy encoding (cp1252 on Windows, ASCII with `PYTHONIOENCODING`) gets an
    escape for `≥`, `…` or a tag's emoji, never a traceback."""
    try:
        codecs.lookup_error(UNENCODABLE)
    except LookupError:
        codecs.register_error(UNENCODABLE, _escape_unencodable)
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            reconfigure(errors=UNENCODABLE)
