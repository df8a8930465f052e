"""Every public function in src/ has its docstring, and every module-level constant is read
somewhere (AST only: no module is imported)."""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpu_audit"
READERS = ("src", "tests", "benchmarks")  # where a constant may be read
CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*\Z")
_Def = ast.FunctionDef | ast.AsyncFunctionDef
Trees = dict[Path, ast.Module]


@cache
def _folder_trees(folder: str) -> Trees:
    """Every module under `folder`, parsed once for both checks."""
    return {
        path: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for path in sorted((ROOT / folder).rglob("*.py"))
    }


def _trees(*folders: str) -> Trees:
    return {path: tree for folder in folders for path, tree in _folder_trees(folder).items()}


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


# --- docstrings --------------------------------------------------------------------------------


def _base_name(node: ast.expr) -> str:
    """`Collector` for `Collector[S]`, `interface.Collector` or `Collector`."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


Classes = dict[str, list[tuple[list[str], set[str]]]]


def _documented_methods(trees: Trees) -> Classes:
    """Each class name in src/ → its bases and the methods it documents (one entry per definition)."""
    classes: Classes = defaultdict(list)
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                documented = {
                    f.name for f in node.body if isinstance(f, _Def) and ast.get_docstring(f)
                }
                classes[node.name].append(([_base_name(b) for b in node.bases], documented))
    return classes


def _covered(
    classes: Classes, bases: list[str], name: str, seen: frozenset[str] = frozenset()
) -> bool:
    """True when a base class in src/ (or one of its bases) documents the method `name`."""
    for base in bases:
        if base in seen:
            continue
        for grand, documented in classes.get(base, ()):
            if name in documented or _covered(classes, grand, name, seen | {base}):
                return True
    return False


def _public_defs(
    node: ast.AST, cls: ast.ClassDef | None = None
) -> Iterator[tuple[_Def, ast.ClassDef | None]]:
    """Public functions and methods of a module; a function nested in a function is not public
    (nothing outside its enclosing function can call it by name)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            yield from _public_defs(child, child)
        elif isinstance(child, _Def):
            if not child.name.startswith("_"):
                yield child, cls
        else:  # if/try blocks at module or class level
            yield from _public_defs(child, cls)


def _overload(func: _Def) -> bool:
    return any(_base_name(d) == "overload" for d in func.decorator_list)


def undocumented(trees: Trees | None = None) -> list[str]:
    """`file:line name` of each public function or method in src/ without a docstring; an
    `@overload` stub, a method whose base class in src/ documents it, and the members of a
    documented Protocol are covered."""
    trees = _trees("src") if trees is None else trees
    classes = _documented_methods(trees)
    missing = []
    for path, tree in trees.items():
        for func, cls in _public_defs(tree):
            if ast.get_docstring(func) is not None or _overload(func):
                continue
            bases = [_base_name(b) for b in cls.bases] if cls else []
            if cls and _covered(classes, bases, func.name):
                continue
            if cls and "Protocol" in bases and ast.get_docstring(cls):
                continue  # a protocol's docstring says what each of its members is for
            name = f"{cls.name}.{func.name}" if cls else func.name
            missing.append(f"{_where(path, func)} {name}")
    return missing


def test_every_public_function_has_a_docstring() -> None:
    missing = undocumented()
    assert not missing, "public functions without a docstring:\n" + "\n".join(missing)


# --- dead constants ----------------------------------------------------------------------------


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT / "src").with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_from(path: Path, node: ast.ImportFrom) -> str:
    """The module an import names, a relative one resolved against `path`'s package."""
    if node.level == 0:
        return node.module or ""
    package = list(path.relative_to(ROOT).with_suffix("").parts)
    package = package[1:] if package[0] == "src" else package
    package = package[: len(package) - node.level]
    return ".".join([*package, *([node.module] if node.module else [])])


