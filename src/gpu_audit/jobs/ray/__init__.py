"""The Ray cluster job format: markers, parser (imported on demand), helpers."""
