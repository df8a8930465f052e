"""Atomic report writing: a temp file in the target's folder, then rename over it."""

from __future__ import annotations

import os
import tempfile

from gpu_audit.errors import ConfigError


def write_atomic(path: str, text: str) -> None:
    """Write `text` to `path` so that a reader sees the old file or the new one, never half."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temp = tempfile.mkstemp(prefix=".gpu-audit-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        os.unlink(temp)
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from exc
    except BaseException:
        os.unlink(temp)
        raise