def _constants(trees: Trees) -> Iterator[tuple[Path, ast.stmt, str]]:
    for path, tree in trees.items():
        if not path.is_relative_to(SRC):
            continue
        for node in tree.body:
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and CONSTANT.match(target.id):
                    yield path, node, target.id


def _docs_words() -> Counter[str]:
    return Counter(
        word
        for doc in sorted((ROOT / "docs").rglob("*.md"))
        for word in re.findall(r"\w+", doc.read_text(encoding="utf-8"))
    )


def dead_constants(trees: Trees | None = None, docs: Counter[str] | None = None) -> list[str]:
    """`file:line NAME` of each module-level constant in src/ that nothing reads: not its own
    module, not a module importing it (directly or through a package's re-export), not an
    attribute `module.NAME`, not a string naming it (getattr, `__all__`), not docs/."""
    trees = _trees(*READERS) if trees is None else trees
    docs = _docs_words() if docs is None else docs
    loads: dict[Path, Counter[str]] = {}
    attributes: Counter[str] = Counter()
    strings: Counter[str] = Counter()
    importers: dict[tuple[str, str], list[tuple[Path, str]]] = defaultdict(list)
    for path, tree in trees.items():
        names: Counter[str] = Counter()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names[node.id] += 1
            elif isinstance(node, ast.Attribute):
                attributes[node.attr] += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if not node.value.islower():  # a name in a string: getattr(module, "NAME")
                    strings.update(re.findall(r"\w+", node.value))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    key = (_imported_from(path, node), alias.name)
                    importers[key].append((path, alias.asname or alias.name))
        loads[path] = names

    def read(path: Path, name: str, seen: frozenset[tuple[Path, str]] = frozenset()) -> bool:
        if loads[path][name]:
            return True
        for user, alias in importers[(_module(path), name)]:
            if (user, alias) in seen:
                continue
            if loads[user][alias] or (
                user.name == "__init__.py" and read(user, alias, seen | {(user, alias)})
            ):
                return True
        return False

    return [
        f"{_where(path, node)} {name}"
        for path, node, name in _constants(trees)
        if not (read(path, name) or attributes[name] or strings[name] or docs[name])
    ]


def test_every_module_constant_is_read_somewhere() -> None:
    dead = dead_constants()
    assert not dead, "module-level constants nothing reads:\n" + "\n".join(dead)


# --- the checks themselves ---------------------------------------------------------------------


def _parsed(sources: dict[str, str]) -> Trees:
    return {ROOT / name: ast.parse(text) for name, text in sources.items()}


BOX = """
import typing
def shown(x):
    def inner(): pass
    return inner
def _private(): pass
class Box:
    @property
    def size(self): return 1
    def __len__(self): return 1
    @typing.overload
    def get(self, k: int) -> int: ...
if typing.TYPE_CHECKING:
    def hidden(): pass
"""

LEAF = '''
from typing import Protocol
class Base:
    def collect(self):
        """Yield what was found."""
class Mid(Base): pass
class Leaf(Mid):
    def collect(self): pass
    def scope(self): pass
class Hooks(Protocol):
    """What a run asks of its owner: progress."""
    def tick(self): ...
class Bare(Protocol):
    def tick(self): ...
'''


def test_the_docstring_check_sees_methods_and_properties_not_closures() -> None:
    found = undocumented(_parsed({"src/gpu_audit/box.py": BOX}))
    assert found == [
        "src/gpu_audit/box.py:3 shown",
        "src/gpu_audit/box.py:9 Box.size",
        "src/gpu_audit/box.py:14 hidden",
    ]


def test_a_documented_base_or_protocol_covers_its_members() -> None:
    found = undocumented(_parsed({"src/gpu_audit/leaf.py": LEAF}))
    assert found == ["src/gpu_audit/leaf.py:9 Leaf.scope", "src/gpu_audit/leaf.py:14 Bare.tick"]
    assert not _covered({"Loop": [(["Loop"], set())]}, ["Loop"], "x")  # a cycle ends


