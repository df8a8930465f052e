"""What a run will cost before it launches: job estimates and priced options (docs/estimate.md)."""
