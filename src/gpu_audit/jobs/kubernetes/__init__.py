"""The Kubernetes and Kubeflow job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.kubernetes.parser import Kubernetes

__all__ = ["Kubernetes"]