VALUES = """
DEAD = 1
OWN = 2
IMPORTED = 3
SHARED = 4
BY_NAME = 5
_ATTRIBUTE = 6
ONLY_IMPORTED = 7
IN_DOCS = 8
print(OWN)
"""

USER = """
from gpu_audit.pkg import SHARED, values
from .pkg.values import IMPORTED, ONLY_IMPORTED
print(IMPORTED, SHARED, values._ATTRIBUTE, getattr(values, "BY_NAME"))
"""


def test_the_constant_check_finds_what_nothing_reads() -> None:
    trees = _parsed(
        {
            "src/gpu_audit/pkg/__init__.py": "from gpu_audit.pkg.values import SHARED\n",
            "src/gpu_audit/pkg/values.py": VALUES,
            "src/gpu_audit/user.py": USER,
        }
    )
    found = dead_constants(trees, Counter({"IN_DOCS": 1}))
    assert found == [
        "src/gpu_audit/pkg/values.py:2 DEAD",
        "src/gpu_audit/pkg/values.py:8 ONLY_IMPORTED",
    ]


# --- after a merge -----------------------------------------------------------------------------


def _qualified(tree: ast.Module) -> dict[str, _Def]:
    return {f"{cls.name}.{f.name}" if cls else f.name: f for f, cls in _public_defs(tree)}


def restored(source: str, donor: str) -> str:
    """`source` with the docstring `donor` gives each public function that has none here (matched
    by qualified name): what a merge that kept the other side of a conflict lost."""
    lines = source.split("\n")
    given = _qualified(ast.parse(donor))
    donor_lines = donor.split("\n")
    inserts = []
    for name, func in _qualified(ast.parse(source)).items():
        other = given.get(name)
        if ast.get_docstring(func) is not None or other is None or not ast.get_docstring(other):
            continue
        first = func.body[0]
        if first.lineno == func.lineno:
            continue  # a one-line body: left to the check to name
        at = first.lineno - 1
        while at - 1 >= func.lineno and lines[at - 1].strip().startswith("#"):
            at -= 1  # the docstring goes above a leading comment
        doc = other.body[0]
        text = donor_lines[doc.lineno - 1 : doc.end_lineno]
        indent = " " * first.col_offset
        inserts.append(
            (at, [indent + line[doc.col_offset :] if line.strip() else "" for line in text])
        )
    for at, text in sorted(inserts, reverse=True):
        lines[at:at] = text
    return "\n".join(lines)


def restore(revision: str) -> list[str]:
    """Write back each docstring of `revision` (say `issue-50-docs`) that a merge lost; the
    paths written."""
    import subprocess

    written = []
    for path in sorted({line.split(":")[0] for line in undocumented()}):
        shown = subprocess.run(
            ["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True
        )
        if shown.returncode != 0:
            continue  # a file the revision does not have
        file = ROOT / path
        before = file.read_text(encoding="utf-8")
        after = restored(before, shown.stdout)
        if after != before:
            file.write_text(after, encoding="utf-8")
            written.append(path)
    return written


DONOR = '''
class Box:
    def size(self):
        """How many fit."""
        # counted once
        return 1

def shown(x):
    """X, shown."""
    return x
'''

MERGED = """
class Box:
    def size(self):
        # counted once
        return 1

def shown(x):
    import os
    return x

def other(): pass
"""


def test_a_docstring_a_merge_lost_is_written_back() -> None:
    after = restored(MERGED, DONOR)
    assert undocumented(_parsed({"src/gpu_audit/box.py": after})) == [
        "src/gpu_audit/box.py:13 other"
    ]
    assert '    def size(self):\n        """How many fit."""\n        # counted once\n' in after
    assert 'def shown(x):\n    """X, shown."""\n    import os\n' in after
    assert restored(after, DONOR) == after


if __name__ == "__main__":  # python -m tests.test_idioms_docs issue-50-docs
    import sys

    for changed in restore(sys.argv[1]):
        print(f"wrote {changed}")
