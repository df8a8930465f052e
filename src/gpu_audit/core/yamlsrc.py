"""YAML and JSON loading with line numbers, bounded size and alias expansion; the one place for it.

Mappings load as `LineMap` (a dict that knows the line of each key) and sequences as `LineList`.
Values a template engine would fill in (`${VAR}`, `{{ x }}`, `<placeholder>`) and CloudFormation
intrinsics (`!Ref`, `!Sub`, …) load as `Templated`, which parsers treat as missing.
A value YAML cannot build (`2026-02-30`, `!!int abc`, a 4,301-digit integer) is a located error;
`!!binary` loads as its base64 text, `!!set` as a mapping, `!!omap`/`!!pairs` as a sequence of
one-key mappings (as written). Nesting deeper than `yamlguard.MAX_DEPTH` is refused before parsing.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any, NoReturn

import yaml

from gpu_audit.core import yamlguard
from gpu_audit.core.frozen import record
from gpu_audit.errors import InputError

MAX_BYTES = 5 * 1024 * 1024  # a hand-written file: a policy, a job config, settings
# Inventories and saved reports (a baseline): machine-written, as large as the fleet
MAX_DATA_BYTES = 512 * 1024 * 1024
MAX_EXPANDED_NODES = 1_000_000

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml if present


class LineMap(dict[Any, Any]):
    """A mapping that remembers its own line and the line of each key (1-based)."""

    __slots__ = ("key_lines", "line")

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[Any, int] = {}

    def line_of(self, key: Any) -> int:
        """The line where `key` is written in this mapping, else the mapping's own line."""
        return self.key_lines.get(key, self.line)


class LineList(list[Any]):
    """A sequence that remembers its line and the line of each item."""

    __slots__ = ("item_lines", "line")

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.item_lines: list[int] = []


@record
class Templated:
    """A value left for a template engine or CloudFormation to fill in: treat it as missing."""

    text: str

    def __str__(self) -> str:
        return self.text


@record
class Document:
    """One YAML or JSON document of a file, with its first line."""

    data: Any
    line: int  # first line of the document
    index: int  # 0-based position in a multi-document stream


_PLACEHOLDER = re.compile(r"\$\{[^}]*\}|\{\{.*?\}\}|^<[^<>]+>$|\$\([A-Z_][A-Z0-9_]*\)")


def is_templated(value: Any) -> bool:
    """True for a value a template fills in later (`${ }`, `{{ }}`, `<placeholder>`, `$(VAR)`): it
    cannot be judged as written."""
    if isinstance(value, Templated):
        return True
    return isinstance(value, str) and _PLACEHOLDER.search(value) is not None


_TRUE = frozenset({"true", "yes", "on", "1", "y"})
_FALSE = frozenset({"false", "no", "off", "0", "n"})


