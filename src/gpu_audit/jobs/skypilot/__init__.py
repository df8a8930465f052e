"""The SkyPilot job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.skypilot.parser import SkyPilot

__all__ = ["SkyPilot"]
