"""A crash is never a finding: an unexpected error in any command ends with one line naming the
command and its inputs and exit code 4 (`ExitCode.INTERNAL`), the trace only with `--debug`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from gpu_audit.cli.group import LAZY
from gpu_audit.cli.main import main
from gpu_audit.errors import ExitCode


def _commands() -> Iterator[tuple[str, ...]]:
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                yield (name, sub)
        else:
            yield (name,)


COMMANDS = sorted(_commands())


def test_every_command_is_covered() -> None:
    assert {path[0] for path in COMMANDS} == {*LAZY, "check"}


def _command(path: tuple[str, ...]) -> click.Command:
    ctx = click.Context(main)
    command = main.get_command(ctx, path[0])
    if len(path) > 1:
        assert isinstance(command, click.Group)
        command = command.get_command(ctx, path[1])
    assert command is not None
    return command


def _required(command: click.Command) -> list[str]:
    """The least a command line needs to reach its callback."""
    args: list[str] = []
    for param in command.params:
        choices = getattr(param.type, "choices", None)
        value = str(next(iter(choices))) if choices else "x"
        if isinstance(param.type, click.types.IntParamType):
            value = "1"
        if isinstance(param, click.Argument) and param.required:
            args.append(value)
        elif isinstance(param, click.Option) and param.required:
            args += [param.opts[0], value]
    return args


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_an_injected_fault_exits_internal(
    path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    command = _command(path)

    def fault(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("injected /tmp/secret-path")

    monkeypatch.setattr(command, "callback", fault)
    result = CliRunner().invoke(main, [*path, *_required(command)])
    assert result.exit_code == ExitCode.INTERNAL == 4, (result.output, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("gpu-audit: internal error: 'gpu-audit " + " ".join(path)), lines[0]
    assert "ZeroDivisionError: injected /tmp/secret-path" in lines[0]
    assert "--debug" in lines[0] and "Traceback" not in result.stderr


_FAULT = """
import sys
import gpu_audit.billing.daybook as daybook
def load(*args, **kwargs):
    raise KeyError("injected")
daybook.load = load
sys.argv = ["gpu-audit", *sys.argv[1:]]
from gpu_audit.__main__ import program
program()
"""


@pytest.mark.parametrize("debug", [False, True])
def test_a_fault_in_a_real_run_is_one_line_and_exit_4(debug: bool) -> None:
    pytest.importorskip("duckdb")
    argv = ["billing", "fixtures/billing/demo/gcp", "--period", "2026-Q3"]
    if debug:
        argv.append("--debug")
    done = subprocess.run(
        [sys.executable, "-c", _FAULT, *argv], capture_output=True, text=True, check=False
    )
    assert done.returncode == 4, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "gpu-audit: internal error: 'gpu-audit billing fixtures/billing/demo/gcp --period 2026-Q3'"
    ), last
    assert "KeyError: 'injected' at gpu_audit/billing/report.py:" in last
    if debug:
        assert "Traceback (most recent call last)" in done.stderr
        assert "--debug for the trace" not in last
    else:
        assert done.stderr.strip().count("\n") == 0, done.stderr
        assert "--debug for the trace" in last


def test_debug_anywhere_on_the_line_prints_the_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    command = _command(("policies", "list"))

    def fault(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(command, "callback", fault)
    result = CliRunner().invoke(main, ["policies", "list", "--debug"])
    assert result.exit_code == 4
    assert "Traceback" in result.stderr and "--debug" not in result.stderr.splitlines()[-1]


def test_a_closed_stdout_is_exit_141_and_no_message() -> None:
    reader = subprocess.Popen(
        [sys.executable, "-m", "gpu_audit", "scan", "--inventory", "fixtures/inventory/demo.yaml",
         "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.read(10)
    reader.stdout.close()  # as `| head -c 10` does
    err = reader.stderr.read().decode()
    reader.stderr.close()
    assert reader.wait(60) == ExitCode.PIPE_CLOSED == 141, err
    assert err == ""
