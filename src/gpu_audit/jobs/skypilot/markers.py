"""Whether a document is a SkyPilot task (the parser is imported if so)."""

from __future__ import annotations

from typing import Any

# SkyPilot validates tasks against a closed schema: a document with any other top-level key is
# not a SkyPilot task (a compose file, a CI config). `execution` heads a job group.
TASK_KEYS = frozenset(
    {
        "name",
        "workdir",
        "num_nodes",
        "resources",
        "envs",
        "secrets",
        "file_mounts",
        "setup",
        "run",
        "service",
        "pool",
        "config",
        "volumes",
        "event_callback",
        "inputs",
        "outputs",
        "experimental",
        "execution",
    }
)
MARKER_KEYS = frozenset({"resources", "run", "setup", "num_nodes"})  # one makes it a task


def is_task(data: dict[Any, Any]) -> bool:
    """Only a task's top-level keys, and one of those that make it a task."""
    return data.keys() <= TASK_KEYS and any(key in data for key in MARKER_KEYS)
