"""The Vertex AI job format: markers, parser (imported on demand), helpers."""
