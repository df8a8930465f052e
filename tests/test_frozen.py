"""The model's shared `__eq__`, `__hash__` and `__repr__` (`core/frozen.py`) behave as the
methods `@dataclass(frozen=True)` generates: the same text, the same hash values, the same
equality, and the classes stay frozen."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field, fields, replace
from typing import Any

import pytest

from gpu_audit.core import resource, results
from gpu_audit.core.frozen import shared
from gpu_audit.core.results import ScanResult
from tests.report.conftest import demo_scan


def _objects(result: ScanResult) -> list[Any]:
    """Every model object reachable from a scan result, once each."""
    seen: dict[int, Any] = {}
    stack: list[Any] = [result]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple | list):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and id(item) not in seen:
            seen[id(item)] = item
            stack.extend(getattr(item, f.name) for f in fields(item))
    return list(seen.values())


def _twin(cls: type) -> type:
    """The same fields under the standard library's generated methods."""
    spec = [(f.name, Any, field(default=None, compare=f.compare, repr=f.repr)) for f in fields(cls)]
    twin = dataclasses.make_dataclass(cls.__name__, spec, frozen=True)
    twin.__qualname__ = cls.__qualname__
    return twin


def test_every_model_object_reads_as_its_generated_twin() -> None:
    objects = _objects(demo_scan())
    assert {type(o).__module__ for o in objects} >= {resource.__name__, results.__name__}
    twins: dict[type, type] = {}
    for item in objects:
        twin = twins.setdefault(type(item), _twin(type(item)))
        values = {f.name: getattr(item, f.name) for f in fields(item)}
        copy = twin(**values)
        assert repr(item) == repr(copy)
        try:
            expected = hash(copy)
        except TypeError:  # a list or dict inside: unhashable, as the generated one says
            with pytest.raises(TypeError):
                hash(item)
        else:
            assert hash(item) == expected
        assert item == replace(item)
        assert (item != replace(item)) is False
        assert item != copy  # another class: never equal, as generated


def test_a_field_left_out_of_comparison_stays_out_and_the_class_stays_frozen() -> None:
    @shared
    @dataclass(frozen=True, slots=True, eq=False, repr=False)
    class Point:
        x: int
        label: str = field(default="", compare=False, repr=False)

    @dataclass(frozen=True, slots=True)
    class Generated:
        x: int
        label: str = field(default="", compare=False, repr=False)

    assert Point(1, "a") == Point(1, "b") and Point(1) != Point(2)
    assert hash(Point(1, "a")) == hash(Generated(1, "b"))
    assert repr(Point(1, "a")) == repr(Generated(1, "a")).replace("Generated", "Point")
    assert Point(1).__eq__(Generated(1)) is NotImplemented
    with pytest.raises(FrozenInstanceError):
        Point(1).x = 2  # type: ignore[misc]
    assert {Point(1), Point(1, "other")} == {Point(1)}


def test_every_class_declared_without_eq_and_repr_has_the_shared_ones() -> None:
    """`eq=False, repr=False` without `@shared` would compare by identity: never allowed."""
    import importlib
    import inspect

    from tests.conftest import ROOT

    sources = sorted((ROOT / "src" / "gpu_audit").rglob("*.py"))
    declared = [p for p in sources if "eq=False, repr=False" in p.read_text()]
    assert len(declared) >= 10
    checked = 0
    for path in declared:
        parts = path.relative_to(ROOT / "src").with_suffix("").parts
        module = importlib.import_module(".".join(p for p in parts if p != "__init__"))
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not dataclasses.is_dataclass(cls) or cls.__module__ != module.__name__:
                continue
            params = cls.__dataclass_params__  # type: ignore[attr-defined]
            if params.eq or params.repr:
                continue
            assert params.frozen, cls
            for method in ("__eq__", "__hash__", "__repr__"):
                assert getattr(cls, method).__module__ == "gpu_audit.core.frozen", (cls, method)
            checked += 1
    assert checked >= 40
