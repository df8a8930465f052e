"""One error base class and one class per stage; every message is located (file:line, rule, key)."""


class GpuAuditError(Exception):
    """Base of every expected failure: the CLI prints the message on one line and exits 2."""


class ConfigError(GpuAuditError):
    """A bad command line or `.gpu-audit.yaml`."""


class PolicyError(GpuAuditError):
    """A policy file that does not load, validate or compile."""


class InputError(GpuAuditError):
    """An inventory or job file that cannot be read."""


class InputErrors(InputError):
    """Every problem of one input, each a complete located line (`messages`); the first leads.

    `str()` joins them as the CLI prints errors, so a caller that prints only `str(exc)` after
    `gpu-audit: error: ` still shows one `gpu-audit: error: file:line: …` line per problem.
    """

    def __init__(self, messages: list[str]) -> None:
        super().__init__(messages[0])
        self.messages = tuple(messages)

    def __str__(self) -> str:
        return "\ngpu-audit: error: ".join(self.messages)


class CollectorError(GpuAuditError):
    """A provider that cannot be scanned at all (missing extra, no credentials)."""
