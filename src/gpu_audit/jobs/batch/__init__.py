"""The AWS Batch job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.batch.parser import Batch

__all__ = ["Batch"]
