"""What a run will cost before it launches: job estimates and priced options (docs/estimate.md)."""

# The formats estimate/render.py writes: the one list the CLI and the docs follow.
FORMATS = ("table", "text", "json", "markdown")
