"""Array items of a streamed JSON report, encoded in batches: the scalars of a hundred-odd items
in one call of the standard library's C encoder, poured into a text template per item shape.

Encoding value by value in Python took millions of calls for a 100k-resource report. The
templates are `jsonstream.text` of a sample item, so the text is the same (tests hold it).

Batches are UTF-8 bytes, put together as bytes: one `≥` in a finding's message would make a
whole batch a two-byte-per-character string (every later copy, and the encoding to the file,
twice the work); only the batch's values text, where such characters are, is encoded.
"""

from __future__ import annotations

import json.encoder
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from itertools import islice
from types import MappingProxyType
from typing import Any, NamedTuple, NoReturn, TypeVar

from gpu_audit.report.fastjson import stream as jsonstream

T = TypeVar("T")
Fast = Callable[[T, list[Any]], "Template | None"]

SEPARATOR = "\x00"  # escaped inside every JSON string, so in the encoded text it only separates
_MARK = "\x01"  # a sample's scalar; encoded as "\u0001", and never a key of ours
_MARKED = re.compile(r'"(?:\\u0001)+"')
_NON_FINITE = re.compile("(?<=[\x00\\[])(?:NaN|-?Infinity)(?=[\x00\\]])")  # a value, not text


def _refuse(value: object) -> NoReturn:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# (markers, default, encoder, indent, key separator, item separator, sort keys, skip keys, NaN)
_MAKE: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the accelerator
_BASIC = (None, _refuse, json.encoder.encode_basestring, None, ": ", SEPARATOR, False, False)
# Strict, the encoder refuses NaN and infinity (a ValueError): a batch with one is encoded again
# by the lenient one and its non-finite numbers made null; no batch is searched for them.
_ENCODER: Any = _MAKE(*_BASIC, False) if _MAKE is not None else None
_LENIENT: Any = _MAKE(*_BASIC, True) if _MAKE is not None else None
_CONTAINER = re.compile(f"{SEPARATOR}[\\[{{]")  # a list or mapping after the first value


def encode(values: list[Any]) -> list[bytes] | None:
    """The UTF-8 JSON text of each scalar (`null` for NaN and infinity, as `jsonstream` writes
    them); None when a value is a list or a mapping, which these templates do not hold."""
    if not values:
        return []
    if _ENCODER is None:  # a Python built without the _json accelerator
        texts = [jsonstream.scalar(value) for value in values]
        return None if None in texts else [text.encode() for text in texts]  # type: ignore[union-attr]
    try:
        text = "".join(_ENCODER(values, 0))  # `[` the values, each after a separator, `]`
    except ValueError:
        text = _NON_FINITE.sub("null", "".join(_LENIENT(values, 0)))
    if text[1] in "[{" or _CONTAINER.search(text):
        return None
    pieces = text.encode().split(SEPARATOR.encode())
    pieces[0] = pieces[0][1:]
    pieces[-1] = pieces[-1][:-1]
    return pieces


class Template(NamedTuple):
    """An item's UTF-8 text around its scalars: `head`, a value, each of `middle` and a value,
    `tail`."""

    head: bytes
    middle: list[bytes]
    tail: bytes


