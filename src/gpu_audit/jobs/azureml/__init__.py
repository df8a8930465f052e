"""The Azure ML job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.azureml.parser import AzureML

__all__ = ["AzureML"]
