"""Weights & Biases sweep configurations: `run_cap`, `early_terminate` and the search method."""
