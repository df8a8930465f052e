"""Whether a document is a Ray cluster launcher config (the parser is imported if so)."""

from __future__ import annotations

from typing import Any


def is_cluster(data: dict[Any, Any]) -> bool:
    """Node types (the launcher's or Anyscale's), or a legacy config's provider and nodes."""
    if isinstance(data.get("available_node_types"), dict):
        return True
    if isinstance(data.get("worker_node_types"), list) and "head_node_type" in data:
        return True  # Anyscale compute config
    provider = data.get("provider")
    legacy = any(key in data for key in ("head_node", "worker_nodes", "cluster_name"))
    return isinstance(provider, dict) and "type" in provider and legacy
