"""Guards for the YAML and JSON readers: nesting depth, value construction, one-line messages.

Every failure becomes an `InputError` that names `file:line:column`; nothing a file can contain
reaches the user as a traceback or a crash.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from types import GeneratorType
from typing import Any

import yaml

from gpu_audit.core.lazyre import lazy
from gpu_audit.errors import GpuAuditError, InputError
from gpu_audit.errors import one_line as escaped

MAX_DEPTH = (
    100  # real configs nest ~20 deep; libyaml's composer recurses in C and crashes at ~20,000
)

_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
# Flow nesting needs a bracket per level; block nesting a deeper column (indentation or `- `/`? `)
# for every level but a sequence under a mapping key: at most 2 × (prefix + 1) levels.
_FEW_BRACKETS = MAX_DEPTH // 4
_DEEP_PREFIX = re.compile(r"^(?:[ ?-]|[&!]\S*[ \t])" + f"{{{MAX_DEPTH // 3 - 1},}}", re.M)
_JSON_TOKEN = lazy(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}]')


class ValueProblem(yaml.constructor.ConstructorError):
    """A scalar or node YAML parsed but cannot become the value its tag names."""


def may_nest_deeply(text: str) -> bool:
    """False when the text cannot nest past MAX_DEPTH (a cheap test that spares the event scan)."""
    brackets = text.count("[") + text.count("{")
    return brackets > _FEW_BRACKETS or _DEEP_PREFIX.search(text) is not None


def check_yaml_depth(path: str, text: str, loader_class: type[yaml.SafeLoader]) -> None:
    """Refuse nesting deeper than MAX_DEPTH from the event stream, before anything recurses."""
    if not may_nest_deeply(text):
        return
    loader = loader_class(text)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise InputError(f"{where(path, event.start_mark)}: {too_deep()}")
            elif isinstance(event, _CLOSE):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        # libyaml 0.2.6 (PyYAML 6.0.4 wheels) refuses 1,000 levels itself, scanning ahead of the
        # events: the same refusal, said in our words at the mark where it gave up.
        if "nesting depth" in (exc.problem or ""):
            raise InputError(f"{where(path, exc.problem_mark)}: {too_deep()}") from exc
        return  # a syntax error: the real load reports it, located
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()


def check_json_depth(path: str, text: str) -> None:
    """Refuse JSON nested deeper than MAX_DEPTH, naming the line where it goes too deep."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        lexeme = match.group()
        if lexeme in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, match.start()) + 1
                column = match.start() - text.rfind("\n", 0, match.start())
                raise InputError(f"{path}:{line}:{column}: {too_deep()}")
        elif lexeme in "]}":
            depth -= 1


def too_deep() -> str:
    """The message for a document nested deeper than MAX_DEPTH."""
    return f"nested more than {MAX_DEPTH} levels deep; refused"


def where(path: str, mark: Any) -> str:
    """`path:line:column` from a YAML mark (1-based), the path alone without one."""
    return f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else path


