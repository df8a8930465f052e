"""The Vertex AI job format: its parser and the helpers only it uses."""

from gpu_audit.jobs.vertex.parser import Vertex

__all__ = ["Vertex"]
