"""The dstack job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.dstack.parser import Dstack

__all__ = ["Dstack"]
