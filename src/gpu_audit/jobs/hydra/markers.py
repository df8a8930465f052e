"""Whether a document is a Hydra config sweeping with Optuna (the parser is imported if so)."""

from __future__ import annotations

from typing import Any


def sweeper(data: dict[Any, Any]) -> object:
    """`hydra.sweeper`, or None."""
    hydra = data.get("hydra")
    return hydra.get("sweeper") if isinstance(hydra, dict) else None


def override(data: dict[Any, Any], group: str) -> Any:  # Any: YAML/JSON of any shape
    """The option `defaults` picks for `hydra/<group>` (`- override hydra/sweeper: optuna`)."""
    defaults = data.get("defaults")
    for item in defaults if isinstance(defaults, list) else ():
        if isinstance(item, dict):
            for key, value in item.items():
                words = str(key).split()
                if words and words[-1].strip("/") == f"hydra/{group}":
                    return value
    return None


def claims(data: dict[Any, Any]) -> bool:
    """The Optuna sweeper chosen in `defaults`, or named by `hydra.sweeper._target_`."""
    chosen = sweeper(data)
    target = chosen.get("_target_") if isinstance(chosen, dict) else None
    return override(data, "sweeper") == "optuna" or "optuna" in str(target or "").lower()
