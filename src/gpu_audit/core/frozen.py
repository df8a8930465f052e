"""`__eq__`, `__hash__` and `__repr__` for the model's frozen dataclasses, written once for all.

`@dataclass` compiles six methods per frozen class from source text (`exec`), ~0.6 ms a class:
the model's 24 classes were a fifth of `gpu-audit check`'s own start-up. The model declares
`@dataclass(frozen=True, slots=True, eq=False, repr=False)` (so `__init__` and the frozen
`__setattr__` are still generated, and type checkers see frozen dataclasses) under `@shared`,
which adds these three: the same results as the generated ones (the same tuple is compared and
hashed, so even hash values are equal), without compiling anything.
"""

from __future__ import annotations

import reprlib
from dataclasses import fields
from operator import attrgetter
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


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


def _tuple_of(names: tuple[str, ...]) -> Any:
    """The fields' values as a tuple, as the generated methods build it (one field too)."""
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    if not names:
        return lambda self: ()
    return attrgetter(*names)
