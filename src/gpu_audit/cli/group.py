"""The `gpu-audit` command group: lazy commands, one error line per failure, and a misplaced
option told where it goes."""

from __future__ import annotations

import os
import sys
from contextlib import suppress
from importlib import import_module
from typing import Any

import click

from gpu_audit.core.redact import redact_urls
from gpu_audit.errors import ExitCode, GpuAuditError, one_line

ARGV = "gpu_audit.argv"
DEBUG = "gpu_audit.debug"


# Commands imported when run or listed (`--help`), by name: `check`, on every commit, pays for
# none of them (`scan` alone imports the provider registry, ~5 ms).
LAZY = {
    "scan": "gpu_audit.cli.scan:scan",
    "history": "gpu_audit.cli.history:history_group",
    "estimate": "gpu_audit.cli.tools:estimate",
    "policies": "gpu_audit.cli.tools:policies",
    "catalog": "gpu_audit.cli.tools:catalog",
    "diff": "gpu_audit.cli.diff:diff_command",
    "merge": "gpu_audit.cli.merge:merge",
    "billing": "gpu_audit.cli.billing:billing",
}


class Group(click.Group):
    """Turns a GpuAuditError anywhere below into one line on stderr and exit code 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or lazy, sorted (for `--help`)."""
        return sorted({*self.commands, *LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command `cmd_name`, importing a lazy command's module on first use; None for an
        unknown name."""
        if cmd_name not in self.commands and cmd_name in LAZY:
            module, _, name = LAZY[cmd_name].partition(":")
            self.add_command(getattr(import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the group's arguments, taking `--debug` from anywhere before `--` and keeping the
        invocation for the report header; a misplaced option gets a usage error naming its
        command."""
        # `--debug` is taken anywhere before a `--` (`gpu-audit billing … --debug`)
        end = args.index("--") if "--" in args else len(args)
        if "--debug" in args[:end]:
            ctx.meta[DEBUG] = True
            args = [a for a in args[:end] if a != "--debug"] + args[end:]
        given = tuple(args)  # the parser consumes `args`
        ctx.meta.setdefault(ARGV, given)  # the invocation, for the report header
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            raise _misplaced(ctx, exc, list(given)) from None

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; a GpuAuditError prints one line and exits 2, Ctrl-C exits 130, a closed
        pipe exits quietly, any other exception prints one internal-error line (the traceback with
        `--debug`)."""
        try:
            return super().invoke(ctx)
        except GpuAuditError as exc:
            click.echo(f"gpu-audit: error: {redact_urls(str(exc))}", err=True)
            ctx.exit(ExitCode.ERROR)
        except KeyboardInterrupt:  # not 1 ("open findings"): what a shell reports for SIGINT
            click.echo("\ngpu-audit: interrupted", err=True)
            ctx.exit(ExitCode.INTERRUPTED)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise  # usage errors and exits: click's own
        except BrokenPipeError:  # not a bug: the reader of stdout stopped reading (`| head`)
            with suppress(OSError, ValueError):  # a test's stream is no file: nothing to quiet
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # a quiet flush
            ctx.exit(ExitCode.PIPE_CLOSED)
        except Exception as exc:  # a bug: never exit 1, which means "findings"
            if ctx.meta.get(DEBUG):
                import traceback  # keeps traceback off check's start-up

                traceback.print_exc()
            click.echo(f"gpu-audit: internal error: {crash_line(ctx, exc)}", err=True)
            ctx.exit(ExitCode.INTERNAL)


def crash_line(ctx: click.Context, exc: BaseException) -> str:
    """One line for an unexpected error: the command and its inputs (secrets redacted), the
    error, and the deepest gpu-audit frame it rose through."""
    from gpu_audit.report.command import redact_argv  # keeps report.command off --help

    argv = " ".join(redact_argv(ctx.meta.get(ARGV, ())))
    frames = [f for f in _frames(exc.__traceback__) if "gpu_audit" in f.filename]
    where = ""
    if frames:
        name = frames[-1].filename.replace(os.sep, "/")
        where = f" at {name[name.rfind('gpu_audit/') :]}:{frames[-1].lineno}"
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    error = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    hint = "" if ctx.meta.get(DEBUG) else "; run again with --debug for the trace"
    line = f"'gpu-audit {argv}': {error}{where} (a bug, not a finding: please report it{hint})"
    return one_line(redact_urls(line))


def _frames(trace: Any) -> list[Any]:
    import traceback  # keeps traceback off check's start-up

    return list(traceback.extract_tb(trace)) if trace else []


def _misplaced(ctx: click.Context, exc: click.NoSuchOption, args: list[str]) -> click.UsageError:
    """`gpu-audit --format text check x`: an option of a command, given before the command,
    is told where it goes (`gpu-audit check --format text x`) instead of `No such option`."""
    group = ctx.command
    assert isinstance(group, click.Group)
    name = one_line(exc.option_name)
    commands = {*LAZY, *group.commands}
    at = next((i for i, a in enumerate(args) if a in commands), None)
    option = exc.option_name
    given = [i for i, a in enumerate(args[: at or 0]) if a == option or a.startswith(f"{option}=")]
    if at is None or not given:
        return exc
    command = group.get_command(ctx, args[at])
    known = command is not None and any(name in p.opts for p in command.params)
    if not known:
        return click.UsageError(
            f"No such option '{name}': options go after the command "
            f"(gpu-audit {args[at]} --help lists {args[at]}'s)",
            ctx,
        )
    import shlex  # an error's text only

    before = given[0]
    moved = [args[at], *args[before:at], *args[at + 1 :]]
    shown = one_line(" ".join(shlex.quote(a) for a in ["gpu-audit", *args[:before], *moved]))
    return click.UsageError(
        f"{name} is an option of `{args[at]}`: it goes after the command: {shown} (only "
        "--version and --help come before it)",
        ctx,
    )