_SURROGATE = lazy(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<![89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def lone_surrogate(path: str, text: str) -> None:
    """Refuse a JSON `\\ud800` escape without its pair: it is no character and cannot be printed."""
    if "\\u" not in text:
        return
    for match in _SURROGATE.finditer(text):
        start = match.start()
        backslashes = start - len(text[:start].rstrip("\\"))
        if backslashes % 2:
            continue  # `\\ud800`: an escaped backslash, then text
        line = text.count("\n", 0, start) + 1
        column = start - text.rfind("\n", 0, start)
        raise InputError(
            f"{path}:{line}:{column}: invalid JSON: {match.group()} is half of a UTF-16 "
            "surrogate pair, not a character"
        )


def constant_error(path: str, text: str, name: str) -> InputError:
    """`NaN`, `Infinity` or `-Infinity` in a JSON file, located where first used (not in text)."""
    for match in re.finditer(r'"(?:[^"\\\n]|\\.)*"|' + re.escape(name), text):
        if match.group() == name:
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - text.rfind("\n", 0, match.start())
            return InputError(f"{path}:{line}:{column}: invalid JSON: {name} is not a JSON number")
    return InputError(f"{path}: invalid JSON: {name} is not a JSON number")


def long_number(path: str, text: str) -> InputError | None:
    """The error for a number too long for Python to convert (4,300 digits), located; else None."""
    limit = sys.get_int_max_str_digits()
    match = re.search(f"[0-9_]{{{limit + 1},}}", text) if limit else None
    if match is None:
        return None
    line = text.count("\n", 0, match.start()) + 1
    column = match.start() - text.rfind("\n", 0, match.start())
    digits = len(match.group())
    return InputError(
        f"{path}:{line}:{column}: an integer of {digits:,} digits is too long "
        f"(the limit is {limit:,} digits); refused"
    )


def syntax_message(path: str, exc: yaml.MarkedYAMLError) -> str:
    """One line: where a broken construct (an unclosed bracket, say) starts and where it broke."""
    problem, mark = exc.problem or exc.context or "invalid YAML", exc.problem_mark
    context, start = exc.context, exc.context_mark
    if isinstance(exc, ValueProblem):
        return f"{where(path, mark)}: {problem}"
    if not context or start is None or mark is None or start.line == mark.line:
        return f"{where(path, mark or start)}: invalid YAML: {problem}"
    construct = re.sub(r"^while \w+ ", "", context)
    unclosed = any(word in construct for word in ("flow", "quoted", "block scalar"))
    if unclosed or "end of stream" in problem:
        return (
            f"{where(path, start)}: invalid YAML: {construct} starts here and is not closed: "
            f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
        )
    return (
        f"{where(path, mark)}: invalid YAML: {problem} (in {construct} from line {start.line + 1})"
    )


def reader_message(path: str, text: str, exc: yaml.reader.ReaderError) -> str:
    """A character YAML does not allow, located by the character itself (libyaml counts bytes)."""
    offset = text.find(chr(exc.character)) if isinstance(exc.character, int) else -1
    if offset < 0:
        return f"{path}: invalid YAML: {exc.reason}"
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return (
        f"{path}:{line}:{column}: invalid YAML: unacceptable character "
        f"#x{exc.character:04x}: {exc.reason}"
    )


def one_line(text: str) -> str:
    """`text` on one line, every run of whitespace (newlines too) one space."""
    return " ".join(str(text).split())


def printable(value: object, limit: int = 80) -> str:
    """A value from a file as a message shows it: control, bidi and line-break characters escaped
    (`\\x1b`, `\\u202e`, as `errors.one_line` escapes them) so it cannot add a line or restyle a
    terminal; long text clipped."""
    text = str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return escaped(text)


Constructor = Callable[[Any, yaml.Node], Any]
# An integer Python could not print: more decimal digits than its conversion limit allows.
_INT_BITS = int((sys.get_int_max_str_digits() or 4300) * 3.3219)


def guarded(tag: str, construct: Constructor) -> Constructor:
    """The constructor for `tag`, raising a located ValueProblem instead of any other exception."""

    def run(loader: Any, node: yaml.Node) -> Any:  # Any: YAML of any shape
        try:
            value = construct(loader, node)
            if isinstance(value, int) and value.bit_length() > _INT_BITS:
                raise ValueError("too many digits")  # 0x… and 0o… escape Python's limit
        except (yaml.YAMLError, GpuAuditError, RecursionError):
            raise
        except Exception as exc:  # every construction failure becomes located
            raise _problem(tag, node, exc) from None
        if isinstance(value, GeneratorType):
            return _guarded_items(tag, node, value)
        return value

    return run


def _guarded_items(tag: str, node: yaml.Node, items: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from items
    except (yaml.YAMLError, GpuAuditError, RecursionError):
        raise
    except Exception as exc:
        raise _problem(tag, node, exc) from None


_KINDS = {
    "map": (yaml.MappingNode, "a mapping"),
    "set": (yaml.MappingNode, "a mapping"),
    "seq": (yaml.SequenceNode, "a sequence"),
    "omap": (yaml.SequenceNode, "a sequence of one-key mappings"),
    "pairs": (yaml.SequenceNode, "a sequence of one-key mappings"),
}


def check_kind(tag: str, node: yaml.Node) -> None:
    """`!!map [1]` and `!!seq {a: 1}`: a collection tag on the wrong kind of node."""
    kind, noun = _KINDS[tag]
    if not isinstance(node, kind):
        found = type(node).__name__.removesuffix("Node").lower()
        raise ValueProblem(None, None, f"!!{tag} needs {noun}, found a {found}", node.start_mark)


def _problem(tag: str, node: yaml.Node, exc: Exception) -> ValueProblem:
    value = printable(node.value, 60) if isinstance(node, yaml.ScalarNode) else "…"
    short = tag.rsplit(":", 1)[-1]
    if short == "timestamp":
        why = str(exc) if isinstance(exc, ValueError) else "expected YYYY-MM-DD[Thh:mm:ss]"
        message = f"'{value}' is not a valid date or time ({one_line(why)}); quote it for text"
    elif short == "int" and "digits" in str(exc):
        size = len(node.value)
        unit = "digits" if node.value.lstrip("+-").isdigit() else "characters"
        message = (
            f"an integer of {size:,} {unit} is too long "
            f"(the limit is {sys.get_int_max_str_digits():,} digits); refused"
        )
    elif short == "bool":
        message = f"'{value}' is not a YAML boolean (true/false, yes/no, on/off)"
    else:
        message = (
            f"'{value}' cannot be read as !!{short} ({type(exc).__name__}: {one_line(str(exc))})"
        )
    return ValueProblem(None, None, message, node.start_mark)
