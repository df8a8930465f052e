"""Whether a document is a Determined experiment config (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

SEARCHERS = frozenset(
    {"single", "random", "grid", "adaptive_asha", "async_halving", "custom", "adaptive_simple"}
)
MARKERS = ("entrypoint", "hyperparameters", "resources", "max_restarts", "environment")


def claims(data: dict[Any, Any]) -> bool:
    """A `searcher` with a known `name`, and one more experiment key."""
    searcher = data.get("searcher")
    return (
        isinstance(searcher, dict)
        and searcher.get("name") in SEARCHERS
        and any(key in data for key in MARKERS)
    )
