"""Typed reads of ARM row values: a value of a shape ARM does not give raises RowProblem."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_audit.core.yamlguard import printable

MAX_NODES = 100_000  # far past any scale set (1,000 VMs) or AmlCompute cluster: more is not a count


class RowProblem(ValueError):
    """A row value of a shape ARM does not give; the message names the key and the value."""


def size_name(value: Any, key: str) -> str | None:
    """A VM size name, or None; RowProblem naming `key` for any other value."""
    if value is None or isinstance(value, str):
        return value
    raise RowProblem(f"{key}: expected a size name, got {printable(repr(value))}")


def node_count(value: Any, key: str) -> int:
    """A node or instance count: ARM gives an integer (0 where absent)."""
    if value is None or value == "":
        return 0
    if isinstance(value, str) and value.strip().isdigit() and len(value) < 10:
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_NODES:
        raise RowProblem(f"{key}: expected a count, got {printable(repr(value))}")
    return value


def percent(value: Any, key: str) -> float:
    """A percentage from 0 to 100 as a float (0.0 for None); RowProblem naming `key` otherwise."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
        raise RowProblem(f"{key}: expected a percentage, got {printable(repr(value))}")
    return float(value)


def mapping(value: Any, key: str) -> Mapping[str, Any]:
    """An object (empty for None); RowProblem naming `key` otherwise."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RowProblem(f"{key}: expected an object, got {printable(repr(value))}")
    return value


def listing(value: Any, key: str) -> list[Any]:
    """A list (empty for None); RowProblem naming `key` otherwise."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RowProblem(f"{key}: expected a list, got {printable(repr(value))}")
    return value
