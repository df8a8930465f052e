"""A stored audit that does not decode (bad JSON, bad zlib, a missing key): one line naming the
audit, and the command goes on with the others."""

from __future__ import annotations

import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from gpu_audit.errors import InputError, one_line

# What decoding a damaged row raises: json (ValueError), zlib, a missing key or column, a value
# of the wrong type, a blob that is no UTF-8.
DAMAGE = (ValueError, KeyError, IndexError, TypeError, AttributeError, zlib.error)


class DamagedAudit(InputError):
    """One recorded audit cannot be read back."""


def describe(path: str, audit_id: object, exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return f"{path}: history: audit {audit_id} is damaged ({what})"


@contextmanager
def decoding(path: str, audit_id: object) -> Iterator[None]:
    """Turn a decoding error of audit `audit_id` into one located `DamagedAudit`."""
    try:
        yield
    except DAMAGE as exc:
        raise DamagedAudit(describe(path, audit_id, exc)) from None


def skipped(message: str) -> None:
    """Say on stderr that a damaged audit is left out (the rest is still read)."""
    sys.stderr.write(f"gpu-audit: warning: {one_line(message)}; left out, the others are read\n")
