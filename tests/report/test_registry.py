"""Meta-test: every format in the registry renders the demo, job findings, hostile values and nothing."""

from __future__ import annotations

import importlib
import re
from datetime import UTC, datetime

import click
import pytest

from gpu_audit.core.results import ScanResult, Scope
from gpu_audit.report import COMMANDS, OUTPUT_EXTENSIONS, REPORTERS, render
from tests.conftest import ROOT

EMPTY = ScanResult(
    generated_at=datetime(2026, 1, 1, tzinfo=UTC),
    scope=Scope(command="check"),
    rules=(),
    resources=(),
    findings=(),
)


def _choices(command: click.Command, option: str = "fmt") -> list[str]:
    param = next(p for p in command.params if p.name == option)
    assert isinstance(param.type, click.Choice)
    return list(param.type.choices)


def _command(name: str) -> click.Command:
    """A command of `gpu-audit` by name, loaded as the CLI loads it (most are registered lazily:
    `main.commands` holds them only once some test has run them)."""
    from gpu_audit.cli.main import main

    command = main.get_command(click.Context(main), name)
    assert command is not None, name
    return command


def test_registry_is_every_command_choice() -> None:
    """scan, check and history show offer exactly the registry, in its order."""
    history = _command("history")
    assert isinstance(history, click.Group)
    for command in (_command("scan"), _command("check"), history.commands["show"]):
        assert _choices(command) == list(REPORTERS), command.name


def test_the_estimate_formats_are_its_choice() -> None:
    from gpu_audit.estimate import FORMATS

    assert _choices(_command("estimate")) == list(FORMATS)
    doc = (ROOT / "docs" / "estimate.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in doc or f"`--format {name}`" in doc for name in FORMATS)


def test_the_docs_list_the_registry() -> None:
    """docs/reports.md's option row names every format in the registry's order and every
    extension `-o` reads; the README's Reports paragraph names every format."""
    doc = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| `--format "))
    listed = re.match(r"\| `--format ([^`]+)`", row)
    assert listed is not None
    assert listed.group(1).split("\\|") == list(REPORTERS)
    extensions = re.findall(r"`(\.[a-z]+)`", row)
    assert extensions == list(OUTPUT_EXTENSIONS)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    reports = readme.split("### Reports", 1)[1].split("###", 1)[0]
    assert all(f"`{name}`" in reports or f"`--format {name}`" in reports for name in REPORTERS)
    assert all(f"`{ext}`" in reports for ext in OUTPUT_EXTENSIONS)


def test_adding_a_format_is_its_module_and_its_registry_line() -> None:
    """What CONTRIBUTING.md promises: a format is `report/<name>.py` with `render` (and
    `write` where it streams) plus its line in `report/registry.py`; nothing else lists it."""
    for name, module_name in REPORTERS.items():
        module = importlib.import_module(module_name)
        assert module_name == f"gpu_audit.report.{name}"
        assert callable(module.render)
    source = ROOT / "src" / "gpu_audit"
    homes = {source / "report" / "formats.py"}  # the one format list (every command's)
    written = [
        str(path.relative_to(ROOT))
        for path in source.rglob("*.py")
        if path not in homes
        if re.search(r'\(\s*"table",\s*"text",\s*"json"', path.read_text(encoding="utf-8"))
    ]
    assert written == [], "a format list written out again"
    assert COMMANDS["scan"] == tuple(REPORTERS)  # the report's formats are its reporters


@pytest.mark.parametrize("format_name", sorted(REPORTERS))
def test_renders_everything(
    format_name: str,
    demo: ScanResult,
    jobs: ScanResult,
    checked: ScanResult,
    hostile: ScanResult,
) -> None:
    for result in (demo, jobs, checked, hostile, EMPTY):
        text = render(format_name, result)
        assert isinstance(text, str) and text.endswith("\n")
