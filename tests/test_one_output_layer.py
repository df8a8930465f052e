"""Meta-test: money, the mark for a missing value and the list of output formats are written once,
in report/ (`report/values.py`, `report/formats.py`); a module elsewhere that writes its own
fails here, by file and line (docs/architecture.md, "One output layer")."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_audit.report.formats import COMMANDS
from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "gpu_audit"
LAYER = PACKAGE / "report"
FORMAT_NAMES = frozenset(name for formats in COMMANDS.values() for name in formats)
MARKS = frozenset({"-", "–", "—", "n/a", "N/A"})


def _money(node: ast.AST) -> str | None:
    """What makes `node` a money formatter of its own, if it is one."""
    if isinstance(node, ast.JoinedStr):  # f"${value:,.2f}", f"-${-value:,.2f}"
        for part, after in zip(node.values, node.values[1:], strict=False):
            if (
                isinstance(part, ast.Constant)
                and isinstance(part.value, str)
                and part.value.endswith("$")
                and isinstance(after, ast.FormattedValue)
            ):
                return "an f-string writes `$` before a value (use report.values.money)"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "replace"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "$"
    ):
        return "`$` escaped by hand (money(..., 'markdown') escapes it)"
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
        and node.left.value.endswith("$")
    ):
        return "`$` + a value (use report.values.money)"
    return None


def _format_list(node: ast.AST) -> str | None:
    """A literal list of output format names declared (`FORMATS = ("table", "json")`) or passed
    (`click.Choice([...])`); a test of a format (`fmt in ("table", "text")`) is not a list."""
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        values = [node.value]
    elif isinstance(node, ast.Call):
        values = [*node.args, *(k.value for k in node.keywords)]
    else:
        return None
    for value in values:
        if isinstance(value, ast.Tuple | ast.List | ast.Set):
            names = [e.value for e in value.elts if isinstance(e, ast.Constant)]
            if len(names) >= 2 and len(names) == len(value.elts) and set(names) <= FORMAT_NAMES:
                return "a list of output formats (name the command in report/formats.py COMMANDS)"
    return None


def _missing_mark(node: ast.AST) -> str | None:
    """`"-" if value is None else ...`: a mark for a missing value of its own."""
    if (
        isinstance(node, ast.IfExp)
        and isinstance(node.body, ast.Constant)
        and node.body.value in MARKS
        and isinstance(node.test, ast.Compare)
        and any(isinstance(op, ast.Is) for op in node.test.ops)
        and any(isinstance(c, ast.Constant) and c.value is None for c in node.test.comparators)
    ):
        return f"a missing value marked {node.body.value!r} (report.values.MISSING per format)"
    return None


CHECKS = (_money, _format_list, _missing_mark)


def _own_layer(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        for check in CHECKS:
            said = check(node)
            if said:
                yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {said}"


def _outside_the_layer() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if LAYER not in p.parents)


@pytest.mark.parametrize("path", _outside_the_layer(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_outside_report_writes_its_own_money_marks_or_formats(path: Path) -> None:
    found = list(_own_layer(path))
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ('def usd(v):\n    return f"${v:,.2f}"\n', "`$` before a value"),
        ('def usd(v):\n    return f"-${-v:,.2f}"\n', "`$` before a value"),
        ('x = text.replace("$", "\\\\$")\n', "`$` escaped by hand"),
        ('x = "$" + str(v)\n', "`$` + a value"),
        ('FORMATS = ("table", "json", "csv")\n', "a list of output formats"),
        ('o = click.Choice(["table", "json"])\n', "a list of output formats"),
        ('x = "–" if v is None else str(v)\n', "a missing value marked '–'"),
        ('x = "-" if v is None else usd(v)\n', "a missing value marked '-'"),
    ],
)
def test_the_checks_find_each_kind(tmp_path: Path, source: str, said: str) -> None:
    """Each check names the file and line of what it finds (so the test above can fail)."""
    path = ROOT / "src" / "gpu_audit" / "cli" / "_probe_not_real.py"
    fake = tmp_path / "probe.py"
    fake.write_text(source, encoding="utf-8")
    found = [
        s
        for node in ast.walk(ast.parse(fake.read_text(encoding="utf-8")))
        for check in CHECKS
        if (s := check(node))
    ]
    assert any(said in s for s in found), found
    assert path.relative_to(ROOT)  # the message form: path:line (see _own_layer)


def test_a_shell_template_or_a_plain_list_is_not_flagged(tmp_path: Path) -> None:
    for source in (
        'x = "${" + value.strip("${}") + "}"\n',  # a Slurm `${VAR}`
        'x = f"${{N}}"\n',  # an escaped brace: no value after the `$`
        'KINDS = ("json", "yaml")\n',  # job file syntaxes, not output formats
        'x = "none" if v is None else str(v)\n',
    ):
        tree = ast.parse(source)
        assert [s for node in ast.walk(tree) for check in CHECKS if (s := check(node))] == []
