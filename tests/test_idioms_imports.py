"""Three idioms stay rare and explained: an import inside a function says why it is not at the top
(a cloud SDK or engine off a command's start-up, an import cycle); `# fmt: skip` is not used, and
`# fmt: off` guards only a literal table, with the reason on the comment line above it; a function
returning `Any` says why (an SDK's untyped objects, data of any shape). AST and tokens only."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "gpu_audit"
SOURCES = sorted(PACKAGE.rglob("*.py"))


@cache
def _read(path: Path) -> tuple[ast.Module, dict[int, str]]:
    """The file's tree and each line's comment (without the `#`, from the tokenizer: a `#` in a
    string is no comment), read once for the three checks."""
    text = path.read_text(encoding="utf-8")
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    comments = {t.start[0]: t.string[1:].strip() for t in tokens if t.type == tokenize.COMMENT}
    return ast.parse(text), comments


DIRECTIVES = ("fmt:", "type:", "noqa", "pragma:")


def _reason(comment: str | None) -> bool:
    """A comment that says something: not only a tool's directive."""
    return bool(comment) and not any(d in (comment or "") for d in DIRECTIVES)


def _explained(comments: dict[int, str], first: int, last: int) -> bool:
    """A reason on one of the lines `first`..`last`, or on the comment line just above them."""
    return any(_reason(comments.get(line)) for line in range(first - 1, last + 1))


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def unexplained_imports(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line` of each import inside a function with no reason beside or above it."""
    tree, comments = _read(path)
    found = set()
    for function in _functions(tree):
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom) and not _explained(
                comments, node.lineno, node.end_lineno or node.lineno
            ):
                found.add(node.lineno)
    return [
        f"{path.relative_to(root)}:{line}: import inside a function, no reason"
        for line in sorted(found)
    ]


def unguarded_format_skips(path: Path, root: Path = ROOT) -> list[str]:
    """`# fmt: skip` anywhere; `# fmt: off` not around a literal table or without a reason above."""
    tree, comments = _read(path)
    starts = {node.lineno: node for node in tree.body}
    where = path.relative_to(root)
    wrong = []
    for line, comment in sorted(comments.items()):
        if comment.startswith("fmt: skip") or comment.endswith("fmt: skip"):
            wrong.append(f"{where}:{line}: `# fmt: skip`: let ruff format write it")
        elif comment == "fmt: off":
            table = starts.get(line + 1)
            literal = isinstance(table, ast.Assign | ast.AnnAssign) and isinstance(
                table.value, ast.Dict | ast.Tuple | ast.List | ast.Set
            )
            if not literal:
                wrong.append(f"{where}:{line}: `# fmt: off` around something not a literal table")
            elif not _reason(comments.get(line - 1)):
                wrong.append(f"{where}:{line}: `# fmt: off` with no reason on the line above")
    return wrong


def unexplained_any(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line` of each function annotated `-> Any` with no reason on its signature or above."""
    tree, comments = _read(path)
    wrong = []
    for function in _functions(tree):
        if function.returns is None or ast.unparse(function.returns) != "Any":
            continue
        first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
        if not _explained(comments, first, function.body[0].lineno - 1):
            wrong.append(f"{path.relative_to(root)}:{function.lineno}: returns Any, no reason")
    return wrong


CHECKS = (unexplained_imports, unguarded_format_skips, unexplained_any)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_package_explains_its_idioms(check: Callable[[Path], list[str]]) -> None:
    wrong = [line for path in SOURCES for line in check(path)]
    assert not wrong, "\n".join(wrong)


def test_the_checks_see_each_idiom(tmp_path: Path) -> None:
    """The walkers themselves, on a file with each idiom bare and each explained."""
    bare = tmp_path / "bare.py"
    bare.write_text(
        "from typing import Any\n"
        "def f() -> Any:\n"
        "    import json\n"
        "    return json\n"
        "X = (1,  2)  # fmt: skip\n"
        "# fmt: off\n"
        "Y = {'a': 1}\n"
        "# fmt: on\n"
        "def g() -> None:\n"
        "    # fmt: off\n"
        "    z = 1\n"
        "    # fmt: on\n"
    )
    fine = tmp_path / "fine.py"
    fine.write_text(
        "from typing import Any\n"
        "def f() -> Any:  # Any: an SDK's untyped object\n"
        "    import json  # keeps json off check's start-up\n"
        "    # keeps csv off check's start-up\n"
        "    from csv import (\n"
        "        writer,\n"
        "    )\n"
        "    return json, writer\n"
        "s = '# fmt: skip'\n"
        "# a table: one cloud a line\n"
        "# fmt: off\n"
        "Y = {'a': 1,  'b': 2}\n"
        "# fmt: on\n"
    )

    def where(found: list[str]) -> list[str]:
        return [line.split(": ", 1)[0] for line in found]

    assert where(unexplained_imports(bare, tmp_path)) == ["bare.py:3"]
    assert where(unexplained_any(bare, tmp_path)) == ["bare.py:2"]
    assert where(unguarded_format_skips(bare, tmp_path)) == ["bare.py:5", "bare.py:6", "bare.py:10"]
    assert not [check(fine, tmp_path) for check in CHECKS if check(fine, tmp_path)]