class Templates:
    """Item templates by shape, made from `jsonstream.text` of a sample item with every scalar
    (and every key of a mapping held under a key in `keyed`, such as `tags`) cut out: the text
    of any item of the same shape. The values at the paths in `kept` (`title`, or dotted into a
    section: `resource.kind`) stay in the text: items sharing them share the template."""

    def __init__(self, pad: str, keyed: Collection[str] = (), kept: Collection[str] = ()):
        self.pad, self.keyed, self.kept = pad, keyed, kept
        self.known: dict[Any, Template] = {}

    def get(
        self,
        shape: Any,
        sample: Callable[[], dict[str, Any]],
        values: list[Any],
        kept: Collection[str] = (),
    ) -> Template | None:
        """The template of `shape` for an item whose scalars are `values`, made from `sample()`
        (the item as plain data) when new; None when the two disagree, as where a list stands
        for a scalar: such an item takes the plain path. `kept` adds paths kept in the text for
        this shape (the shape must then hold what they are, as an empty section's nulls)."""
        try:
            known = self.known.get(shape)
        except TypeError:  # a list where a text belongs, in a value the shape holds
            return None
        if known is not None:
            return known
        leaves: list[Any] = []
        marked = _marked(sample(), self.keyed, leaves, kept=_tree([*self.kept, *kept]))
        if leaves != values:
            return None
        pieces = [piece.encode() for piece in _MARKED.split(jsonstream.text(marked, self.pad))]
        if len(pieces) != len(values) + 1:
            return None  # a kept text that reads as a mark (all U+0001): the plain path
        if len(self.known) >= 4096:  # shapes seldom vary much; if they do, memory stays bounded
            self.known.clear()
        known = self.known[shape] = Template(pieces[0], pieces[1:-1], pieces[-1])
        return known


_KEEP: Mapping[str, Any] = MappingProxyType({})  # a kept path's end: the value stays whole


def _tree(paths: Collection[str]) -> Mapping[str, Any]:
    """Dotted paths as nested mappings: `["a", "b.c"]` is `{"a": _KEEP, "b": {"c": _KEEP}}`."""
    tree: dict[str, Any] = {}
    for path in paths:
        *parents, last = path.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
            if node is _KEEP:
                break  # a section kept whole holds what is below it
        else:
            node[last] = _KEEP
    return tree


def _marked(
    value: Any,
    keyed: Collection[str],
    leaves: list[Any],
    data_keys: bool = False,
    kept: Mapping[str, Any] = _KEEP,
) -> object:
    """`value` with each scalar (and data key) a mark, appended to `leaves` in text order; the
    values at the paths of `kept` (a `_tree`) stay as they are."""
    if isinstance(value, dict):
        out = {}
        for i, (key, item) in enumerate(value.items()):
            if data_keys:
                leaves.append(key)
            below = kept.get(key) if not data_keys else None
            if below is _KEEP:
                out[key] = item
                continue
            out[_MARK * (i + 1) if data_keys else key] = _marked(
                item, keyed, leaves, key in keyed, below or _KEEP
            )
        return out
    if isinstance(value, list | tuple):
        return [_marked(item, keyed, leaves) for item in value]
    leaves.append(value)
    return _MARK


def items(
    things: Iterable[T], pad: str, fast: Fast[T], slow: Callable[[T], str], size: int = 128
) -> Iterator[jsonstream.Raw]:
    """The items of an array whose items start at `pad`, `size` per `Raw` text (128: a batch's
    texts, ~150 KB, stay in the CPU's cache through encoding, splitting and joining; 512 took 6%
    more time at 100k, 32 as much).

    `fast(thing, values)` appends the thing's scalars to `values` in text order and returns its
    template, or returns None (appending nothing) for a thing it cannot template; `slow(thing)`
    is the thing's text, used then and for a batch holding a value that is not a scalar.
    """
    joiner = (",\n" + pad).encode()
    things = iter(things)
    while batch := list(islice(things, size)):
        values: list[Any] = []
        shapes = [fast(thing, values) for thing in batch]
        texts = encode(values)
        if texts is None:
            yield jsonstream.Raw(joiner.join(slow(thing).encode() for thing in batch))
            continue
        glue: list[bytes] = []  # the text between values: a tail, the joiner and the next head
        tail = None
        for thing, shape in zip(batch, shapes, strict=True):
            if shape is None:
                text = slow(thing).encode()
                tail = text if tail is None else tail + joiner + text
                continue
            glue.append(shape.head if tail is None else tail + joiner + shape.head)
            glue += shape.middle
            tail = shape.tail
        glue.append(tail or b"")
        joined = [b""] * (len(glue) + len(texts))
        joined[0::2] = glue  # a ValueError if the counts disagree, never a garbled report
        joined[1::2] = texts
        yield jsonstream.Raw(b"".join(joined))
