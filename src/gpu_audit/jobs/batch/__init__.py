"""The AWS Batch job format: markers, parser (imported on demand), helpers."""
