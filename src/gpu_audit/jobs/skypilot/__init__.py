"""The SkyPilot job format: markers, parser (imported on demand), helpers."""
