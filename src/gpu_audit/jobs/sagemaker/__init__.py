"""The SageMaker job format: markers, parser (imported on demand), helpers."""
