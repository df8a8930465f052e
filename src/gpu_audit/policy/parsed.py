"""The parsed tree of a policy file, cached by content: a warm hook skips parsing its YAML.

Parsing the runbook pack's YAML with lines is ~4 ms of every `check`; reading it back as JSON
(the C decoder; tags keep lines, `Templated` values and dates) is a fraction of that. The
entry's name is a BLAKE2b digest of the file's text and of the source of the loader that
parsed it (`core/yamlsrc.py`), so an edited policy or loader is parsed again, never served
stale; the entry also holds that digest, and a tree with shared nodes (YAML aliases) or a
value of another type is never cached. Validation has its own cache (`loader._known_valid`):
a tree read here is checked exactly as a parsed one. The folder is trusted as those markers
are: whoever can write the user's cache folder can change what a policy is read as.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from datetime import date, datetime
from typing import Any

from gpu_audit.core import yamlsrc
from gpu_audit.core.yamlsrc import LineList, LineMap, Templated

MAX_NODES = 50_000  # a hand-written policy has a few thousand; larger ones are parsed each time
_FORMAT = 1


def tree_key(validation_key: str) -> str | None:
    """The cache entry's name: the policy's digest with the loader's source; None if the
    loader's source cannot be read (then nothing is cached)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # a Python built without it
        from hashlib import blake2b
    try:
        with open(yamlsrc.__file__, "rb") as handle:
            source = handle.read()
    except OSError:
        return None
    digest = blake2b(source, digest_size=20)
    digest.update(f"\x00{_FORMAT}\x00{validation_key}".encode())
    return "tree-" + digest.hexdigest()


def read_tree(folder: str, key: str) -> LineMap | None:
    """The tree cached under `key`, or None (absent, unreadable, or not this key's)."""
    try:
        with open(os.path.join(folder, key), encoding="utf-8") as handle:
            stored, encoded = json.load(handle)
        if stored != key:
            return None
        tree = _decode(encoded)
    except (OSError, EOFError, ValueError, TypeError, IndexError, KeyError):
        return None
    return tree if isinstance(tree, LineMap) else None


def write_tree(folder: str, key: str, tree: LineMap) -> None:
    """Cache the tree (atomically); a tree it cannot hold exactly, or a read-only home, is not."""
    try:
        encoded = _encode(tree, set(), [MAX_NODES])
    except _Uncacheable:
        return
    path = os.path.join(folder, key)
    partial = f"{path}.{os.getpid()}.part"
    try:
        os.makedirs(folder, exist_ok=True)
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump([key, encoded], handle, separators=(",", ":"))
        os.replace(partial, path)
    except OSError:
        with suppress(OSError):
            os.unlink(partial)


class _Uncacheable(Exception):
    """A shared node, a value of another type, or too many nodes."""


_SCALARS = (str, int, float, bool, type(None))


def _encode(node: Any, seen: set[int], budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _Uncacheable
    kind = type(node)
    if kind in _SCALARS:
        return node
    if kind is LineMap or kind is LineList:
        if id(node) in seen:  # an alias: the parsed tree shares the node, a copy would not
            raise _Uncacheable
        seen.add(id(node))
        if kind is LineList:
            items = [_encode(item, seen, budget) for item in node]
            return ["L", node.line, items, node.item_lines]
        keys = [_encode(key, seen, budget) for key in node]
        values = [_encode(value, seen, budget) for value in node.values()]
        lines = [[_encode(k, seen, budget), v] for k, v in node.key_lines.items()]
        return ["M", node.line, keys, values, lines]
    if kind is Templated:
        return ["T", node.text]
    if kind is datetime:
        return ["DT", node.isoformat()]
    if kind is date:
        return ["D", node.isoformat()]
    raise _Uncacheable


def _decode(node: Any) -> Any:
    if type(node) is not list:  # a scalar; every other node is a tagged list
        return node
    tag = node[0]
    if tag == "M":
        mapping = LineMap(node[1])
        for key, value in zip(node[2], node[3], strict=True):
            mapping[_decode(key)] = _decode(value)
        mapping.key_lines = {_decode(key): line for key, line in node[4]}
        return mapping
    if tag == "L":
        items = LineList(node[1])
        items.extend(_decode(item) for item in node[2])
        items.item_lines = list(node[3])
        return items
    if tag == "T":
        return Templated(node[1])
    if tag == "DT":
        return datetime.fromisoformat(node[1])
    if tag == "D":
        return date.fromisoformat(node[1])
    raise ValueError(f"unknown node {tag!r}")
