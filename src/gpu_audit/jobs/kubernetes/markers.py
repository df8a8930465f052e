"""Whether a document is a Kubernetes object (the parser is imported if so)."""

from __future__ import annotations

from typing import Any


def claims(data: dict[Any, Any]) -> bool:
    """`kind` and `apiVersion`, both text: every object the parser reads has them."""
    return isinstance(data.get("kind"), str) and isinstance(data.get("apiVersion"), str)
