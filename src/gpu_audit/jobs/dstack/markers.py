"""Whether a document is a dstack configuration (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

TYPES = frozenset({"task", "service", "dev-environment", "fleet"})
MARKERS = ("resources", "commands", "ide", "nodes", "image", "python", "port", "replicas")


def claims(data: dict[Any, Any]) -> bool:
    """A dstack `type:` and one of the keys such a configuration has."""
    return data.get("type") in TYPES and any(key in data for key in MARKERS)
