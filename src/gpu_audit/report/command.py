"""The command line a report may publish: secrets redacted when recorded, paths shortened later."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from gpu_audit.core.lazyre import lazy
from gpu_audit.core.redact import redact_urls

REDACTED = "[redacted]"
# An option or `key=value` whose name says it holds a secret.
_SECRET_NAME = r"(?:token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|credential|auth)"  # noqa: S105
_SECRET_WORDS = ("token", "secret", "pass", "key", "credential", "auth")  # each name holds one
_SECRET_FLAG = lazy(rf"^--?[\w-]*{_SECRET_NAME}[\w-]*$", re.IGNORECASE, needs=_SECRET_WORDS)
_SECRET_PAIR = lazy(
    rf"(\b[\w-]*{_SECRET_NAME}[\w-]*\s*[=:]\s*)[^\s&;,]+", re.IGNORECASE, needs=_SECRET_WORDS
)
# AWS access key ids (long-term AKIA, temporary ASIA) and role/user ids.
_KEY_ID = lazy(r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{12,}\b", needs=("AKIA", "ASIA", "AROA", "AIDA"))


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """`argv` fit to record: the value after a secret-named flag (`--token X`), the value of a
    `name=value` pair with a secret name, URL userinfo and query strings, and AWS access key ids
    replaced by `[redacted]`."""
    shown: list[str] = []
    secret_next = False
    for arg in argv:
        if secret_next:
            shown.append(REDACTED)
            secret_next = False
            continue
        flag, equals, _ = arg.partition("=")
        if _SECRET_FLAG.match(flag):
            if equals:
                shown.append(f"{flag}={REDACTED}")
            else:
                shown.append(arg)
                secret_next = True
            continue
        text = _SECRET_PAIR.sub(lambda m: m.group(1) + REDACTED, redact_urls(arg))
        shown.append(_KEY_ID.sub(REDACTED, text))
    return tuple(shown)


def shown_command(argv: Sequence[str], shown_path: Callable[[str], str]) -> str:
    """`gpu-audit scan --inventory ...` as a shell would read it back, each path (an argument,
    or what follows the `=` of `--output=PATH` or `--report json=PATH`) passed through
    `shown_path`, so that no absolute path is published."""
    args = []
    for arg in argv:
        head, equals, tail = arg.partition("=")
        whole = shown_path(arg)
        args.append(f"{head}={shown_path(tail)}" if equals and whole == arg else whole)
    import shlex  # for a report that shows the command, not every commit's

    return shlex.join(["gpu-audit", *args])
