"""Determined experiment configurations: the searcher's trial cap, concurrency and ASHA schedule."""
