"""Allow `python -m gpu_audit`."""

from gpu_audit.cli import run

run()
