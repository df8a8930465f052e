"""Every public function in src/ has its docstring, and every module-level constant is read
somewhere (AST only: no module is imported)."""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpu_audit"
READERS = ("src", "tests", "benchmarks")  # where a constant may be read
CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*\Z")
_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _trees(*folders: str) -> dict[Path, ast.Module]:
    return {
        path: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
    }


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


def _documented_methods(trees: dict[Path, ast.Module]) -> dict[str, list[tuple[list[str], set]]]:
    """Each class name in src/ → its bases and the methods it documents (one entry per definition)."""
    classes: dict[str, list[tuple[list[str], set]]] = defaultdict(list)
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                documented = {
                    f.name for f in node.body if isinstance(f, _Def) and ast.get_docstring(f)
                }
                classes[node.name].append(([_base_name(b) for b in node.bases], documented))
    return classes


def _covered(classes: dict, bases: list[str], name: str, seen: frozenset = frozenset()) -> bool:
    """True when a base class in src/ (or its bases) documents the method `name`."""
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


def undocumented() -> list[str]:
    """`file:line name` of each public function or method in src/ without a docstring; an
    `@overload` stub, a method whose base class in src/ documents it, and the members of a
    documented Protocol are covered."""
    trees = _trees("src")
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
    if node.level == 0:
        return node.module or ""
    package = list(path.relative_to(ROOT).with_suffix("").parts)
    package = package[1:] if package[0] == "src" else package
    package = package[: len(package) - node.level]
    return ".".join([*package, *([node.module] if node.module else [])])


def _constants(trees: dict[Path, ast.Module]) -> Iterator[tuple[Path, ast.stmt, str]]:
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


def dead_constants() -> list[str]:
    """`file:line NAME` of each module-level constant in src/ that nothing reads: not its own
    module, not a module importing it (directly or through a package's re-export), not an
    attribute `module.NAME`, not a string naming it (getattr, `__all__`), not docs/."""
    trees = _trees(*READERS)
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
                strings.update(re.findall(r"\w+", node.value))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    key = (_imported_from(path, node), alias.name)
                    importers[key].append((path, alias.asname or alias.name))
        loads[path] = names
    docs = Counter(
        word
        for doc in sorted((ROOT / "docs").rglob("*.md"))
        for word in re.findall(r"\w+", doc.read_text(encoding="utf-8"))
    )

    def read(path: Path, name: str, seen: frozenset = frozenset()) -> bool:
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


def _check(source: str) -> list[str]:
    tree = ast.parse(source)
    found = []
    for func, cls in _public_defs(tree):
        if ast.get_docstring(func) is None and not _overload(func):
            found.append(f"{cls.name + '.' if cls else ''}{func.name}:{func.lineno}")
    return found


def test_the_docstring_check_sees_methods_and_properties_not_closures() -> None:
    source = (
        "import typing\n"
        "def shown(x):\n"
        "    def inner(): pass\n"
        "    return inner\n"
        "def _private(): pass\n"
        "class Box:\n"
        "    @property\n"
        "    def size(self): return 1\n"
        "    def __len__(self): return 1\n"
        "    @typing.overload\n"
        "    def get(self, k: int) -> int: ...\n"
        "if typing.TYPE_CHECKING:\n"
        "    def hidden(): pass\n"
    )
    assert _check(source) == ["shown:2", "Box.size:8", "hidden:13"]


def test_a_base_class_docstring_covers_its_overrides() -> None:
    classes = {"Base": [(["ABC"], {"collect"})], "Mid": [(["Base"], set())]}
    assert _covered(classes, ["Mid"], "collect")
    assert not _covered(classes, ["Mid"], "scope")
    assert not _covered({"Loop": [(["Loop"], set())]}, ["Loop"], "x")  # a cycle ends
