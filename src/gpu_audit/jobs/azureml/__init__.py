"""The Azure ML job format: markers, parser (imported on demand), helpers."""
