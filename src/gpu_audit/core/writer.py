"""Atomic report writing: a temp file in the target's folder, then rename over it."""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import TextIO

from gpu_audit.errors import ConfigError

Content = str | Callable[[TextIO], None]


class _Terminated(BaseException):
    """SIGTERM arrived while a report was being written."""


def write_atomic(path: str, content: Content, inputs: Collection[str] = ()) -> None:
    """Write `content` (text, or a function writing to a text stream) to `path` so that a reader
    sees the old file or the new one, never half.

    A symlink is followed to its target; anything but a regular file (a device, FIFO, folder)
    is refused, as is any of `inputs` (the files this run read). An existing file keeps its
    mode; a new one gets the user's umask. The temp file is removed on error and on SIGTERM.
    """
    target = os.path.realpath(path)
    mode = _check_target(path, target, inputs)
    directory = os.path.dirname(target)
    try:
        fd, temp = tempfile.mkstemp(prefix=".gpu-audit-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from exc
    try:
        with _sigterm_raises():
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                os.fchmod(handle.fileno(), mode)
                if isinstance(content, str):
                    handle.write(content)
                else:
                    content(handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)
    except OSError as exc:
        _remove(temp)
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from exc
    except _Terminated:
        _remove(temp)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise SystemExit(128 + signal.SIGTERM) from None  # if the signal is blocked
    except BaseException:
        _remove(temp)
        raise


def _check_target(path: str, target: str, inputs: Collection[str]) -> int:
    """The mode the report gets; a `ConfigError` for a target that must not be replaced."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return 0o666 & ~_umask()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: cannot write report: {_kind(info.st_mode)}, not a regular file")
    for source in inputs:
        try:
            same = os.path.samefile(source, target)
        except OSError:
            same = os.path.realpath(source) == target
        if same:
            raise ConfigError(f"{path}: cannot write report: it is an input of this run")
    return stat.S_IMODE(info.st_mode)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def _remove(temp: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(temp)


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While writing, SIGTERM raises (so the temp file is removed) instead of killing outright."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
