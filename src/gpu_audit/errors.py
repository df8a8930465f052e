"""One error base class and one class per stage; every message is located (file:line, rule, key)."""

import re
from enum import IntEnum

_UNPRINTABLE = frozenset(("Cc", "Cf", "Cs", "Co", "Zl", "Zp"))


def one_line(message: str) -> str:
    """A message with the control, bidi and line-break characters that a value from a file can
    bring escaped (`\\n`, `\\x1b`, `\\u202e`): it stays one line, and cannot restyle a terminal."""
    if message.isprintable():
        return message
    import unicodedata  # only for a message that needs escaping

    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unicodedata.category(c) in _UNPRINTABLE
        else c
        for c in message
    )


class ExitCode(IntEnum):
    """What every command exits with (docs/cron.md#exit-codes)."""

    OK = 0
    FINDINGS = 1  # open findings at or above --fail-on
    ERROR = 2  # usage, policy or input error (other inputs are still checked and reported)
    INCOMPLETE = 3  # a region, account or project could not be read; takes precedence over 1
    INTERNAL = 4  # a bug: an unexpected error (never a finding); one line, the trace with --debug
    INTERRUPTED = 130  # SIGINT (Ctrl-C): 128 + 2, as a shell reports it; no report half-written
    PIPE_CLOSED = 141  # stdout's reader went away (`| head`): 128 + SIGPIPE, as a shell reports it


class GpuAuditError(Exception):
    """Base of every expected failure: the CLI prints the message on one line and exits 2.

    Whatever a message interpolates (a key, an operand, a file name), it is one line: the
    escaping is done here, once, for every stage.
    """

    def __init__(self, message: object = "") -> None:
        super().__init__(one_line(str(message)))


class ConfigError(GpuAuditError):
    """A bad command line or `.gpu-audit.yaml`."""


_LONG_QUOTED = r"'([^'\n]{120,})'"
_LONG_WORD = r"\S{200,}"


def clipped(message: str) -> str:
    """`message` with any value it quotes clipped to 80 characters (and the length said): a
    50,000-character key in a file is one readable line, as inventory and job messages are."""

    if len(message) < 120:  # nothing to clip (compiling the patterns would cost ~0.2 ms)
        return message

    def clip(match: re.Match[str]) -> str:
        quoted = match.re.pattern == _LONG_QUOTED
        text = match.group(1) if quoted else match.group(0)
        short = f"{text[:79]}… ({len(text):,} chars)"
        return f"'{short}'" if quoted else short

    return re.sub(_LONG_WORD, clip, re.sub(_LONG_QUOTED, clip, message))


class ConfigErrors(ConfigError):
    """Every problem of a settings file, each a complete located line (`messages`), in line
    order: one `gpu-audit: error: file:line: …` line each, as `PolicyErrors` prints them."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__(messages[0])
        self.messages = tuple(clipped(one_line(message)) for message in messages)

    def __str__(self) -> str:
        return "\ngpu-audit: error: ".join(self.messages)


class PolicyError(GpuAuditError):
    """A policy file that does not load, validate or compile; quoted values are clipped."""

    def __init__(self, message: object = "") -> None:
        super().__init__(clipped(str(message)))


class PolicyErrors(PolicyError):
    """Every problem of the policy files, each a complete located line (`messages`), printed
    as `InputErrors` are: one `gpu-audit: error: file:line: …` line each."""

    LIMIT = 50  # lines a run prints: a generated or mangled file may hold thousands of mistakes

    def __init__(self, messages: list[str]) -> None:
        super().__init__(messages[0])
        shown = [clipped(one_line(message)) for message in messages[: self.LIMIT]]
        if len(messages) > self.LIMIT:
            place = re.match(r"(.+?:\d+):", messages[self.LIMIT])
            where = place.group(1) if place else "policy"
            shown.append(
                f"{where}: and {len(messages) - self.LIMIT:,} more errors in the policy files, "
                f"the next one here (the first {self.LIMIT} are shown)"
            )
        self.messages = tuple(shown)

    def __str__(self) -> str:
        return "\ngpu-audit: error: ".join(self.messages)


class InputError(GpuAuditError):
    """An inventory or job file that cannot be read."""


class InputErrors(InputError):
    """Every problem of one input, each a complete located line (`messages`); the first leads.

    `str()` joins them as the CLI prints errors, so a caller that prints only `str(exc)` after
    `gpu-audit: error: ` still shows one `gpu-audit: error: file:line: …` line per problem.
    """

    def __init__(self, messages: list[str]) -> None:
        super().__init__(messages[0])
        self.messages = tuple(one_line(message) for message in messages)

    def __str__(self) -> str:
        return "\ngpu-audit: error: ".join(self.messages)


class CollectorError(GpuAuditError):
    """A provider that cannot be scanned at all (missing extra, no credentials)."""
