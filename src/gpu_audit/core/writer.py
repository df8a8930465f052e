"""Atomic report writing: a temp file in the target's folder, then rename over it; a character
device or FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is written in place; an input of the
run is never written (`core.inputs.refuse_input`, which any command writing a file calls)."""

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

from gpu_audit.core.inputs import refuse_input
from gpu_audit.core.lazyre import lazy
from gpu_audit.errors import ConfigError

Content = str | Callable[[TextIO], None]


class _Terminated(BaseException):
    """SIGTERM arrived while a report was being written."""


# A name for one of this process's open descriptors: `/dev/stdout` may stand for the file a
# shell opened with `>> log`, which a rename would swap away and truncating would erase.
_DESCRIPTOR = lazy(r"/dev/(?:std(?:in|out|err)|fd/\d+)|/proc/(?:self|thread-self|\d+)/fd/\d+")
_MAX_HOPS = 40  # symlinks followed before giving up (the kernel's own limit)


def write_atomic(
    path: str, content: Content, inputs: Collection[str] = (), folders: Collection[str] = ()
) -> None:
    """Write `content` (text, or a function writing to a text stream) to `path` so that a reader
    sees the old file or the new one, never half.

    A symlink is followed to its target. A character device or FIFO is a stream, not a file
    to replace: written in place (no temp file, no rename). A folder, block device or socket
    is refused, as is any of `inputs` or a path inside `folders` (see `refuse_input`). Any
    other regular file, wherever it lives (`/dev/shm` included), is replaced whole. An existing
    file keeps its mode; a new one gets the user's umask. The temp file is removed on error and
    on SIGTERM.
    """
    target = os.path.realpath(path)
    mode = _check_target(path, target)
    refuse_input(path, inputs, folders)
    if mode is None:
        _write_stream(path, content)
        return
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


def _write_stream(path: str, content: Content) -> None:
    """A character device or FIFO, written as a stream (a FIFO waits for its reader)."""
    try:
        # appending: through `/dev/stdout` to a file the shell opened, truncating would erase
        # what came before (`>> log`); a device or FIFO has nothing to truncate
        with open(path, "a", encoding="utf-8", newline="") as handle:
            if isinstance(content, str):
                handle.write(content)
            else:
                content(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from exc


def _descriptor_name(path: str) -> bool:
    """Whether `path`, or a symlink on the way to its file, names an open descriptor."""
    current = os.path.abspath(path)
    for _ in range(_MAX_HOPS):
        if _DESCRIPTOR.fullmatch(current):
            return True
        try:
            link = os.readlink(current)
        except OSError:
            return False
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
    return False


def _check_target(path: str, target: str) -> int | None:
    """The mode the report gets (None: a stream, written in place); a `ConfigError` for a
    target that must not be written."""
    try:
        info = os.stat(path)  # not `target`: /proc's links to a pipe resolve to no path
    except FileNotFoundError:
        return 0o666 & ~_umask()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from exc
    streamed = stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)
    # `/dev/stdout` or `/dev/fd/1` may resolve to the regular file the shell redirected into
    # (`>> log`): a rename would swap the file under the shell; write through the descriptor.
    # Only a descriptor's name: any other regular file under /dev (`/dev/shm/x`) is replaced.
    streamed = streamed or _descriptor_name(path)
    if not stat.S_ISREG(info.st_mode) and not streamed:
        raise ConfigError(f"{path}: cannot write report: {_kind(info.st_mode)}, not a regular file")
    return None if streamed else stat.S_IMODE(info.st_mode)


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
