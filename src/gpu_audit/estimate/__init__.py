"""What a run will cost before it launches: job estimates and priced options (docs/estimate.md)."""

from gpu_audit.report.formats import COMMANDS

FORMATS = COMMANDS["estimate"]  # the formats estimate/render.py writes (report/formats.py)
