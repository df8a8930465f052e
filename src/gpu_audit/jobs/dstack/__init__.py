"""The dstack job format: markers, parser (imported on demand), helpers."""
