"""The command line: every click command and its request runner."""

from gpu_audit.cli.main import main, run

__all__ = ["main", "run"]
