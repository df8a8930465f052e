"""Resource ⇄ canonical mapping: the saved-inventory format and the JSON report's `resources`.

A mapping uses the data model's field names, nested as in the policy language (`gpu.model` is
`{"gpu": {"model": ...}}`). Missing fields are left out (or null); nothing is invented.
"""

from __future__ import annotations

import reprlib
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from difflib import get_close_matches
from typing import Any

from gpu_audit.core.fields import FIELDS, SECTIONS, FieldSpec
from gpu_audit.core.resource import Kind, Resource, SourceRef
from gpu_audit.core.yamlguard import printable

KEYS = frozenset([*(spec.name.partition(".")[0] for spec in FIELDS.values()), "source", "note"])
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlevel = 2


class FieldProblem(ValueError):
    """A value of the wrong type or an unknown key; `key` names it (dotted)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def _enum_value(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
    return None if value is None else value.value


def _section_writer(keys: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    def write(section: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in keys:
            item = getattr(section, key)
            if isinstance(item, datetime):  # a section's time (`reservation.ends_at`)
                out[key] = _iso(item)
            else:
                out[key] = list(item) if isinstance(item, tuple) else item
        return out

    return write


def _writers() -> list[tuple[str, Any]]:
    """(top-level name, converter or None) in field order: the mapping's key order."""
    plan: list[tuple[str, Any]] = []
    for spec in FIELDS.values():
        top = spec.name.partition(".")[0]
        if spec.group is not None:
            if not plan or plan[-1][0] != top:
                keys = tuple(f.key for f in FIELDS.values() if f.group == top)
                plan.append((top, _section_writer(keys)))
        elif spec.type == "enum":
            plan.append((top, _enum_value))
        elif spec.type == "datetime":
            plan.append((top, _iso))
        elif spec.type == "tag":
            plan.append((top, dict))
        else:
            plan.append((top, None))
    return plan


_WRITERS = _writers()


def to_mapping(resource: Resource) -> dict[str, Any]:
    """The canonical mapping of a resource; missing values are null."""
    out: dict[str, Any] = {}
    for name, convert in _WRITERS:
        value = getattr(resource, name)
        out[name] = value if convert is None else convert(value)
    source = resource.source
    if source.path is not None:
        out["source"] = {"path": source.path, "line": source.line}
    if source.note:
        out["note"] = source.note  # what the collector or parser could not read, and why
    return out


def from_mapping(raw: Mapping[str, Any]) -> Resource:
    """A Resource from its canonical mapping; raises the first FieldProblem, naming the bad key."""
    resource, problems = read_mapping(raw)
    if resource is None:
        raise problems[0]
    return resource


def read_mapping(
    raw: Mapping[str, Any], hints: bool = True
) -> tuple[Resource | None, list[FieldProblem]]:
    """A Resource from its canonical mapping, or None and every problem found (not just one).

    One pass over the keys the mapping has, each converted by its field's converter (chosen
    once, at import): a 100k-resource inventory is read at about the speed of the JSON parser.
    `hints=False` leaves out the did-you-mean (a file past its shown errors only counts them).
    """
    hint = suggest if hints else _no_hint
    problems: list[FieldProblem] = []
    if not _is_name(raw.get("id")):
        problems.append(FieldProblem("id", "every resource needs an id"))
    provider = raw.get("provider")
    if not isinstance(provider, str) or not provider:
        problems.append(FieldProblem("provider", "every resource needs a provider (aws, gcp, …)"))
    values: dict[str, Any] = {}
    for key, value in raw.items():
        convert = _TOP.get(key)
        if convert is not None:
            if value is not None:
                try:
                    values[key] = convert(value)
                except FieldProblem as problem:
                    problems.append(problem)
        elif key in _INNER:
            if value is not None:
                section = _section(key, value, problems, hint)
                if section is not None:
                    values[key] = section
        elif key not in ("source", "note"):
            name = printable(key)
            problems.append(FieldProblem(name, f"unknown field '{name}'{hint(key, KEYS)}"))
    source = _source(raw, problems, hint)
    if source is not None:
        values["source"] = source
    if problems:  # unknown keys first (a misspelt key explains the value problems after it)
        problems.sort(key=lambda problem: not problem.args[0].startswith("unknown field"))
        return None, problems
    values.setdefault("kind", Kind.INSTANCE)
    return Resource(**values), []


