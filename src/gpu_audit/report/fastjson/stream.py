"""JSON written piece by piece to a stream, byte-identical to `json.dumps(indent=2,
ensure_ascii=False)` for finite values, and strict: NaN and infinity are written as `null`.

The standard library's indenting encoder is pure Python generators (about 10× slower than this
for a 100k-resource report) and builds the whole text before the first byte is written.

A text stream in UTF-8 (a file `open(..., encoding="utf-8")`, standard output on POSIX) is
written through its byte buffer: `Raw` batches go out as the bytes they are.
"""

from __future__ import annotations

import codecs
import math
import os
from collections.abc import Callable
from json.encoder import encode_basestring
from types import GeneratorType
from typing import Any, TextIO

Write = Callable[[str], object]
_ESCAPE: Callable[[str], str] = encode_basestring
_CONTAINERS = (dict, list, tuple, GeneratorType)
_KEYS: dict[str, str] = {}  # escaped `"key": ` of the keys seen, a few dozen in a report


class Raw:
    """JSON text already encoded (UTF-8) at its place in the document, written as is: an array
    item, or several joined by `,` and a line break at the items' depth."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def number(value: float) -> str:
    """A JSON number; `null` for NaN and infinity, which strict JSON parsers refuse."""
    return float.__repr__(value) if math.isfinite(value) else "null"


def scalar(value: Any) -> str | None:
    """The JSON text of a scalar, or None for a container."""
    kind = type(value)
    if kind is str:
        return _ESCAPE(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return number(value)
    if isinstance(value, str):
        return _ESCAPE(value)  # its value, as json.dumps writes it (a StrEnum: the same)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, dict | list | tuple):
        return None
    raise TypeError(f"Object of type {kind.__name__} is not JSON serializable")


def text(value: Any, pad: str = "") -> str:
    """`value` as indented JSON whose inner lines start with `pad` (the caller's depth)."""
    out: list[str] = []
    _into(value, pad, out.append, _no_flush, lambda data: out.append(data.decode()))
    return "".join(out)


def dump(value: Any, stream: TextIO) -> None:
    """`value` and a newline to `stream`, as `json.dumps(value, indent=2)` would write it.

    A generator anywhere in `value` is written as an array, item by item as it yields, and the
    text is handed to `stream` in pieces: neither the items nor the text exist all at once.
    """
    sink = _bytes_to(stream)
    parts: list[str] = []

    def flush(now: bool) -> None:
        if parts and (now or len(parts) >= 2048):
            sink("".join(parts).encode())
            parts.clear()

    def raw(data: bytes) -> None:
        flush(True)
        sink(data)

    _into(value, "", parts.append, flush, raw)
    parts.append("\n")
    flush(True)


def _bytes_to(stream: TextIO) -> Callable[[bytes], object]:
    """Where UTF-8 text goes: the stream's byte buffer when the stream would write the same
    bytes (UTF-8, no line-end translation), else the stream itself, decoded."""
    buffer = getattr(stream, "buffer", None)
    encoding = getattr(stream, "encoding", None)
    if buffer is not None and encoding and os.linesep == "\n":
        try:
            utf8 = codecs.lookup(encoding).name == "utf-8"
        except LookupError:
            utf8 = False
        if utf8:
            stream.flush()  # what the text layer holds goes first
            return buffer.write
    return lambda data: stream.write(data.decode())


def _no_flush(now: bool) -> None:
    return None


def _into(
    value: Any, pad: str, out: Write, flush: Callable[[bool], None], raw: Callable[[bytes], None]
) -> None:
    kind = type(value)
    if kind is dict:
        if not value:
            out("{}")
            return
        inner = pad + "  "
        lead = "{\n" + inner
        for key, item in value.items():
            name = _KEYS.get(key) if type(key) is str else None
            if name is None:
                name = _ESCAPE(_key(key)) + ": "
                if type(key) is str and len(_KEYS) < 4096:
                    _KEYS[key] = name
            kind = type(item)
            if kind is str:
                out(lead + name + _ESCAPE(item))
            elif item is None:
                out(lead + name + "null")
            elif kind in _CONTAINERS:
                out(lead + name)
                _into(item, inner, out, flush, raw)
            else:
                out(lead + name + _scalar(item))
            lead = ",\n" + inner
        out("\n" + pad + "}")
    elif kind in _CONTAINERS or isinstance(value, list | tuple):
        inner = pad + "  "
        start = lead = "[\n" + inner
        streamed = kind is GeneratorType
        for item in value:
            kind = type(item)
            if kind is str:
                out(lead + _ESCAPE(item))
            elif kind is Raw:
                out(lead)
                raw(item.data)  # a batch of items, written at once
            elif kind in _CONTAINERS:
                out(lead)
                _into(item, inner, out, flush, raw)
            else:
                out(lead + _scalar(item))
            lead = ",\n" + inner
            if streamed:
                flush(False)
        out("[]" if lead is start else "\n" + pad + "]")
    elif isinstance(value, dict):
        _into(dict(value), pad, out, flush, raw)
    else:
        out(_scalar(value))


def _scalar(value: Any) -> str:
    simple = scalar(value)
    if simple is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return simple


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    simple = scalar(key)
    return simple if simple is not None and not isinstance(key, str) else str(key)
