"""The package's shape: stages import only stages below them, and no module imports its way back
to itself. The layer order is written here, once."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "gpu_audit"

# Lowest first. A stage may import itself and the stages of lower layers; never a stage of its
# own layer or above (peers stay independent, so adding one touches nothing else).
LAYERS: list[set[str]] = [
    {"__init__", "errors"},
    {"core"},
    {"catalog"},
    {"policy", "jobs", "collectors", "prices", "history"},
    {"report"},
    {"estimate", "shards", "billing"},
    {"audit", "node_join", "settings"},
    {"diff"},
    {"cli"},
    {"__main__"},
]
ROOT_MODULES_AT_MOST = 10


def _layer(stage: str) -> int:
    for index, layer in enumerate(LAYERS):
        if stage in layer:
            return index
    raise AssertionError(f"gpu_audit.{stage} is in no layer: add it to LAYERS in {__file__}")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every `gpu_audit` module `path` imports, at any depth of the file (lazy imports count)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.startswith("gpu_audit"))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "gpu_audit"
        ):
            for alias in node.names:  # `from pkg import module` imports the module
                yield node.lineno, f"{node.module}.{alias.name}"


def _resolve(name: str, modules: set[str]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets = {_resolve(name, set(files)) for _, name in _imports(path)}
        graph[module] = {t for t in targets if t and t != module}
    return graph


def test_no_stage_imports_one_above_it_or_beside_it() -> None:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    wrong = []
    for module, path in sorted(files.items()):
        here = _stage(module)
        for line, name in _imports(path):
            target = _resolve(name, set(files))
            there = _stage(target) if target else here
            if there != here and _layer(there) >= _layer(here):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {here} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1 on the path, 2 done
    cycles: list[str] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_the_package_root_is_a_lobby() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= ROOT_MODULES_AT_MOST, modules


@pytest.mark.parametrize("init", sorted(PACKAGE.rglob("__init__.py")), ids=str)
def test_package_init_files_only_re_export(init: Path) -> None:
    """An `__init__` holds its docstring, imports, `__all__` and plain constants; no logic."""
    allowed = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.Expr)
    tree = ast.parse(init.read_text(encoding="utf-8"))
    logic = [
        f"{init.relative_to(ROOT)}:{node.lineno}: {type(node).__name__}"
        for node in tree.body
        if not isinstance(node, allowed)
    ]
    assert not logic, "\n".join(logic)


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path) -> None:
    """The walker itself: a report module importing a collector is one layer too high."""
    source = tmp_path / "x.py"
    source.write_text("def f():\n    from gpu_audit.collectors.registry import PROVIDERS\n")
    assert list(_imports(source)) == [(2, "gpu_audit.collectors.registry.PROVIDERS")]
    assert _layer("collectors") >= _layer("core")
    assert _layer("report") > _layer("collectors")