def as_bool(value: Any) -> bool | None:
    """A flag as a job file or a command states it: `true`, `"Yes"`, `on`, 1 → True; `false`,
    `no`, 0 → False; `auto`, templated or other text → None (not stated)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return bool(value)
    if isinstance(value, str) and not is_templated(value):
        folded = value.strip().lower()
        return True if folded in _TRUE else False if folded in _FALSE else None
    return None


class _LineLoader(_Loader):  # type: ignore[misc,valid-type]
    pass


def _map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> object:
    yamlguard.check_kind("map", node)
    result = LineMap(node.start_mark.line + 1)
    yield result
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            key = str(key)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1


def _set(loader: yaml.SafeLoader, node: yaml.MappingNode) -> object:
    yamlguard.check_kind("set", node)
    return _map(loader, node)


def _seq(loader: yaml.SafeLoader, node: yaml.SequenceNode) -> object:
    yamlguard.check_kind("seq" if node.tag.endswith(":seq") else node.tag.rsplit(":", 1)[-1], node)
    result = LineList(node.start_mark.line + 1)
    yield result
    for item in node.value:
        result.append(loader.construct_object(item, deep=True))
        result.item_lines.append(item.start_mark.line + 1)


def _tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Templated:
    if isinstance(node, yaml.ScalarNode):
        return Templated(f"!{suffix} {node.value}")
    return Templated(f"!{suffix} …")


def _binary(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))  # no value we read is binary: keep the text


_OWN: dict[str, Any] = {
    "map": _map,
    "set": _set,
    "seq": _seq,
    "omap": _seq,
    "pairs": _seq,
    "binary": _binary,
}
_CONSTRUCTORS: dict[str | None, Any] = dict(_Loader.yaml_constructors)
_CONSTRUCTORS.update({f"tag:yaml.org,2002:{k}": v for k, v in _OWN.items()})
_CANNOT_FAIL = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:null")  # but on a collection: located
for _tag, _construct in _CONSTRUCTORS.items():
    if _tag is not None:
        guarded = _construct if _tag in _CANNOT_FAIL else yamlguard.guarded(_tag, _construct)
        _LineLoader.add_constructor(_tag, guarded)
_LineLoader.add_multi_constructor("!", _tagged)


class _LenientLoader(_LineLoader):
    """A plain scalar that looks like a date but is none (`2027-13-45`) stays text: a policy or
    settings file reports it among its other errors, located by its own checks, not alone."""


def _date_or_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> object:
    try:
        return loader.construct_yaml_timestamp(node)
    except Exception:  # any failure of the date parse: the text, judged by the caller
        return str(node.value)


_LenientLoader.add_constructor("tag:yaml.org,2002:timestamp", _date_or_text)


_STR, _NULL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null"
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_FLATTENED = ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value")  # `<<` and `=` keys
# The node classes themselves (PyYAML has no subclasses of them; one would take the loader's path)
_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode


def _build(loader: Any, node: yaml.Node) -> Any:  # Any: YAML/JSON of any shape
    """What `construct_document` builds for a document without aliases, in about a third of
    the time: plain mappings, sequences, strings and nulls are built here, anything else (an
    int, a date, `!!binary`, a `!Ref`, a merge key) by the loader's own guarded constructors.
    A test holds the two to the same values and lines over every fixture and the corpus."""
    tag, kind = node.tag, node.__class__
    if kind is _SCALAR:
        if tag == _STR:
            return node.value
        if tag == _NULL:
            return None
    elif kind is _MAPPING and tag == _MAP:
        for key_node, _ in node.value:
            if key_node.tag in _FLATTENED:  # `<<` or `=`: the loader flattens the mapping
                return loader.construct_object(node, deep=True)
        mapping = LineMap(node.start_mark.line + 1)
        lines = mapping.key_lines
        for key_node, value_node in node.value:
            key = _build(loader, key_node)
            if key.__class__ is not str:
                try:
                    hash(key)
                except TypeError:
                    key = str(key)
            mapping[key] = _build(loader, value_node)
            lines[key] = key_node.start_mark.line + 1
        return mapping
    elif kind is _SEQUENCE and tag == _SEQ:
        sequence = LineList(node.start_mark.line + 1)
        items, item_lines = sequence.append, sequence.item_lines.append
        for item in node.value:
            items(_build(loader, item))
            item_lines(item.start_mark.line + 1)
        return sequence
    return loader.construct_object(node, deep=True)


def read_text(path: str, raw: bytes | None = None, limit: int = MAX_BYTES) -> str:
    """Read a regular file as UTF-8 text, refusing what is too large, binary or undecodable.

    A FIFO, device, socket or directory is refused without blocking: it is opened non-blocking
    and checked before anything is read.
    """
    try:
        if raw is None:
            raw = _read_regular(path, limit)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(raw) > limit:
        raise InputError(f"{path}: file is larger than {limit // (1024 * 1024)} MB; refused")
    if b"\x00" in raw[:8192]:
        raise InputError(f"{path}: binary content (NUL bytes); not a YAML or JSON file")
    # A byte-order mark is dropped here: the utf-8-sig codec is one more import a commit pays.
    bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = exc.start + bom  # counted in the file, as written
        raise InputError(f"{path}: not UTF-8 text (byte {byte}: {exc.reason})") from exc


_NOT_REGULAR = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def _read_regular(path: str, limit: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError:
        os.close(descriptor)
        raise
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        what = _NOT_REGULAR.get(stat.S_IFMT(mode), "not a regular file")
        raise InputError(f"{path}: {what}, not a regular file; refused")
    with open(descriptor, "rb", closefd=True) as handle:
        return handle.read(limit + 1)


def load_documents(
    path: str, text: str, depth_known: bool = False, lenient_dates: bool = False
) -> list[Document]:
    """Every document of a YAML stream (or one JSON document), with line numbers.
    `depth_known`: the text is one this version ships (a policy pack), its nesting known to be
    shallow: the depth scan before parsing is skipped (~0.8 ms for the runbook pack).
    `lenient_dates`: a date that is none stays text, for the caller to report with the rest."""
    if _is_json(path, text):
        # JSON is YAML save for tab indentation, which JSON allows only between tokens.
        text = text.replace("\t", " ")
    try:
        if not depth_known:
            yamlguard.check_yaml_depth(path, text, _Loader)
        loader = (_LenientLoader if lenient_dates else _LineLoader)(text)
        plain = not may_anchor(text)  # no anchor, so no alias: no node is shared or recursive
        try:
            documents: list[Document] = []
            while loader.check_node():
                node = loader.get_node()
                line = node.start_mark.line + 1 if node is not None else 1
                if node is None:
                    data = None
                elif plain:
                    data = _build(loader, node)
                else:
                    data = loader.construct_document(node)
                documents.append(Document(data, line, len(documents)))
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        raise InputError(yamlguard.syntax_message(path, exc)) from exc
    except yaml.reader.ReaderError as exc:
        raise InputError(yamlguard.reader_message(path, text, exc)) from exc
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: invalid YAML: {yamlguard.one_line(str(exc))}") from exc
    except RecursionError as exc:
        raise InputError(f"{path}: {yamlguard.too_deep()}") from exc
    if not plain:
        for document in documents:
            _check_expansion(path, document)
    return documents


# An anchor (`&name`) starts a token, so it never follows a letter or digit: after one, `&` is
# inside a plain scalar ("W&B", which the runbook's texts name) or a tag (`!a&b`), never an anchor.
_WORD = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def may_anchor(text: str) -> bool:
    """Whether the text may hold a YAML anchor (hence aliases): any `&` not after an ASCII letter
    or digit. A bare `"&" in text` sent the runbook pack (`W&B` in its texts) down the plain
    construction with the alias-bomb walk, 8.0 against 3.7 ms a commit."""
    at = text.find("&")
    while at != -1:
        if at == 0 or text[at - 1] not in _WORD:
            return True
        at = text.find("&", at + 1)
    return False


def _is_json(path: str, text: str) -> bool:
    """A `.json` file must be valid JSON; other text that parses as JSON is read as JSON too."""
    strict = path.lower().endswith(".json")
    if not strict and not text.lstrip().startswith(("{", "[")):
        return False
    try:
        load_json(path, text)
    except InputError:
        if not strict:
            return False  # a YAML flow mapping, say: the YAML parser judges it
        raise
    return True


def load_json(path: str, text: str) -> Any:  # Any: YAML/JSON of any shape
    """Parse JSON with the json module; every failure is one located InputError."""
    import json  # ~1.4 ms, paid by the runs that read JSON

    if len(text) <= _SCANNED_JSON:
        yamlguard.check_json_depth(path, text)
    yamlguard.lone_surrogate(path, text)
    try:
        return json.loads(text, parse_constant=_not_json)
    except _NotJson as exc:
        raise yamlguard.constant_error(path, text, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from exc
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        located = yamlguard.long_number(path, text)
        raise located or InputError(f"{path}: invalid JSON: {exc}") from exc
    except RecursionError as exc:
        yamlguard.check_json_depth(path, text)  # raises, located, for anything this deep
        raise InputError(f"{path}: {yamlguard.too_deep()}") from exc


# Job files, policies and settings are scanned for depth before parsing (their parsers walk
# documents). A larger file is an inventory, whose reader takes typed scalars and never walks a
# nested value: the C decoder guards its own recursion (a RecursionError, never a crash), so the
# depth is scanned for, to name the line, only when it gives up, and 50 MB is not tokenized twice.
_SCANNED_JSON = 8 * 1024 * 1024


class _NotJson(ValueError):
    pass


def _not_json(name: str) -> NoReturn:
    raise _NotJson(name)  # NaN, Infinity: Python's json accepts them; JSON (RFC 8259) does not


def _check_expansion(path: str, document: Document) -> None:
    """Refuse a document whose aliases expand past any real config's size (an alias bomb)."""
    sizes: dict[int, int] = {}

    def size(value: Any) -> int:
        if not isinstance(value, dict | list):
            return 1
        known = sizes.get(id(value))
        if known is not None:
            return known
        sizes[id(value)] = 1  # a cycle counts once
        children = value.values() if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_EXPANDED_NODES:
                break
        sizes[id(value)] = total
        return total

    if size(document.data) > MAX_EXPANDED_NODES:
        raise InputError(
            f"{path}:{document.line}: YAML aliases expand to more than "
            f"{MAX_EXPANDED_NODES:,} nodes (an alias bomb?); refused"
        )
