"""One error base class and one class per stage; every message is located (file:line, rule, key)."""


class GpuAuditError(Exception):
    """Base of every expected failure: the CLI prints the message on one line and exits 2."""


class ConfigError(GpuAuditError):
    """A bad command line or `.gpu-audit.yaml`."""


class PolicyError(GpuAuditError):
    """A policy file that does not load, validate or compile."""


class InputError(GpuAuditError):
    """An inventory or job file that cannot be read."""


class CollectorError(GpuAuditError):
    """A provider that cannot be scanned at all (missing extra, no credentials)."""
