"""`@record`: a frozen, slotted dataclass whose methods cost nothing until they are used.

`@dataclass(frozen=True, slots=True)` compiles `__init__`, `__setattr__`, `__delattr__`, `__eq__`
and `__repr__` from source text (one `exec` each, ~0.1 ms) for every class, and `gpu-audit check`
imports ~40 of them: a third of its own start-up went there. `@record` asks `dataclass` for the
fields and slots alone, then adds methods written once for every class (`__eq__`, `__hash__`,
`__repr__`, the frozen `__setattr__` and `__delattr__`, pickling) and a generated `__init__`
compiled when the class is first instantiated (half the classes on a hook's path never are).

What a record does is what the dataclass did: the same `__init__` parameters (positional or
`kw_only`, defaults, `default_factory`, `__post_init__`), equality and hash over the same tuple of
fields (so hash values are equal too), the same repr, `FrozenInstanceError` on assignment, and
`dataclasses.fields`, `replace` and `asdict` work on it. Type checkers see a frozen dataclass
(`dataclass_transform`). `tests/test_frozen.py` holds a record to the dataclass it replaces.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T", bound=type)


@overload
def record(cls: T, /) -> T: ...
@overload
def record(*, kw_only: bool = False, frozen: bool = True) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(
    cls: T | None = None, /, *, kw_only: bool = False, frozen: bool = True
) -> T | Callable[[T], T]:
    """Make `cls` a frozen, slotted dataclass (`kw_only`: every field keyword-only).
    `frozen=False`: what plain `@dataclass` makes, a class whose instances take any attribute,
    unhashable (a parser's scratch record)."""

    def wrap(cls: T) -> T:
        made: Any = dataclass(init=False, repr=False, eq=False, slots=frozen, kw_only=kw_only)(cls)
        _check_order(made)
        if frozen:
            for name, method in _FROZEN.items():
                setattr(made, name, method)
        made.__init__ = _first_init(made)
        shared(made)
        if not frozen:
            made.__hash__ = None
        return made

    return wrap if cls is None else wrap(cls)


def shared(cls: T) -> T:
    """Give a dataclass declared with `eq=False, repr=False` the dataclass `__eq__`,
    `__hash__` (as `frozen=True, eq=True` makes it) and `__repr__`."""
    compared = tuple(f.name for f in fields(cls) if f.compare)
    hashed = tuple(f.name for f in fields(cls) if (f.compare if f.hash is None else f.hash))
    shown = tuple(f.name for f in fields(cls) if f.repr)
    key, hash_key = _tuple_of(compared), _tuple_of(hashed)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(key(self) == key(other))
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hash_key(self))

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({values})"

    for method in (__eq__, __hash__, __repr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)
    return cls


def _tuple_of(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields' values as a tuple, as the generated methods build it (one field too)."""
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    if not names:
        return lambda self: ()
    return attrgetter(*names)


def _assign(self: Any, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delete(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _state(self: Any) -> list[object]:
    """Pickling and `copy`: the fields' values, put back by `_restore` (not `setattr`)."""
    return [getattr(self, f.name) for f in fields(self)]


def _restore(self: Any, state: list[object]) -> None:
    for f, value in zip(fields(self), state, strict=True):
        object.__setattr__(self, f.name, value)


_FROZEN = {
    "__setattr__": _assign,
    "__delattr__": _delete,
    "__getstate__": _state,
    "__setstate__": _restore,
}


def _check_order(cls: type) -> None:
    """The error `dataclass` raises when it writes `__init__`, raised at class creation."""
    seen_default = False
    for f in fields(cls):
        if not f.init or f.kw_only:
            continue
        if f.default is not MISSING or f.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _first_init(cls: type) -> Callable[..., None]:
    """An `__init__` that compiles the real one, puts it on `cls` and runs it: the first
    instance pays the compile, later ones call the compiled method directly."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init = _compile_init(cls)
        cls.__init__ = init  # type: ignore[misc]
        init(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


_DEFAULTS_FROM = "_factory_default"  # the marker of a `default_factory` parameter left out


def _compile_init(cls: type) -> Callable[..., None]:
    """The `__init__` that `@dataclass(frozen=True)` would generate for `cls`: the same
    parameters, defaults, factories and `__post_init__`. Its body is one call that puts every
    value through its slot's setter, which is quicker to compile (half the time of a statement
    per field) and to run (a slot setter skips `object.__setattr__`'s look-up by name)."""
    names: dict[str, object] = {_DEFAULTS_FROM: MISSING}
    positional: list[str] = []
    keywords: list[str] = []
    set_names: list[str] = []
    values: list[str] = []
    for f in fields(cls):
        if f.default is not MISSING:
            names[f"_default_{f.name}"] = f.default
        if f.default_factory is not MISSING:
            names[f"_factory_{f.name}"] = f.default_factory
        if f.init:
            value = f.name
            if f.default is not MISSING:
                parameter = f"{f.name}=_default_{f.name}"
            elif f.default_factory is not MISSING:
                parameter = f"{f.name}={_DEFAULTS_FROM}"
                value = f"_factory_{f.name}() if {f.name} is {_DEFAULTS_FROM} else {f.name}"
            else:
                parameter = f.name
            (keywords if f.kw_only else positional).append(parameter)
        elif f.default_factory is not MISSING:
            value = f"_factory_{f.name}()"
        elif f.default is not MISSING:
            value = f"_default_{f.name}"
        else:
            continue  # `init=False` and no default: left unset, as dataclasses leaves it
        set_names.append(f.name)
        values.append(f"({value})")
    names["_fill"] = _filler(cls, tuple(set_names))
    body = [f" _fill(self, ({', '.join(values)},))"] if values else []
    if hasattr(cls, "__post_init__"):
        body.append(" self.__post_init__()")
    parameters = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    source = f"def __init__({parameters}):\n" + ("\n".join(body) or " pass") + "\n"
    exec(source, names)  # noqa: S102 - text built from the class's own field names, as dataclasses does
    init: Callable[..., None] = names["__init__"]  # type: ignore[assignment]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _filler(cls: type, names: tuple[str, ...]) -> Callable[[Any, tuple[object, ...]], None]:
    """Set these fields from a tuple of values: through the slots' own setters, or (a class
    without slots: a mutable record) its instance dict."""
    setters: tuple[Any, ...] = tuple(  # a slot of a base record is in that base's __dict__
        getattr(
            next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None),
            "__set__",
            None,
        )
        for name in names
    )
    if all(setters):

        def fill(self: Any, values: tuple[object, ...]) -> None:
            for put, value in zip(setters, values, strict=True):
                put(self, value)

        return fill

    def fill_dict(self: Any, values: tuple[object, ...]) -> None:
        self.__dict__.update(zip(names, values, strict=True))

    return fill_dict
