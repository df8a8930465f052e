"""Whether a document is a W&B sweep configuration (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

METHODS = frozenset({"grid", "random", "bayes"})
MARKERS = ("program", "command", "metric", "run_cap", "early_terminate")


def claims(data: dict[Any, Any]) -> bool:
    """A search `method`, a `parameters` mapping and one more sweep key."""
    return (
        data.get("method") in METHODS
        and isinstance(data.get("parameters"), dict)
        and any(key in data for key in MARKERS)
    )