def _section(
    name: str, raw: Any, problems: list[FieldProblem], hint: Callable[[Any, Any], str]
) -> Any:  # Any: a field's value, typed by its spec at run time
    """A section (`gpu`, `price`, …) built from its mapping; None when it has problems."""
    if raw.__class__ is not dict and not isinstance(raw, Mapping):
        problems.append(FieldProblem(name, "expected a mapping"))
        return None
    converters = _INNER[name]
    parts: dict[str, Any] = {}
    found = len(problems)
    for key, value in raw.items():
        convert = converters.get(key)
        if convert is None:
            dotted, close = f"{name}.{printable(key)}", hint(key, converters)
            problems.append(FieldProblem(dotted, f"unknown field '{dotted}'{close}"))
        elif value is not None:
            try:
                parts[key] = convert(value)
            except FieldProblem as problem:
                problems.append(problem)
    return SECTIONS[name](**parts) if len(problems) == found else None


def _converter(spec: FieldSpec) -> Callable[[Any], Any]:
    """The fast path for a field's common, valid values; anything else goes to `_typed`, which
    converts the rare forms (an int as an id, a date for a time) or names the problem."""
    if spec.type in ("str", "gpu") and spec.name in _UNIQUE:

        def unique(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
            return value if value.__class__ is str else _typed(spec, value)

        return unique
    if spec.type in ("str", "gpu"):

        def text(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
            return _keep(value) if value.__class__ is str else _typed(spec, value)

        return text
    if spec.type == "enum" and spec.enum is not None:
        members = {member.value: member for member in spec.enum}

        def enum(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
            member = members.get(value) if value.__class__ is str else None
            return member if member is not None else _typed(spec, value)

        return enum
    if spec.type == "number":
        low = -sys.float_info.max if spec.minimum is None else spec.minimum
        high = sys.float_info.max if spec.maximum is None else spec.maximum
        kinds = (int,) if spec.integer else (int, float)

        def number(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
            if value.__class__ in kinds and low <= value <= high:
                return value  # NaN fails the comparisons, and infinity is past every bound
            return _typed(spec, value)

        return number
    if spec.type == "datetime":
        seen: dict[str, datetime] = {}  # fleets launch on the hour: a few thousand distinct times

        def moment(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
            parsed = seen.get(value) if value.__class__ is str else None
            if parsed is None:
                parsed = _typed(spec, value)
                if value.__class__ is str and len(seen) < _TIME_CACHE:
                    seen[value] = parsed
            return parsed

        return moment
    if spec.type == "tag":

        def tags(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
            if value.__class__ is dict and all(
                k.__class__ is str and v.__class__ is str for k, v in value.items()
            ):
                # the common case: text keys and values, as written (one copy of each text)
                return {_keep(k): _keep(v) for k, v in value.items()}
            return _typed(spec, value)

        return tags
    if spec.type == "list":

        def items(value: Any) -> Any:  # Any: a field's value, typed by its spec at run time
            if value.__class__ is list and all(v.__class__ is str for v in value):
                return tuple(map(_keep, value))
            return _typed(spec, value)

        return items
    return lambda value: _typed(spec, value)


_TIME_CACHE = 65_536  # parsed times kept per field while reading (datetimes are immutable)
# A fleet repeats a few hundred texts (providers, accounts, regions, types, tag keys and values):
# each is kept once, where the JSON parser makes a new string per value (at a million resources,
# ~0.3 GB of copies). Bounded, and never for the texts that are unique per resource.
_KEPT_TEXTS = 8192
_UNIQUE = frozenset(("id", "name"))
_KEPT: dict[str, str] = {}


def _keep(text: str) -> str:
    """`text`, or the equal string read before (strings are immutable: sharing one is safe)."""
    kept = _KEPT.get(text)
    if kept is None:
        if len(_KEPT) < _KEPT_TEXTS:
            _KEPT[text] = text
        return text
    return kept


_TOP = {spec.name: _converter(spec) for spec in FIELDS.values() if spec.group is None}
_INNER = {
    group: {spec.key: _converter(spec) for spec in FIELDS.values() if spec.group == group}
    for group in SECTIONS
}


def suggest(key: Any, choices: Any) -> str:
    """` (did you mean 'capacity'?)` for a misspelt key, else nothing."""
    close = get_close_matches(str(key), sorted(str(c) for c in choices), n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _no_hint(key: Any, choices: Any) -> str:
    return ""


def _is_name(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and value != ""


def _source(
    raw: Mapping[str, Any], problems: list[FieldProblem], hint: Callable[[Any, Any], str]
) -> SourceRef | None:
    """`source: {path, line}` and `note`, type-checked (a string line is a problem, not a crash)."""
    note = raw.get("note")
    if note is not None and not isinstance(note, str):
        problems.append(FieldProblem("note", f"expected str, got {shown(note)}"))
        note = None
    source = raw.get("source")
    if source is None:
        return SourceRef(note=note) if note else None
    if not isinstance(source, Mapping):
        problems.append(FieldProblem("source", "expected a mapping of path and line"))
        return None
    for key in source:
        if key not in ("path", "line"):
            dotted, close = f"source.{printable(key)}", hint(key, ("path", "line"))
            problems.append(FieldProblem(dotted, f"unknown field '{dotted}'{close}"))
    path, line = source.get("path"), source.get("line")
    if path is not None and not isinstance(path, str):
        problems.append(FieldProblem("source.path", f"expected str, got {shown(path)}"))
    if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 1):
        problems.append(
            FieldProblem("source.line", f"expected a line number ≥ 1, got {shown(line)}")
        )
    if not path:
        return SourceRef(note=note) if note else None
    return SourceRef(path=str(path), line=line, note=note)


def shown(value: Any) -> str:
    """A value as an error message shows it: its type and a short, one-line repr."""
    if isinstance(value, Mapping):
        kind = "mapping"
    elif isinstance(value, list | tuple):
        kind = "list"
    else:
        kind = type(value).__name__
    return f"{kind} {_REPR.repr(value)}"


def parse_time(key: str, value: Any) -> datetime:
    """An ISO 8601 time (naive: UTC) that every writer can show, so one in UTC too."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    else:
        try:
            parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            message = f"expected an ISO 8601 time, got '{printable(value)}'"
            raise FieldProblem(key, message) from None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if not in_utc_range(parsed):
        raise FieldProblem(key, f"'{printable(value)}' {OUT_OF_RANGE}")
    return parsed


OUT_OF_RANGE = "is out of range: in UTC it falls before year 1 or after year 9999"


def in_utc_range(when: datetime) -> bool:
    """Whether `when` (aware) exists in UTC: `0001-01-01T00:00+05:00` does not, and the SARIF
    run id, history rows and every other UTC rendering would overflow on it."""
    try:
        when.astimezone(UTC)
    except OverflowError:
        return False
    return True


# Any: a field's value, typed by its spec at run time
def _typed(spec: FieldSpec, value: Any) -> Any:
    key = spec.name
    kind = spec.type
    if kind == "enum" and spec.enum is not None:
        try:
            return spec.enum(str(value))
        except ValueError:
            choices = ", ".join(m.value for m in spec.enum)
            if isinstance(value, Mapping | list | tuple):
                raise FieldProblem(key, f"expected one of {choices}, got {shown(value)}") from None
            hint = suggest(value, (m.value for m in spec.enum))
            message = f"'{printable(value)}' is not one of {choices}{hint}"
            raise FieldProblem(key, message) from None
    if kind == "datetime":
        return parse_time(key, value)
    if kind == "tag":
        if not isinstance(value, Mapping):
            raise FieldProblem(key, "expected a mapping of key: value")
        for tag, item in value.items():
            if isinstance(item, Mapping | list | tuple | set):
                problem = f"expected a text value, got {shown(item)}"
                raise FieldProblem(f"{key}.{printable(tag)}", problem)
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    if kind in ("str", "gpu"):
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
        kind = "str"
    elif kind == "number" and spec.integer:
        if isinstance(value, int) and not isinstance(value, bool):
            return _bounded(spec, value)
        kind = "int"
    elif kind == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _bounded(spec, value)
    elif kind == "bool":
        if isinstance(value, bool):
            return value
    elif kind == "list":
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return tuple(value)
    raise FieldProblem(key, f"expected {kind}, got {shown(value)}")


def _bounded(spec: FieldSpec, value: float) -> float:
    """A number within the field's bounds; NaN, infinity and impossible values are refused."""
    problem = spec.impossible(value)
    if problem is not None:
        raise FieldProblem(spec.name, problem)
    return value
