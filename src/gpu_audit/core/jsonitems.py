"""A large JSON document read key by key, one array's items handed over one at a time as parsed.

`json.loads` of a million-resource inventory holds the text and every resource's dicts at once
(~2 GB at 1M resources; the dicts take ~5× the text). Here the items of the streamed array are
given to a callback as each is parsed, so only the text and what the callback keeps stay.
Any problem in the document (bad JSON, NaN, a huge integer, a repeated streamed key) raises
`Fallback`: the caller reads the file the ordinary way, which says the problem at its place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any, NoReturn

_WS = re.compile(r"[ \t\n\r]*")  # JSON's four white-space characters, as the decoder has them


class Fallback(Exception):
    """The document is not one this reader handles (or not valid JSON): read it whole."""


class Streamed(int):
    """Where a streamed array was: the number of its items that went to `take`."""


def _refuse(name: str) -> NoReturn:
    raise Fallback(name)  # NaN, Infinity: the ordinary reader names them at their place


_DECODER = json.JSONDecoder(parse_constant=_refuse)


def load_streamed(
    text: str, key: str, take: Callable[[Any], None], skip: Collection[str] = ()
) -> Any:  # Any: JSON of any shape
    """The document, with each item of the array under top-level `key` given to `take` in
    order instead of kept (the key maps to the number of items); the items of arrays under
    `skip` are parsed and dropped (the key maps to `[]`). A top-level array is streamed whole
    (the count is returned). Raises Fallback for anything else than valid JSON."""
    try:
        return _document(text, key, take, skip)
    except (ValueError, RecursionError, IndexError) as exc:  # JSONDecodeError is a ValueError
        raise Fallback(str(exc)) from None


def _document(text: str, key: str, take: Callable[[Any], None], skip: Collection[str]) -> object:
    at = _skip(text, 0)
    if text[at] == "[":
        count, at = _items(text, at, take)
        _end(text, at)
        return Streamed(count)
    if text[at] != "{":
        value, at = _DECODER.raw_decode(text, at)
        _end(text, at)
        return value
    document: dict[str, Any] = {}
    at = _skip(text, at + 1)
    if text[at] == "}":
        _end(text, at + 1)
        return document
    while True:
        name, at = _DECODER.raw_decode(text, at)
        if not isinstance(name, str):
            raise Fallback("a key is not a string")
        at = _skip(text, at)
        if text[at] != ":":
            raise Fallback("expected ':'")
        at = _skip(text, at + 1)
        if name == key and text[at] == "[":
            if name in document:
                raise Fallback(f"'{name}' twice")  # json.loads keeps the last: read it whole
            count, at = _items(text, at, take)
            document[name] = Streamed(count)
        elif name in skip and text[at] == "[":
            _, at = _items(text, at, lambda item: None)
            document[name] = []
        else:
            if name == key and name in document:
                raise Fallback(f"'{name}' twice")
            document[name], at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at] == "}":
            _end(text, at + 1)
            return document
        if text[at] != ",":
            raise Fallback("expected ',' or '}'")
        at = _skip(text, at + 1)


def _items(text: str, at: int, take: Callable[[Any], None]) -> tuple[int, int]:
    """Each item of the array starting at `at` to `take`; (the count, the index after `]`)."""
    at = _skip(text, at + 1)
    if text[at] == "]":
        return 0, at + 1
    count = 0
    while True:
        item, at = _DECODER.raw_decode(text, at)
        take(item)
        del item  # the caller keeps what it needs: the item is dropped here
        count += 1
        at = _skip(text, at)
        if text[at] == "]":
            return count, at + 1
        if text[at] != ",":
            raise Fallback("expected ',' or ']'")
        at = _skip(text, at + 1)


def _skip(text: str, at: int) -> int:
    """The index after the white space at `at`."""
    space = _WS.match(text, at)
    return space.end() if space else at


def _end(text: str, at: int) -> None:
    if _skip(text, at) != len(text):
        raise Fallback("extra data")
