"""The Ray cluster job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.ray.parser import RayCluster

__all__ = ["RayCluster"]
