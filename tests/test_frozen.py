"""`@record` (`core/frozen.py`) behaves as `@dataclass(frozen=True, slots=True)`: the same
`__init__` arguments and objects, the same text, hash values and equality, frozen, and it
copies, pickles and replaces."""

from __future__ import annotations

import copy as copy_module
import dataclasses
import pickle
from concurrent.futures import ThreadPoolExecutor
from dataclasses import FrozenInstanceError, dataclass, field, fields, replace
from typing import Any

import pytest

from gpu_audit.core import frozen, resource, results
from gpu_audit.core.frozen import record
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
    @record
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
    with pytest.raises(FrozenInstanceError):
        del Point(1).x  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Point(1).other = 2  # type: ignore[attr-defined]
    assert {Point(1), Point(1, "other")} == {Point(1)}
    assert not hasattr(Point(1), "__dict__")  # slotted


def _both(kw_only: bool = False) -> tuple[type, type]:
    """One class declared twice: as a record and as the frozen dataclass it stands for."""
    made: list[type] = []
    for decorate in (
        record(kw_only=kw_only),
        dataclass(frozen=True, slots=True, kw_only=kw_only),
    ):

        class Job:
            """A class with every kind of field."""

            name: str
            nodes: int = 1
            tags: dict[str, str] = field(default_factory=dict)
            note: str = field(default="-", repr=False)
            seen: list[str] = field(default_factory=list, init=False, compare=False)

            def __post_init__(self) -> None:
                self.seen.append(self.name)

        made.append(decorate(Job))
    return made[0], made[1]


@pytest.mark.parametrize("kw_only", [False, True])
def test_a_record_takes_the_arguments_the_dataclass_takes_and_builds_the_same_object(
    kw_only: bool,
) -> None:
    ours, theirs = _both(kw_only)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {"name": "a"}),
        ((), {"name": "a", "nodes": 4, "tags": {"team": "x"}, "note": "n"}),
        ((), {"name": "a", "tags": {}}),
    ]
    if not kw_only:
        calls += [(("a",), {}), (("a", 2, {"k": "v"}, "n"), {}), (("a",), {"nodes": 3})]
    for args, kwargs in calls:
        a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
        assert [getattr(a, f.name) for f in fields(a)] == [getattr(b, f.name) for f in fields(b)]
        assert a.seen == [a.name]  # the factory ran for the field that is not an argument
        assert repr(a).replace(ours.__qualname__, "") == repr(b).replace(theirs.__qualname__, "")
        for item in (a, b):
            with pytest.raises(TypeError, match="unhashable"):
                hash(item)  # a dict inside, as the generated hash says
    assert ours(name="a").tags is not ours(name="a").tags  # a new dict each time
    bad: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {}),
        ((), {"name": "a", "unknown": 1}),
        ((), {"name": "a", "seen": []}),
        (("a", 1, {}, "n", "extra"), {}),
    ]
    if kw_only:
        bad.append((("a",), {}))
    for args, kwargs in bad:
        with pytest.raises(TypeError):
            theirs(*args, **kwargs)
        with pytest.raises(TypeError):
            ours(*args, **kwargs)


def test_a_record_compiles_its_init_once_and_copies_pickles_and_replaces() -> None:
    ours, _ = _both()
    first = ours("a", 2)
    compiled = ours.__init__  # type: ignore[misc]
    assert ours("b").name == "b" and ours.__init__ is compiled  # type: ignore[misc]
    for copy in (copy_module.copy(first), copy_module.deepcopy(first)):
        assert copy == first and copy is not first and type(copy) is ours
    result = demo_scan()  # the model's own records pickle (a class must be importable)
    assert pickle.loads(pickle.dumps(result)) == result
    changed = replace(first, nodes=8)
    assert (changed.name, changed.nodes, first.nodes) == ("a", 8, 2)
    assert dataclasses.asdict(first)["tags"] == {}


def test_a_record_refuses_a_field_without_default_after_one_with_it_when_declared() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @record
        class Wrong:
            a: int = 0
            b: int  # type: ignore[misc]

    @record(kw_only=True)
    class Right:
        a: int = 0
        b: int

    assert Right(b=1).a == 0


def test_the_first_instances_from_many_threads_all_come_out_right() -> None:
    ours, _ = _both()
    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(lambda i: ours(f"job-{i}", i), range(64)))
    assert [(m.name, m.nodes) for m in made] == [(f"job-{i}", i) for i in range(64)]


def test_a_mutable_record_is_what_a_plain_dataclass_is() -> None:
    @record(frozen=False)
    class Draft:
        name: str
        count: int = 0

        def __post_init__(self) -> None:
            self.extra = [self.name]  # not a field: a plain dataclass instance takes it

    @dataclass
    class Plain:
        name: str
        count: int = 0

    draft = Draft("a")
    draft.count += 2
    assert (draft.count, draft.extra) == (2, ["a"])
    assert repr(draft).replace("Draft", "X") == repr(Plain("a", 2)).replace("Plain", "X")
    assert draft == Draft("a", 2) and draft != Draft("a")
    assert Draft.__hash__ is None and Plain.__hash__ is None  # eq without frozen: unhashable


def test_every_dataclass_of_the_package_is_a_record() -> None:
    """Declared with `@record`: its methods from `core/frozen.py`, slotted when frozen (one
    declared with plain `@dataclass` compiles its methods at import, on the hook's path)."""
    import importlib
    import inspect

    from tests.conftest import ROOT

    records = 0
    for path in sorted((ROOT / "src" / "gpu_audit").rglob("*.py")):
        parts = path.relative_to(ROOT / "src").with_suffix("").parts
        if "__main__" in parts:
            continue
        module = importlib.import_module(".".join(p for p in parts if p != "__init__"))
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not dataclasses.is_dataclass(cls) or cls.__module__ != module.__name__:
                continue
            for method in ("__eq__", "__repr__"):
                assert getattr(cls, method).__module__ == frozen.__name__, (cls, method)
            if getattr(cls.__setattr__, "__module__", None) == frozen.__name__:
                assert "__slots__" in cls.__dict__, cls
                assert cls.__hash__.__module__ == frozen.__name__, cls
            else:
                assert cls.__hash__ is None, cls  # a mutable record
            records += 1
    assert records >= 100


def test_a_record_that_extends_a_record_sets_its_bases_fields_too() -> None:
    """The fields a record inherits from a record have their slots in the base's class: an
    `__init__` looked for them in the subclass alone and fell back to an instance dict the
    slotted subclass does not have (AttributeError on the first instance)."""

    @record
    class Base:
        a: int
        b: str = "b"

    @record
    class Child(Base):
        c: float = 0.5

    @dataclass(frozen=True, slots=True)
    class TwinBase:
        a: int
        b: str = "b"

    @dataclass(frozen=True, slots=True)
    class TwinChild(TwinBase):
        c: float = 0.5

    for args in ((1,), (2, "x"), (3, "y", 1.5)):
        ours, theirs = Child(*args), TwinChild(*args)
        assert [getattr(ours, f.name) for f in fields(ours)] == [
            getattr(theirs, f.name) for f in fields(theirs)
        ]
    child = Child(4, "w", 2.5)
    assert child == Child(4, "w", 2.5) and hash(child) == hash(Child(4, "w", 2.5))
    with pytest.raises(FrozenInstanceError):
        child.c = 2.0  # type: ignore[misc]
