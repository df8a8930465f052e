"""Issue 38.12: every command's help shows an example, and each example is a command line the
real CLI accepts (parsed, not run: `click.Context.make_context`, so no file is read)."""

from __future__ import annotations

import shlex

import click

from gpu_audit.cli.main import main


def _commands() -> list[tuple[list[str], click.Command]]:
    found: list[tuple[list[str], click.Command]] = []
    ctx = click.Context(main)

    def walk(command: click.Command, path: list[str]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, [*path, name])
        else:
            found.append((path, command))

    walk(main, [])
    return found


def _examples(command: click.Command) -> list[str]:
    text = command.help or ""
    if "Example" not in text:
        return []
    block = text[text.index("Example") :].splitlines()[1:]
    return [line.strip() for line in block if line.strip().startswith("gpu-audit ")]


def test_every_command_has_an_example_the_cli_accepts() -> None:
    commands = _commands()
    assert len(commands) >= 14
    for path, command in commands:
        examples = _examples(command)
        assert examples, f"gpu-audit {' '.join(path)}: no example in its help"
        for example in examples:
            words = shlex.split(example)
            assert words[: 1 + len(path)] == ["gpu-audit", *path], example
            command.make_context(" ".join(path), words[1 + len(path) :])  # raises if refused
