"""The Kubernetes and Kubeflow job format: markers, parser (imported on demand), helpers."""
