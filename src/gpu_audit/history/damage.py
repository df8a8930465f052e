"""A stored audit that does not decode (bad JSON, bad zlib, a missing key): one line naming the
audit, and the command goes on with the others."""

from __future__ import annotations

import math
import sys
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from gpu_audit.errors import InputError, one_line

# What decoding a damaged row raises: json (ValueError), zlib, a missing key or column, a value
# of the wrong type, a blob that is no UTF-8.
DAMAGE = (ValueError, KeyError, IndexError, TypeError, AttributeError, zlib.error)


class DamagedAudit(InputError):
    """One recorded audit cannot be read back."""


def describe(path: str, audit_id: object, exc: BaseException) -> str:
    """The one line for a damaged audit: the history's path, the audit's id, the error's class and
    the first 160 characters of its message."""
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


def numbers(values: Sequence[Any], kinds: str) -> tuple[Any, ...]:
    """`values` as the columns `kinds` declare them (`i` a count, `f` a finite amount; `I`, `F`
    the same or NULL): SQLite keeps any type in any column, so a damaged row may hold text or bytes
    where a number was written. A value of another type raises TypeError (a damaged audit)."""
    out: list[Any] = []
    for value, kind in zip(values, kinds, strict=True):
        if value is None and kind in "IF":
            out.append(None)
        elif kind in "iI" and isinstance(value, int) and not isinstance(value, bool):
            out.append(value)
        elif kind in "fF" and isinstance(value, int | float) and math.isfinite(value):
            out.append(float(value))
        else:
            raise TypeError(f"{str(value)[:40]!r} where a number was recorded")
    return tuple(out)


def skipped(message: str) -> None:
    """Say on stderr that a damaged audit is left out (the rest is still read)."""
    sys.stderr.write(f"gpu-audit: warning: {one_line(message)}; left out, the others are read\n")
