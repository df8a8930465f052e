"""The one format list: every command's `--format` is its line in report/formats.py, and
`format_for` chooses alike for each (explicit, else `-o`'s extension, else the default)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gpu_audit.cli.main import main
from gpu_audit.errors import ConfigError
from gpu_audit.report.formats import COMMANDS, format_for


def _command(path: str) -> click.Command:
    """`history show` → the `show` command of the `history` group, loaded as the CLI loads it."""
    command: click.Command = main
    for name in path.split():
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_offers_its_registry_line(path: str) -> None:
    (param,) = [p for p in _command(path).params if p.name == "fmt"]
    assert isinstance(param.type, click.Choice)
    assert tuple(param.type.choices) == COMMANDS[path]


def test_every_command_with_a_format_is_in_the_registry() -> None:
    """A new command with `--format` and no line in COMMANDS fails here, by name."""
    found = []

    def walk(command: click.Command, path: str) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                sub = command.get_command(click.Context(command), name)
                assert sub is not None
                walk(sub, f"{path} {name}".strip())
        elif any(p.name == "fmt" for p in command.params):
            found.append(path)

    walk(main, "")
    assert sorted(found) == sorted(COMMANDS)


def test_the_choice_is_explicit_then_extension_then_default() -> None:
    assert format_for("scan", None, None, terminal=True) == "table"
    assert format_for("scan", None, None) == "text"
    assert format_for("scan", "r.md", None, terminal=True) == "markdown"
    assert format_for("scan", "r.out", "json") == "json"
    assert format_for("scan", "report", "sarif") == "sarif"
    assert format_for("billing", "bill.md", None) == "markdown"
    assert format_for("billing", "bill.txt", None) == "table"  # billing's text is its table
    assert format_for("billing", "bill", None, piped="json") == "json"
    assert format_for("history show", "a.csv", None) == "csv"


@pytest.mark.parametrize(
    ("command", "path", "explicit", "said"),
    [
        ("diff", "d.html", None, "d.html: no format writes '.html' files"),
        ("diff", "d.json", "markdown", "names the json format, not markdown"),
        ("estimate", "e.sarif", None, "e.sarif: estimate writes no sarif; its formats: table,"),
        ("billing", "b.sarif", None, "b.sarif: billing writes no sarif"),
        ("estimate", None, "csv", "estimate writes no csv"),
    ],
)
def test_a_format_a_command_cannot_write_is_refused(
    command: str, path: str | None, explicit: str | None, said: str
) -> None:
    with pytest.raises(ConfigError, match=said.replace("(", r"\(").replace(".", r"\.")):
        format_for(command, path, explicit)


def test_diff_refuses_an_extension_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the one list, `diff -o d.html` wrote text into d.html and `--format markdown -o
    d.json` Markdown into d.json; now it is refused as every other command refuses it (here, not even in a repository)."""
    monkeypatch.chdir(tmp_path)
    for args in (["-o", "d.html"], ["--format", "markdown", "-o", "d.json"]):
        result = CliRunner().invoke(main, ["diff", "--base", "HEAD", *args])
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith("gpu-audit: error: d.") and "--format" in line
