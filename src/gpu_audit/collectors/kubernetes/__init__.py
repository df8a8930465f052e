"""Kubernetes: GPU nodes and the pods holding their GPUs, with DCGM utilization."""
