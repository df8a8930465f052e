"""The SageMaker job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.sagemaker.parser import SageMaker

__all__ = ["SageMaker"]
